// Managed memory of the RocksDB backend: one block cache and one write-buffer manager shared by every RocksDB
// instance of the process with the same budget (internal: includes RocksDB's headers).
//
// How a budget of M bytes with write-buffer ratio r is split (Flink's RocksDBMemoryControllerUtils, whose
// comment derives it; its docs: "Bounding RocksDB Memory Usage" in large_state_tuning):
//   cache capacity               = (3 - r) * M / 3
//   write-buffer manager size    = 2 * r * M / 3
// The write-buffer manager charges every memtable arena block to the cache (dummy entries), so memtables,
// data blocks, and index and filter blocks (cache_index_and_filter_blocks) all count against the one cache
// capacity. Why not M and r * M: the manager only starts flushing when the mutable memtables pass 7/8 of its
// size, or when all memtables pass its size while the mutable ones are at least half of it, so memtables can
// reach 1.5 x its size; sizing it at 2/3 of r * M keeps that peak at r * M, and the cache gets the rest of M on
// top of the manager's nominal size, i.e. (3 - r) * M / 3. The cache is not strict (as Flink's: inserts never
// fail; RocksDB evicts unpinned blocks to get back under capacity), so pinned blocks (iterators, pinned L0
// index/filter) can overshoot a little: the documented slack in docs/state-backends.md.
//
// Deviation from Flink: the write-buffer manager stalls writes (allow_stall) while memtables hold its full
// size, until flushes free memory. Without it (Flink's FRocksDB has no stall) memtables outgrow the budget
// whenever writes outpace flushes: with a 16 MiB budget and two instances written flat out they reached
// 22.6 MiB (rocksdb_memory_it). The cost: a writer waits for flushes instead of using more memory, and a task
// thread that keeps an iterator open (pinning the memtables it reads) while it writes more than the manager's
// size could wait for memory only it can release (MapState for_each that writes megabytes of state).
//
// The cache is an LRU cache with high_prio_pool_ratio reserved for index and filter blocks (inserted with high
// priority: cache_index_and_filter_blocks_with_high_priority), so data blocks cannot flush them out.
//
// Lifetime: shared_resources_for() creates the objects the first time an instance of the process asks for a
// given (budget, ratios) and hands out shared_ptrs; the registry keeps only a weak_ptr, so they are freed when
// the last instance using them closes, and created again by the next one.
//
// Thread-safety: shared_resources_for may be called from any thread; the objects are thread-safe (RocksDB's).
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/write_buffer_manager.h>

#include <cstdint>
#include <memory>

#include "sluice/core/status.h"
#include "sluice/state/state_backend.h"

namespace sluice::rocksdb_memory {

struct MemoryBudgetSplit {
  int64_t total_bytes = 0;
  int64_t cache_capacity_bytes = 0;        // (3 - r) * M / 3
  int64_t write_buffer_manager_bytes = 0;  // 2 * r * M / 3
};

// The split above (pure). Requires total_bytes > 0 and r in (0, 1).
MemoryBudgetSplit split_budget(int64_t total_bytes, double write_buffer_ratio);

struct SharedResources {
  MemoryBudgetSplit split;
  double high_prio_pool_ratio = 0;
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffer_manager;
};

// The process's shared cache and write-buffer manager for `memory`'s budget and ratios; null when the budget
// is unbounded (RocksDBMemoryOptions::budget_bytes() == 0). kInvalidArgument as RocksDBMemoryOptions::validate().
Result<std::shared_ptr<const SharedResources>> shared_resources_for(const RocksDBMemoryOptions& memory);

// Shared resources alive in the process right now (tests: they go with their last user).
int live_shared_resources();

}  // namespace sluice::rocksdb_memory
