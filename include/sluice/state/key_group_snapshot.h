// The canonical, backend-independent snapshot of one key group's keyed state (DESIGN.md section 3,
// "Savepoints"). The heap backend writes and reads it today; RocksDB writes the same bytes, so a snapshot
// restores into either backend and at any parallelism (key groups move whole).
//
// Layout (varint = unsigned LEB128, string = varint length + bytes, snapshot = TypeSerializerSnapshot::write):
//   "SLKG"                         4 magic bytes
//   varint format_version          kKeyGroupSnapshotFormatVersion
//   varint max_parallelism         key groups are only meaningful for the same max parallelism
//   varint key_group
//   snapshot key_serializer
//   varint state_count
//   state_count times, sorted by name:
//     string name
//     u8     kind                  StateKind
//     snapshot namespace_serializer
//     varint n, n x snapshot       value serializers (Value/Reducing: T; List: element T; Map: UK, UV;
//                                  Aggregating: ACC)
//     varint entry_count
//     varint entries_length_bytes
//     entries: entry_count times (string key_bytes, string namespace_bytes, string value_bytes)
//   u64 little-endian              XXH3-64 of all preceding bytes
//
// Value bytes per kind: Value/Reducing: TypeSerializer<T>; Aggregating: TypeSerializer<ACC>; List:
// TypeSerializer<std::vector<T>> (varint count + elements); Map: varint count + (UK, UV) pairs (the layout of
// TypeSerializer<std::map<UK, UV>>). Only non-empty states of the key group are written.
//
// Thread-safety: pure functions over caller-owned bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/data_view.h"
#include "sluice/core/ids.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/state/state_descriptor.h"

namespace sluice {

inline constexpr uint32_t kKeyGroupSnapshotFormatVersion = 1;

// What a snapshot records about one state; also what a registration is checked against.
struct StateMetaInfo {
  std::string name;
  StateKind kind = StateKind::kValue;
  TypeSerializerSnapshot namespace_serializer;
  std::vector<TypeSerializerSnapshot> value_serializers;

  bool operator==(const StateMetaInfo&) const = default;
  // "ValueState<i64>" or "ListState<string> in namespace time-window" (void namespace omitted).
  std::string type_description() const;
};

// kInvalidArgument naming the state unless `restored` (from a snapshot) and `registered` (by the program) are
// compatible as is (same kind; serializers same_schema: serializer_compatibility.h). Paths that migrate use
// resolve_state_schema (state_schema.h) instead.
Status check_state_compatible(const StateMetaInfo& restored, const StateMetaInfo& registered);

// Builds one key group's snapshot. Call add_state once per non-empty state in name order, then finish().
class KeyGroupSnapshotWriter {
 public:
  // Appends to *out, which must outlive the writer.
  KeyGroupSnapshotWriter(std::vector<uint8_t>* out, int32_t max_parallelism, KeyGroup key_group,
                         const TypeSerializerSnapshot& key_serializer, uint64_t state_count);
  // `entries` holds entry_count entries encoded with append_entry.
  void add_state(const StateMetaInfo& meta, uint64_t entry_count, const uint8_t* entries, size_t entries_size_bytes);
  void add_state(const StateMetaInfo& meta, uint64_t entry_count, const std::vector<uint8_t>& entries) {
    add_state(meta, entry_count, entries.data(), entries.size());
  }
  // Appends the checksum. The writer must not be used afterwards.
  void finish();

  // Appends one (key, namespace, value) entry to an entries buffer.
  static void append_entry(std::vector<uint8_t>& entries, std::string_view key_bytes, std::string_view ns_bytes,
                           std::string_view value_bytes);

 private:
  std::vector<uint8_t>* out_;
  size_t begin_;
  uint64_t expected_states_;
  uint64_t added_states_ = 0;
};

// One state's part of a parsed snapshot; the entries point into the parsed bytes.
struct StateSnapshotView {
  StateMetaInfo meta;
  uint64_t entry_count = 0;
  const uint8_t* entries = nullptr;
  size_t entries_size_bytes = 0;
};

struct KeyGroupSnapshotView {
  int32_t max_parallelism = 0;
  KeyGroup key_group;
  TypeSerializerSnapshot key_serializer;
  std::vector<StateSnapshotView> states;
};

// Parses and validates a snapshot: checksum, magic, version, and the framing of every entry (each state's
// entries split into exactly entry_count self-delimited triples). kCorruption naming the failing part
// (and the state, if inside one) otherwise. The view points into `data`, which must outlive it.
Result<KeyGroupSnapshotView> parse_key_group_snapshot(const uint8_t* data, size_t size);

// The max parallelism and key group of a snapshot, from its header only (no checksum check): lets a restore
// pick the snapshots of its own key groups cheaply. kCorruption if the header does not parse.
struct KeyGroupSnapshotHeader {
  int32_t max_parallelism = 0;
  KeyGroup key_group;
};
Result<KeyGroupSnapshotHeader> peek_key_group_snapshot(const uint8_t* data, size_t size);

// Reads the entries of a StateSnapshotView (already validated by parse_key_group_snapshot).
class SnapshotEntryReader {
 public:
  explicit SnapshotEntryReader(const StateSnapshotView& state)
      : in_(state.entries, state.entries_size_bytes), left_(state.entry_count) {}
  // False when all entries were read (or the bytes are malformed: then ok() is false).
  bool next(std::string_view* key_bytes, std::string_view* ns_bytes, std::string_view* value_bytes);
  bool ok() const { return in_.ok(); }
  bool at_end() const { return in_.at_end(); }

 private:
  DataInputView in_;
  uint64_t left_;
};

}  // namespace sluice
