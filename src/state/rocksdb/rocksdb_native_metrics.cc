#include "rocksdb_native_metrics.h"

#include <mutex>
#include <utility>
#include <vector>

namespace sluice {

struct RocksDBNativeMetricMonitor::State {
  struct Gauge {
    rocksdb::ColumnFamilyHandle* handle;
    std::string property;
    double final_value = 0;  // guarded by mu; meaningful once db is null
  };
  std::mutex mu;
  rocksdb::DB* db;                             // guarded by mu; null once closed
  std::vector<std::shared_ptr<Gauge>> gauges;  // guarded by mu

  double read_locked(const Gauge& g) const {
    uint64_t v = 0;
    return db->GetIntProperty(g.handle, g.property, &v) ? static_cast<double>(v) : 0.0;
  }
};

RocksDBNativeMetricMonitor::RocksDBNativeMetricMonitor(rocksdb::DB* db, RocksDBNativeMetricOptions options,
                                                       RocksDBNativeMetricRegistrar registrar)
    : state_(std::make_shared<State>()), properties_(properties_of(options)), registrar_(std::move(registrar)) {
  state_->db = db;
}

RocksDBNativeMetricMonitor::~RocksDBNativeMetricMonitor() { close(); }

std::vector<std::string> RocksDBNativeMetricMonitor::properties_of(const RocksDBNativeMetricOptions& o) {
  std::vector<std::string> out;
  if (o.block_cache_capacity) out.push_back(rocksdb::DB::Properties::kBlockCacheCapacity);
  if (o.block_cache_usage) out.push_back(rocksdb::DB::Properties::kBlockCacheUsage);
  if (o.cur_size_all_mem_tables) out.push_back(rocksdb::DB::Properties::kCurSizeAllMemTables);
  if (o.mem_table_flush_pending) out.push_back(rocksdb::DB::Properties::kMemTableFlushPending);
  if (o.num_running_flushes) out.push_back(rocksdb::DB::Properties::kNumRunningFlushes);
  if (o.num_running_compactions) out.push_back(rocksdb::DB::Properties::kNumRunningCompactions);
  return out;
}

void RocksDBNativeMetricMonitor::register_column_family(const std::string& group, rocksdb::ColumnFamilyHandle* handle) {
  if (!registrar_ || properties_.empty()) return;
  for (const std::string& property : properties_) {
    auto gauge = std::make_shared<State::Gauge>(State::Gauge{handle, property});
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->db == nullptr) return;
      state_->gauges.push_back(gauge);
    }
    std::shared_ptr<State> state = state_;
    registrar_(group, property, [state, gauge]() -> double {
      std::lock_guard<std::mutex> lock(state->mu);
      return state->db != nullptr ? state->read_locked(*gauge) : gauge->final_value;
    });
  }
}

void RocksDBNativeMetricMonitor::close() {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->db == nullptr) return;
  for (const auto& g : state_->gauges) g->final_value = state_->read_locked(*g);
  state_->db = nullptr;
}

}  // namespace sluice
