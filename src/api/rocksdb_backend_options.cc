#include "api/rocksdb_backend_options.h"

#include "sluice/config/options.h"

namespace sluice::api {

RocksDBStateBackendOptions rocksdb_backend_options(const Configuration& config) {
  RocksDBStateBackendOptions o;
  o.local_dir = config.get(options::kRocksDBLocalDir);
  switch (config.get(options::kRocksDBPredefinedOptions)) {
    case PredefinedOptions::kDefault: o.predefined_options = RocksDBPredefinedOptions::kDefault; break;
    case PredefinedOptions::kSpinningDiskOptimized:
      o.predefined_options = RocksDBPredefinedOptions::kSpinningDiskOptimized;
      break;
    case PredefinedOptions::kSpinningDiskOptimizedHighMem:
      o.predefined_options = RocksDBPredefinedOptions::kSpinningDiskOptimizedHighMem;
      break;
    case PredefinedOptions::kFlashSsdOptimized: o.predefined_options = RocksDBPredefinedOptions::kFlashSsdOptimized; break;
    case PredefinedOptions::kFlashSsdOptimizedHighMem:
      o.predefined_options = RocksDBPredefinedOptions::kFlashSsdOptimizedHighMem;
      break;
  }
  o.timer_service_factory = config.get(options::kRocksDBTimerServiceFactory) == TimerServiceFactory::kHeap
                                ? RocksDBTimerServiceFactory::kHeap
                                : RocksDBTimerServiceFactory::kRocksDB;
  o.memory.managed = config.get(options::kRocksDBMemoryManaged);
  o.memory.managed_size_bytes = static_cast<int64_t>(config.get(options::kManagedMemorySize).bytes);
  if (auto fixed = config.get(options::kRocksDBMemoryFixedPerTm)) o.memory.fixed_per_tm_bytes = static_cast<int64_t>(fixed->bytes);
  o.memory.write_buffer_ratio = config.get(options::kRocksDBMemoryWriteBufferRatio);
  o.memory.high_prio_pool_ratio = config.get(options::kRocksDBMemoryHighPrioPoolRatio);
  if (config.get(options::kRocksDBCacheEnabled)) {
    const bool sized = config.contains(options::kRocksDBCacheMaxSize.key) || o.memory.budget_bytes() == 0;
    o.write_back_cache = sized ? RocksDBWriteBackCacheOptions::fixed(
                                     static_cast<int64_t>(config.get(options::kRocksDBCacheMaxSize).bytes))
                               : RocksDBWriteBackCacheOptions::managed_memory_share();
  }
  o.native_metrics.block_cache_capacity = config.get(options::kRocksDBMetricsBlockCacheCapacity);
  o.native_metrics.block_cache_usage = config.get(options::kRocksDBMetricsBlockCacheUsage);
  o.native_metrics.cur_size_all_mem_tables = config.get(options::kRocksDBMetricsCurSizeAllMemTables);
  o.native_metrics.mem_table_flush_pending = config.get(options::kRocksDBMetricsMemTableFlushPending);
  o.native_metrics.num_running_flushes = config.get(options::kRocksDBMetricsNumRunningFlushes);
  o.native_metrics.num_running_compactions = config.get(options::kRocksDBMetricsNumRunningCompactions);
  return o;
}

}  // namespace sluice::api
