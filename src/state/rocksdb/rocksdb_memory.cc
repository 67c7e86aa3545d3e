#include "rocksdb_memory.h"

#include <charconv>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace sluice::rocksdb_memory {

MemoryBudgetSplit split_budget(int64_t total_bytes, double write_buffer_ratio, double write_back_fraction) {
  MemoryBudgetSplit s;
  s.total_bytes = total_bytes;
  s.write_back_caches_bytes = static_cast<int64_t>(write_back_fraction * static_cast<double>(total_bytes));
  const double m = static_cast<double>(total_bytes - s.write_back_caches_bytes);
  s.cache_capacity_bytes = static_cast<int64_t>((3.0 - write_buffer_ratio) * m / 3.0);
  s.write_buffer_manager_bytes = static_cast<int64_t>(2.0 * m * write_buffer_ratio / 3.0);
  return s;
}

}  // namespace sluice::rocksdb_memory

namespace sluice {

namespace {
// A ratio as the user typed it: the shortest form that reads back as the same double ("0.7", "1.5"; not
// std::to_string's "0.700000").
std::string ratio_text(double v) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(v);
}
}  // namespace

Status RocksDBMemoryOptions::validate() const {
  const RocksDBMemoryOptions& memory = *this;
  auto in_open_unit = [](double v) { return v > 0.0 && v < 1.0; };
  if (!in_open_unit(memory.write_buffer_ratio)) {
    return Status::invalid_argument("state.backend.rocksdb.memory.write-buffer-ratio: " +
                                    ratio_text(memory.write_buffer_ratio) + " is out of range (expected in (0, 1))");
  }
  if (!in_open_unit(memory.high_prio_pool_ratio)) {
    return Status::invalid_argument("state.backend.rocksdb.memory.high-prio-pool-ratio: " +
                                    ratio_text(memory.high_prio_pool_ratio) +
                                    " is out of range (expected in (0, 1))");
  }
  if (memory.write_buffer_ratio + memory.high_prio_pool_ratio >= 1.0) {
    return Status::invalid_argument(
        "state.backend.rocksdb.memory.write-buffer-ratio (" + ratio_text(memory.write_buffer_ratio) +
        ") + state.backend.rocksdb.memory.high-prio-pool-ratio (" + ratio_text(memory.high_prio_pool_ratio) +
        ") must be below 1");
  }
  if (memory.fixed_per_tm_bytes < 0 || (memory.managed && memory.fixed_per_tm_bytes == 0 && memory.managed_size_bytes <= 0)) {
    return Status::invalid_argument(
        "RocksDB managed memory: the budget (state.backend.rocksdb.memory.fixed-per-tm, else "
        "taskmanager.memory.managed.size) must be positive; set state.backend.rocksdb.memory.managed: false for "
        "no bound");
  }
  return Status::ok();
}

}  // namespace sluice

namespace sluice::rocksdb_memory {

namespace {

// budget, write-buffer ratio, high-priority pool ratio, write-back caches' fraction
using Key = std::tuple<int64_t, double, double, double>;

struct Registry {
  std::mutex mu;
  std::map<Key, std::weak_ptr<const SharedResources>> entries;  // guarded by mu
};

// Process-wide by nature: the resources are shared by every instance in the process (Flink: per slot).
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: instances may close during static destruction
  return *r;
}

}  // namespace

Result<std::shared_ptr<const SharedResources>> shared_resources_for(const RocksDBMemoryOptions& memory,
                                                                    double write_back_fraction) {
  SLUICE_RETURN_IF_ERROR(memory.validate());
  const int64_t budget = memory.budget_bytes();
  if (budget == 0) return std::shared_ptr<const SharedResources>();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const Key key{budget, memory.write_buffer_ratio, memory.high_prio_pool_ratio, write_back_fraction};
  auto it = r.entries.find(key);
  if (it != r.entries.end()) {
    if (std::shared_ptr<const SharedResources> alive = it->second.lock()) return alive;
  }
  auto res = std::make_shared<SharedResources>();
  res->split = split_budget(budget, memory.write_buffer_ratio, write_back_fraction);
  if (res->split.write_back_caches_bytes > 0) {
    res->write_back_caches = std::make_unique<rocksdb_cache::WriteBackCachePool>(res->split.write_back_caches_bytes);
  }
  res->high_prio_pool_ratio = memory.high_prio_pool_ratio;
  rocksdb::LRUCacheOptions co;
  co.capacity = static_cast<size_t>(res->split.cache_capacity_bytes);
  co.num_shard_bits = -1;             // RocksDB picks by capacity
  co.strict_capacity_limit = false;   // as Flink: a full cache evicts, never fails a read or a memtable
  co.high_pri_pool_ratio = memory.high_prio_pool_ratio;
  res->cache = rocksdb::NewLRUCache(co);
  res->write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(
      static_cast<size_t>(res->split.write_buffer_manager_bytes), res->cache, /*allow_stall=*/false);
  std::shared_ptr<const SharedResources> out = res;
  r.entries[key] = out;
  // Drop entries whose resources are gone, so the map does not grow with every budget ever seen.
  for (auto e = r.entries.begin(); e != r.entries.end();) e = e->second.expired() ? r.entries.erase(e) : std::next(e);
  return out;
}

int live_shared_resources() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  int n = 0;
  for (const auto& [key, weak] : r.entries) n += weak.expired() ? 0 : 1;
  return n;
}

}  // namespace sluice::rocksdb_memory
