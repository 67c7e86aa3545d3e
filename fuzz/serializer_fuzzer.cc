// The built-in TypeSerializers' deserialize on damaged bytes: records from the network, state values and operator
// state read back from a checkpoint all go through them. The first byte picks a type (primitives, strings,
// containers, optionals, tuples, SLUICE_FIELDS structs); the rest is its bytes. Malformed bytes must turn the
// DataInputView's ok() false, never crash or allocate far beyond the input's size; what decodes must serialize to
// bytes that decode and serialize to the same bytes again. With bit 7 of the first byte set, the input starts with a
// serializer snapshot (what a checkpoint recorded) and the value decodes through schema migration, as a restore of
// changed state does, and through skip_serialized.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fuzz_records.h"
#include "sluice/core/serializer_compatibility.h"

namespace {

using namespace sluice;
using namespace sluice::fuzz;

template <class T>
void check_round_trip(const uint8_t* data, size_t size) {
  Result<T> whole = deserialize_bytes<T>(data, size, "fuzz input");
  if (!whole.is_ok()) return;
  // Re-encoding what decoded is stable (a varint may have had a longer form, bools other set bits).
  const std::vector<uint8_t> once = serialize_bytes(*whole);
  Result<T> again = deserialize_bytes<T>(once.data(), once.size(), "re-encoded");
  if (!again.is_ok()) std::abort();
  if constexpr (!requires { typename T::hasher; }) {  // unordered containers iterate in any order
    if (serialize_bytes(*again) != once) std::abort();
  }
}

template <class T>
void check_migrated(DataInputView& in) {
  const TypeSerializerSnapshot old = TypeSerializerSnapshot::read(in);
  if (!in.ok()) return;
  (void)old.to_string();
  SchemaMigrationPlan plan;
  const SchemaCompatibility c = resolve_schema<T>(old, plan);
  const std::string_view rest = in.read_bytes(in.remaining());
  if (!c.is_incompatible()) {
    DataInputView values(rest);
    (void)read_migrated<T>(plan, values);
  }
  if (can_skip(old)) {
    DataInputView values(rest);
    skip_serialized(old, values);
  }
}

template <class T>
void run(bool migrate, const uint8_t* data, size_t size) {
  if (!migrate) return check_round_trip<T>(data, size);
  DataInputView in(data, size);
  check_migrated<T>(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool migrate = (data[0] & 0x80) != 0;
  const uint8_t type = data[0] & 0x7f;
  ++data;
  --size;
  switch (type % 20) {
    case 0: run<bool>(migrate, data, size); break;
    case 1: run<int32_t>(migrate, data, size); break;
    case 2: run<uint64_t>(migrate, data, size); break;
    case 3: run<double>(migrate, data, size); break;
    case 4: run<Color>(migrate, data, size); break;
    case 5: run<std::string>(migrate, data, size); break;
    case 6: run<std::vector<int64_t>>(migrate, data, size); break;
    case 7: run<std::vector<std::string>>(migrate, data, size); break;
    case 8: run<std::map<std::string, int64_t>>(migrate, data, size); break;
    case 9: run<std::unordered_map<int32_t, std::string>>(migrate, data, size); break;
    case 10: run<std::optional<std::string>>(migrate, data, size); break;
    case 11: run<std::pair<std::string, int32_t>>(migrate, data, size); break;
    case 12: run<std::tuple<int8_t, std::string, float, bool>>(migrate, data, size); break;
    case 13: run<std::array<uint16_t, 3>>(migrate, data, size); break;
    case 14: run<Item>(migrate, data, size); break;
    case 15: run<Order>(migrate, data, size); break;
    case 16: run<std::vector<Order>>(migrate, data, size); break;
    case 17: run<std::vector<std::vector<std::optional<Item>>>>(migrate, data, size); break;
    case 18: run<std::vector<Empty>>(migrate, data, size); break;
    case 19: run<std::map<int64_t, std::vector<Order>>>(migrate, data, size); break;
  }
  return 0;
}
