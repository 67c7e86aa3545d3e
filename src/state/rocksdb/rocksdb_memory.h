// Managed memory of the RocksDB backend: one block cache and one write-buffer manager shared by every RocksDB
// instance of the process with the same budget (internal: includes RocksDB's headers).
//
// How a budget of M bytes with write-buffer ratio r is split. With the write-back caches drawing on it
// (state.backend.rocksdb.cache.enabled, the default, and cache.max-size not set), they take w = 1/2 of it first
// and RocksDB the rest, R = (1 - w) * M; otherwise R = M (w = 0). R is split as Flink's
// RocksDBMemoryControllerUtils does (whose comment derives it; its docs: "Bounding RocksDB Memory Usage" in
// large_state_tuning):
//   write-back caches, together  = w * M        (each open cache: w * M / caches open in the process)
//   cache capacity               = (3 - r) * R / 3
//   write-buffer manager size    = 2 * r * R / 3
// So block cache + memtables + write-back caches stay within M (plus the block cache's slack below). Why
// w = 1/2: `sluice demo` on RocksDB was measured at 1.5 M events per CPU-second (0.21 M without the cache)
// with two 64 MiB caches beside the default 256 MiB budget; w = 1/2 gives two subtasks the same 64 MiB each,
// inside the budget instead of beside it. The caches' shares
// are fair shares of w * M among the caches open now (as the block cache is shared by every instance of the
// process, i.e. by all subtasks of every keyed operator here); a cache shrinks to its share at its next write
// after another one opens, so an idle cache may hold its former share until then. With cache.max-size set
// explicitly each cache gets that size outside the budget: the total is M + caches x max-size
// (docs/state-backends.md).
// The write-buffer manager charges every memtable arena block to the cache (dummy entries), so memtables,
// data blocks, and index and filter blocks (cache_index_and_filter_blocks) all count against the one cache
// capacity. Why not M and r * M: the manager only starts flushing when the mutable memtables pass 7/8 of its
// size, or when all memtables pass its size while the mutable ones are at least half of it, so memtables can
// reach 1.5 x its size; sizing it at 2/3 of r * M keeps that peak at r * M, and the cache gets the rest of M on
// top of the manager's nominal size, i.e. (3 - r) * M / 3. The cache is not strict (as Flink's: inserts never
// fail; RocksDB evicts unpinned blocks to get back under capacity), so pinned blocks (iterators, pinned L0
// index/filter) can overshoot a little: the documented slack in docs/state-backends.md.
//
// As Flink: the write-buffer manager never stalls writes (allow_stall false), so memtables can outgrow the
// budget while writes outpace flushes (22.6 MiB against a 16 MiB budget with two instances written flat out).
// Stalling was tried and removed: the manager is shared by every instance of the process, a stalled writer
// waits for memory that only other instances' flushes free, and an idle instance never flushes - the writer
// then waits forever (seen as a hang of state_ttl_tests with many instances open in one process).
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
#include "write_back_cache.h"

namespace sluice::rocksdb_memory {

// w above, when the write-back caches draw on the budget.
inline constexpr double kWriteBackCacheFraction = 0.5;
// A cache asked to draw on a budget that is unbounded (no managed memory) gets the default of
// state.backend.rocksdb.cache.max-size instead.
inline constexpr int64_t kUnmanagedWriteBackCacheBytes = int64_t{64} << 20;

struct MemoryBudgetSplit {
  int64_t total_bytes = 0;
  int64_t write_back_caches_bytes = 0;     // w * M
  int64_t cache_capacity_bytes = 0;        // (3 - r) * R / 3
  int64_t write_buffer_manager_bytes = 0;  // 2 * r * R / 3
};

// The split above (pure). Requires total_bytes > 0, r in (0, 1) and w in [0, 1).
MemoryBudgetSplit split_budget(int64_t total_bytes, double write_buffer_ratio, double write_back_fraction = 0.0);

struct SharedResources {
  MemoryBudgetSplit split;
  double high_prio_pool_ratio = 0;
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffer_manager;
  // The write-back caches' share (w * M); null when w = 0. Mutable: caches join and leave it.
  std::unique_ptr<rocksdb_cache::WriteBackCachePool> write_back_caches;
};

// The process's shared cache and write-buffer manager for `memory`'s budget and ratios, with w of the budget
// for the write-back caches (0 or kWriteBackCacheFraction); null when the budget is unbounded
// (RocksDBMemoryOptions::budget_bytes() == 0). kInvalidArgument as RocksDBMemoryOptions::validate().
Result<std::shared_ptr<const SharedResources>> shared_resources_for(const RocksDBMemoryOptions& memory,
                                                                    double write_back_fraction = 0.0);

// w for a store with these options: kWriteBackCacheFraction when its write-back cache draws on a budget
// (RocksDBWriteBackCacheOptions::Sizing::kManagedMemoryShare), else 0.
inline double write_back_fraction_of(const RocksDBStateBackendOptions& options) {
  return options.write_back_cache.sizing == RocksDBWriteBackCacheOptions::Sizing::kManagedMemoryShare &&
                 options.memory.budget_bytes() > 0
             ? kWriteBackCacheFraction
             : 0.0;
}

// Shared resources alive in the process right now (tests: they go with their last user).
int live_shared_resources();

}  // namespace sluice::rocksdb_memory
