// HeapKeyedStateSnapshot: the asynchronous snapshot of the heap keyed state backend (keyed_state_snapshot.h),
// and the key-group writer shared with the backend's synchronous snapshot_key_group. Implementation header of
// HashMapStateBackend; users do not include it.
//
// Holds, per registered state, the StateMap views of every key group taken at the synchronous part
// (StateTableSnapshot), a copy of the restored-but-unregistered states (shared immutable bytes), and the
// snapshot's version in the backend's StateVersions, which keeps every viewed object alive and unchanged until
// release(). Writing reads only those frozen objects, under StateVersions::acquire_reader so a backend
// destroyed meanwhile is noticed instead of read.
// Thread-safety: as KeyedStateSnapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/detail/state/heap/restored_state_store.h"
#include "sluice/detail/state/heap/state_table.h"
#include "sluice/detail/state/heap/state_versions.h"
#include "sluice/state/key_group_snapshot.h"
#include "sluice/state/keyed_state_snapshot.h"

namespace sluice {
namespace detail {

// Writes the canonical snapshot of key group kg (at `index` in the range) from `tables` (registered states
// in name order: StateTableBase or StateTableSnapshot) and `pending` (restored, unregistered states in name
// order; the names are distinct from the tables'). With no non-empty state, writes a snapshot without states
// if `write_if_empty`, else nothing. `scratch` (may be null) holds a state's entries before they are framed;
// passing the same one for every key group saves growing a fresh buffer each time.
template <class Table>
void write_heap_key_group(std::vector<uint8_t>* out, int32_t max_parallelism, KeyGroup kg, int32_t index,
                          const TypeSerializerSnapshot& key_serializer, const std::vector<const Table*>& tables,
                          const std::vector<StateSnapshotView>& pending, bool write_if_empty,
                          std::vector<uint8_t>* scratch = nullptr) {
  // A table that filters its snapshot (TTL cleanup in full snapshot) is encoded up front: only then is it
  // known whether any entry remains (states without entries are not written).
  struct Present {
    const Table* table;
    int32_t filtered = -1;  // index into filtered_entries, or -1: encode when written
  };
  std::vector<Present> present;
  std::vector<std::vector<uint8_t>> filtered_entries;
  std::vector<uint64_t> filtered_counts;
  for (const Table* t : tables) {
    if (t->size_of_key_group(index) == 0) continue;
    if (t->filters_on_snapshot()) {
      std::vector<uint8_t> bytes;
      const uint64_t n = t->write_key_group(index, bytes);
      if (n == 0) continue;
      present.push_back(Present{t, static_cast<int32_t>(filtered_entries.size())});
      filtered_entries.push_back(std::move(bytes));
      filtered_counts.push_back(n);
    } else {
      present.push_back(Present{t});
    }
  }
  if (present.empty() && pending.empty() && !write_if_empty) return;
  KeyGroupSnapshotWriter writer(out, max_parallelism, kg, key_serializer, present.size() + pending.size());
  std::vector<uint8_t> local;
  std::vector<uint8_t>& entries = scratch != nullptr ? *scratch : local;
  size_t ti = 0, pi = 0;
  while (ti < present.size() || pi < pending.size()) {
    if (pi == pending.size() ||
        (ti < present.size() && present[ti].table->meta().name < pending[pi].meta.name)) {
      const Present& p = present[ti++];
      if (p.filtered >= 0) {
        const auto f = static_cast<size_t>(p.filtered);
        writer.add_state(p.table->meta(), filtered_counts[f], filtered_entries[f]);
        continue;
      }
      entries.clear();
      uint64_t count = p.table->write_key_group(index, entries);
      writer.add_state(p.table->meta(), count, entries);
    } else {
      const StateSnapshotView& p = pending[pi++];
      writer.add_state(p.meta, p.entry_count, p.entries, p.entries_size_bytes);
    }
  }
  writer.finish();
}

}  // namespace detail

class HeapKeyedStateSnapshot final : public KeyedStateSnapshot {
 public:
  // `version` comes from versions->begin_snapshot(); `tables` (name order) were taken right after it.
  HeapKeyedStateSnapshot(KeyGroupRange range, int32_t max_parallelism, TypeSerializerSnapshot key_serializer,
                         std::shared_ptr<StateVersions> versions, uint64_t version,
                         std::vector<std::unique_ptr<StateTableSnapshot>> tables, RestoredStateStore restored);
  ~HeapKeyedStateSnapshot() override;

  Status write_key_group(KeyGroup kg, std::vector<uint8_t>* out) override;
  void release() override;

  uint64_t version() const { return version_; }

 private:
  const int32_t max_parallelism_;
  const TypeSerializerSnapshot key_serializer_;
  const std::shared_ptr<StateVersions> versions_;
  const uint64_t version_;
  const std::vector<std::unique_ptr<StateTableSnapshot>> tables_;
  const RestoredStateStore restored_;

  std::mutex mu_;  // held by write_key_group; release() takes it to wait for a write in progress
  bool released_ = false;  // guarded by mu_
  std::vector<uint8_t> scratch_;  // guarded by mu_; reused by every key group, freed by release()
};

}  // namespace sluice
