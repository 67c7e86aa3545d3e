// StateBackend: which keyed-state backend a job uses (Flink's `state.backend.type`). The configuration
// object users pass to the environment; the runtime creates one KeyedStateBackend<K> per keyed operator
// subtask from it (keyed_state_backend.h: make_keyed_state_backend).
//
// Thread-safety: immutable values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/name_source.h"
#include "sluice/core/status.h"

namespace sluice {

// The backend implementations.
enum class StateBackendKind : uint8_t {
  kHashMap = 1,  // HashMapStateBackend: typed objects in per-key-group hash tables on the heap
  kRocksDB = 2,  // EmbeddedRocksDBStateBackend: serialized bytes in an embedded RocksDB on local disk
};

// The `state.backend.type` value of a kind: "hashmap" or "rocksdb".
std::string_view state_backend_kind_name(StateBackendKind kind);

// Parses a `state.backend.type` value into the backend it selects (case-insensitive): "hashmap" (Flink's
// value; "heap" is accepted too), "rocksdb", and Flink 1.x's legacy names: "jobmanager" / "MemoryStateBackend"
// and "filesystem" / "FsStateBackend" select hashmap, "RocksDBStateBackend" selects rocksdb. (The legacy names
// also select a checkpoint storage; that part is the configuration's: derived_options.h.)
// kInvalidArgument naming the value and the accepted ones otherwise.
Result<StateBackendKind> parse_state_backend_type(std::string_view text);

// state.backend.rocksdb.predefined-options: a named set of RocksDB settings, applied before the options factory.
// Flink's four profiles (same settings as Flink's PredefinedOptions) and one of ours; the table of what each
// sets is in docs/state-backends.md and src/state/rocksdb/rocksdb_options.h.
enum class RocksDBPredefinedOptions : uint8_t {
  kDefault,                       // RocksDB's defaults plus Sluice's base settings
  kSpinningDiskOptimized,         // level compaction, dynamic level bytes, 4 background jobs, no open-file limit
  kSpinningDiskOptimizedHighMem,  // + big blocks, memtables and files, bloom filter, 256 MiB block cache
  kFlashSsdOptimized,             // 4 background jobs, no open-file limit
  kFlashSsdOptimizedHighMem,      // Sluice's: FLASH_SSD_OPTIMIZED + big memtables, bloom filter, 256 MiB cache
};

// The `state.backend.rocksdb.predefined-options` value of a profile ("SPINNING_DISK_OPTIMIZED", ...).
std::string_view rocksdb_predefined_options_name(RocksDBPredefinedOptions p);

// state.backend.rocksdb.timer-service.factory: where the RocksDB backend keeps timers (Flink's
// EmbeddedRocksDBStateBackend.PriorityQueueStateType). ROCKSDB (the default, as Flink): a column family per timer
// queue, ordered by [key group][timestamp][key][namespace], with a cached head per key group
// (rocksdb/rocksdb_timer_queue.h). HEAP: on the heap as in HashMapStateBackend (heap/heap_timer_queue.h): faster,
// bounded by memory, and snapshotted synchronously (copied at the barrier; written into the column family
// before an incremental snapshot).
enum class RocksDBTimerServiceFactory : uint8_t {
  kRocksDB,
  kHeap,
};
// "ROCKSDB" or "HEAP".
std::string_view rocksdb_timer_service_factory_name(RocksDBTimerServiceFactory f);
// Case-insensitive "ROCKSDB" or "HEAP"; kInvalidArgument naming the value and the accepted ones otherwise.
Result<RocksDBTimerServiceFactory> parse_rocksdb_timer_service_factory(std::string_view text);

// Managed memory (`state.backend.rocksdb.memory.*`): one block cache and one write-buffer manager shared by
// every RocksDB instance of the process with the same budget (Flink shares them per slot; until cluster mode a
// process is one slot). The budget is `fixed_per_tm_bytes` if > 0, else `managed_size_bytes` if `managed`,
// else unbounded (each instance on its own RocksDB defaults). How the budget is split: rocksdb_memory.h.
struct RocksDBMemoryOptions {
  // state.backend.rocksdb.memory.managed: bound RocksDB by taskmanager.memory.managed.size.
  bool managed = true;
  // taskmanager.memory.managed.size (default 256 MiB: docs/configuration.md says why).
  int64_t managed_size_bytes = int64_t{256} << 20;
  // state.backend.rocksdb.memory.fixed-per-tm; 0 = unset. When set it is the budget, whatever `managed` says.
  int64_t fixed_per_tm_bytes = 0;
  // state.backend.rocksdb.memory.write-buffer-ratio, in (0, 1): the share of the budget memtables may take.
  double write_buffer_ratio = 0.5;
  // state.backend.rocksdb.memory.high-prio-pool-ratio, in (0, 1): the share of the block cache kept for
  // index and filter blocks. write_buffer_ratio + high_prio_pool_ratio < 1.
  double high_prio_pool_ratio = 0.1;

