// How the RocksDB backend lays out keyed state in RocksDB (DESIGN.md section 2; docs/state-backends.md, "Layout").
// Implementation header of EmbeddedRocksDBStateBackend; users do not include it.
//
//   one column family per registered state ("state:<name>")
//   key   = [key group: 2 bytes big-endian][serialized key][serialized namespace]       Value/List/Reducing/Aggregating
//   key   = [key group: 2 bytes big-endian][serialized key][serialized namespace][serialized user key]   Map
//   value = serialized value (Value/Reducing: T, Aggregating: ACC, Map: UV); List: the serialized elements back
//           to back, appended by merge (RocksDBStore's concatenating merge operator)
//
// The key group comes first and big-endian, so a key group is one contiguous byte range: [kg, kg+1) as
// 2-byte prefixes. TypeSerializer output is self-delimiting (strings and containers carry their length), so
// [key][namespace] is prefix-free: no (key, namespace) is a byte prefix of another's, and the user keys of one
// map are exactly the keys that start with its [kg][key][namespace] ("a" and "ab" are 01 61 and 02 61 62).
// Keys compare by bytes, as in Flink's RocksDB backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sluice/core/data_view.h"
#include "sluice/core/serializer.h"
#include "sluice/state/state_ttl_config.h"

namespace sluice::rocksdb_layout {

inline constexpr size_t kKeyGroupPrefixBytes = 2;

inline void append_key_group(std::vector<uint8_t>& out, int32_t key_group) {
  out.push_back(static_cast<uint8_t>((key_group >> 8) & 0xff));
  out.push_back(static_cast<uint8_t>(key_group & 0xff));
}

// The 2-byte prefix of key group kg as a string, for iterator bounds; kg may be max parallelism (the exclusive
// end of the last key group: 32768 still fits).
inline std::string key_group_prefix(int32_t key_group) {
  std::string s(kKeyGroupPrefixBytes, '\0');
  s[0] = static_cast<char>((key_group >> 8) & 0xff);
  s[1] = static_cast<char>(key_group & 0xff);
  return s;
}

inline int32_t key_group_of(std::string_view stored_key) {
  return (static_cast<int32_t>(static_cast<uint8_t>(stored_key[0])) << 8) |
         static_cast<int32_t>(static_cast<uint8_t>(stored_key[1]));
}

// The smallest byte string greater than every string that starts with `prefix` (an exclusive upper bound for
// a prefix scan). Requires a byte below 0xff in prefix, which the key-group prefix (< 0x80 first byte) guarantees.
inline void prefix_successor(std::string_view prefix, std::string* out) {
  out->assign(prefix);
  while (!out->empty() && static_cast<uint8_t>(out->back()) == 0xff) out->pop_back();
  if (!out->empty()) out->back() = static_cast<char>(static_cast<uint8_t>(out->back()) + 1);
}

// Reads past one serialized T (TypeSerializer is self-delimiting); false if the bytes are malformed.
template <class T>
bool skip_serialized(DataInputView& in) {
  if constexpr (std::is_same_v<T, VoidNamespace>) {
    return in.ok();
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    (void)in.read_bytes(sizeof(T));  // the primitive serializers write sizeof(T) bytes
    return in.ok();
  } else if constexpr (IsTtlValue<T>::value) {
    (void)in.read_bytes(kTtlTimestampBytes);  // the timestamp, then the value
    return skip_serialized<typename T::value_type>(in);
  } else {
    (void)TypeSerializer<T>::deserialize(in);
    return in.ok();
  }
}

}  // namespace sluice::rocksdb_layout
