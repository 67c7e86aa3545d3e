#include "sluice/state/incremental_snapshot.h"

#include "sluice/core/data_view.h"

namespace sluice {

namespace {
constexpr uint8_t kMagic[4] = {'S', 'L', 'S', 'M'};
constexpr uint64_t kVersion = 1;
}  // namespace

std::vector<uint8_t> encode_incremental_state_meta(const IncrementalStateMeta& meta) {
  std::vector<uint8_t> out;
  DataOutputView o(&out);
  o.write_bytes(kMagic, sizeof(kMagic));
  o.write_varint(kVersion);
  o.write_varint(static_cast<uint64_t>(meta.max_parallelism));
  meta.key_serializer.write(o);
  o.write_varint(meta.states.size());
  for (const StateMetaInfo& s : meta.states) {
    o.write_string(s.name);
    o.write_u8(static_cast<uint8_t>(s.kind));
    s.namespace_serializer.write(o);
    o.write_varint(s.value_serializers.size());
    for (const TypeSerializerSnapshot& v : s.value_serializers) v.write(o);
  }
  return out;
}

Result<IncrementalStateMeta> decode_incremental_state_meta(const std::vector<uint8_t>& bytes, std::string_view what) {
  const std::string w(what);
  DataInputView in(bytes.data(), bytes.size());
  std::string_view magic = in.read_bytes(sizeof(kMagic));
  if (!in.ok() || magic != std::string_view(reinterpret_cast<const char*>(kMagic), sizeof(kMagic))) {
    return Status::corruption(w + ": state meta data is not in the incremental snapshot format (no \"SLSM\")");
  }
  uint64_t version = in.read_varint();
  if (in.ok() && version != kVersion) {
    return Status::corruption(w + ": state meta data format version " + std::to_string(version) +
                              ", this build reads " + std::to_string(kVersion));
  }
  IncrementalStateMeta meta;
  uint64_t max_p = in.read_varint();
  if (in.ok() && (max_p < 1 || max_p > static_cast<uint64_t>(kUpperBoundMaxParallelism))) {
    return Status::corruption(w + ": max parallelism " + std::to_string(max_p) + " out of bounds");
  }
  meta.max_parallelism = static_cast<int32_t>(max_p);
  meta.key_serializer = TypeSerializerSnapshot::read(in);
  uint64_t n = in.read_varint();
  if (n > in.remaining()) in.fail();
  for (uint64_t i = 0; i < n && in.ok(); ++i) {
    StateMetaInfo s;
    s.name = in.read_string();
    uint8_t kind = in.read_u8();
    if (in.ok() && !is_valid_state_kind(kind)) {
      return Status::corruption(w + ": state '" + s.name + "' has unknown kind " + std::to_string(kind));
    }
    s.kind = static_cast<StateKind>(kind);
    s.namespace_serializer = TypeSerializerSnapshot::read(in);
    uint64_t m = in.read_varint();
    if (m > in.remaining()) in.fail();
    for (uint64_t j = 0; j < m && in.ok(); ++j) s.value_serializers.push_back(TypeSerializerSnapshot::read(in));
    meta.states.push_back(std::move(s));
  }
  if (!in.ok() || in.remaining() != 0) return Status::corruption(w + ": malformed state meta data");
  return meta;
}

}  // namespace sluice