  // Ok, or kInvalidArgument naming the key: a ratio outside (0, 1), the two ratios summing to 1 or more (as
  // Flink's RocksDBMemoryConfiguration), or a bounded budget that is not positive.
  Status validate() const;
  // The budget in bytes, 0 when unbounded.
  int64_t budget_bytes() const { return fixed_per_tm_bytes > 0 ? fixed_per_tm_bytes : managed ? managed_size_bytes : 0; }
};

// Native RocksDB metrics (`state.backend.rocksdb.metrics.*`, each off by default as in Flink): gauges of the
// RocksDB property of the same name ("rocksdb.block-cache-usage", ...) per state (column family) of each keyed
// operator subtask. block-cache-* report the shared cache; num-running-* are database-wide.
struct RocksDBNativeMetricOptions {
  bool block_cache_capacity = false;
  bool block_cache_usage = false;
  bool cur_size_all_mem_tables = false;
  bool mem_table_flush_pending = false;
  bool num_running_flushes = false;
  bool num_running_compactions = false;

  bool any() const {
    return block_cache_capacity || block_cache_usage || cur_size_all_mem_tables || mem_table_flush_pending ||
           num_running_flushes || num_running_compactions;
  }
};

// Where a RocksDB instance publishes a native metric: `group` is the state's name (one group per column
// family, as Flink), `name` the RocksDB property ("rocksdb.block-cache-usage"). `read` may be called from any
// thread, for as long as the caller likes: after the instance closes it returns the value read at close.
// Called on the task thread when a state is registered. The runtime binds it to the operator subtask's
// metric group (operators/builtin_operators.h).
using RocksDBNativeMetricRegistrar =
    std::function<void(const std::string& group, const std::string& name, std::function<double()> read)>;

// A user hook that changes RocksDB's options (Flink's RocksDBOptionsFactory). Defined in
// sluice/state/rocksdb_options_factory.h, the one public header that includes RocksDB's headers: only
// code that implements a factory includes it.
class RocksDBOptionsFactory;

// How large each subtask's write-back cache is. Its size counts keys + values + about 128 bytes per entry; beyond it
// the least recently used entries are written to RocksDB and dropped. Sluice's own (Flink has no such cache).
struct RocksDBWriteBackCacheOptions {
  enum class Sizing : uint8_t {
    kOff,
    // `max_size_bytes` (> 0) per subtask, beside the managed-memory budget (state.backend.rocksdb.cache.max-size set).
    kFixed,
    // The configuration's default while managed memory bounds RocksDB: the caches open in the process share half of
    // the budget in equal parts, and RocksDB's block cache and write buffers the other half (docs/state-backends.md,
    // "Memory management"). Without a budget each cache gets 64 MiB, cache.max-size's default.
    kManagedMemoryShare,
  };
  Sizing sizing = Sizing::kOff;
  int64_t max_size_bytes = 0;  // kFixed only

  static RocksDBWriteBackCacheOptions fixed(int64_t max_size_bytes) { return {Sizing::kFixed, max_size_bytes}; }
  static RocksDBWriteBackCacheOptions managed_memory_share() { return {Sizing::kManagedMemoryShare, 0}; }
};

// Job-wide settings of the RocksDB backend (`state.backend.rocksdb.*`), handed from the configuration to every
// keyed operator subtask. Ignored by the heap backend.
struct RocksDBStateBackendOptions {
  // state.backend.rocksdb.localdir: the directory under which each subtask's RocksDB instance gets its own
  // working directory (deleted when the subtask's backend is destroyed). Empty: the system temp directory
  // (std::filesystem::temp_directory_path(), i.e. $TMPDIR or /tmp).
  std::string local_dir;
  // Part of the working directory's name, so one can tell whose it is: the runtime sets
  // "job_<job id>_op_<operator>_<subtask>". A random suffix keeps names unique across attempts and processes.
  std::string instance_name;
  // state.backend.rocksdb.cache.*: the write-back cache of recently used keys per subtask in front of RocksDB
  // (detail/state/rocksdb/rocksdb_store.h). Off in this struct; the configuration turns it on.
  RocksDBWriteBackCacheOptions write_back_cache = {};
  // state.backend.rocksdb.timer-service.factory.
  RocksDBTimerServiceFactory timer_service_factory = RocksDBTimerServiceFactory::kRocksDB;
  // state.backend.rocksdb.predefined-options.
  RocksDBPredefinedOptions predefined_options = RocksDBPredefinedOptions::kDefault;
  // state.backend.rocksdb.memory.* and taskmanager.memory.managed.size.
  RocksDBMemoryOptions memory = {};
  // state.backend.rocksdb.metrics.*.
  RocksDBNativeMetricOptions native_metrics = {};
  // Applied after the predefined options; Sluice's own settings (merge operator, shared cache and write-buffer
  // manager, a fresh database) are applied after it and win. Null: none. Shared by every subtask's instance.
  std::shared_ptr<const RocksDBOptionsFactory> options_factory = nullptr;
  // Set per subtask by the runtime; null: the enabled native metrics are not published.
  RocksDBNativeMetricRegistrar native_metric_registrar = nullptr;
  // Where the working folder's random suffix and the backend id (recorded in incremental handles) come from:
  // the streams "rocksdb-dir:<instance_name>" and "rocksdb-backend:<instance_name>" (sluice/core/name_source.h).
  // Set by the cluster from the job's source; null: a random source.
  std::shared_ptr<NameSource> names = nullptr;
};

class StateBackend {
 public:
  virtual ~StateBackend() = default;
  virtual StateBackendKind kind() const = 0;
  std::string_view name() const { return state_backend_kind_name(kind()); }
};

}  // namespace sluice
