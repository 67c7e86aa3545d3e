// Managed memory under load: two RocksDB instances sharing a 16 MiB budget while ~128 MiB of state is written
// to them and then read back at random; again with their write-back caches drawing on the budget. Measures what RocksDB holds in memory (block cache usage, which includes
// the memtables' reservations and the index/filter blocks; the memtables themselves; table readers outside the
// cache) and the process's resident set, and checks they stay within the budget plus the slack documented in
// docs/state-backends.md. Prints the figures it measured.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "rocksdb_memory.h"
#include "sluice/detail/state/rocksdb/rocksdb_store.h"

namespace sluice {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// VmRSS of this process in bytes (/proc/self/status), 0 if unreadable.
int64_t rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // "VmRSS:   1234 kB"
  }
  return 0;
}

uint64_t property(RocksDBStore& s, const std::string& name) {
  uint64_t v = 0;
  EXPECT_TRUE(s.db_for_test()->GetIntProperty(s.column_family_handle_for_test(0), name, &v)) << name;
  return v;
}

struct Peak {
  int64_t cache_usage = 0;       // shared: block-cache-usage of either instance
  int64_t memtables = 0;         // cur-size-all-mem-tables, both instances
  int64_t table_readers = 0;     // estimate-table-readers-mem, both instances
  int64_t write_back = 0;        // the write-back caches' charged bytes, both instances
  int64_t rocksdb_total = 0;     // cache usage + table readers + write-back caches (memtables are in the cache)
  int64_t rss = 0;
  int64_t rss_before = 0;
  int64_t on_disk = 0;
};

constexpr int64_t kValueBytes = 1024;

// Two stores opened with `o`, kKeysPerStore x 1 KiB values that do not compress written to each (keys spread over
// 16 prefixes, as key groups, so flushed files overlap and compactions run), then random point reads that fill
// the block cache and keep index blocks hot. Samples RocksDB's and the write-back caches' memory as it goes.
Peak run_workload(const RocksDBStateBackendOptions& o, int64_t keys_per_store, int64_t reads) {
  Peak peak;
  peak.rss_before = rss_bytes();
  auto a = RocksDBStore::open(o);
  auto b = RocksDBStore::open(o);
  EXPECT_TRUE(a.is_ok() && b.is_ok());
  if (!a.is_ok() || !b.is_ok()) return peak;
  RocksDBStore* stores[2] = {a->get(), b->get()};
  for (RocksDBStore* s : stores) EXPECT_TRUE(s->column_family("state:v").is_ok());

  auto sample = [&] {
    const int64_t usage = static_cast<int64_t>(property(*stores[0], rocksdb::DB::Properties::kBlockCacheUsage));
    int64_t mem = 0, readers = 0, write_back = 0;
    for (RocksDBStore* s : stores) {
      mem += static_cast<int64_t>(property(*s, rocksdb::DB::Properties::kCurSizeAllMemTables));
      readers += static_cast<int64_t>(property(*s, rocksdb::DB::Properties::kEstimateTableReadersMem));
      write_back += s->cache_stats().size_bytes;
    }
    peak.cache_usage = std::max(peak.cache_usage, usage);
    peak.memtables = std::max(peak.memtables, mem);
    peak.table_readers = std::max(peak.table_readers, readers);
    peak.write_back = std::max(peak.write_back, write_back);
    peak.rocksdb_total = std::max(peak.rocksdb_total, usage + readers + write_back);
    peak.rss = std::max(peak.rss, rss_bytes());
  };

  std::mt19937_64 rng(42);
  std::string value(kValueBytes, '\0');
  std::string key(10, '\0');
  auto make_key = [&](int64_t i) {
    for (int j = 0; j < 8; ++j) key[static_cast<size_t>(2 + j)] = static_cast<char>(i >> (56 - 8 * j));
    key[0] = static_cast<char>((i % 16) >> 8);
    key[1] = static_cast<char>(i % 16);
  };
  for (int64_t i = 0; i < keys_per_store; ++i) {
    for (RocksDBStore* s : stores) {
      for (size_t j = 0; j < value.size(); j += 8) {
        const uint64_t r = rng();
        std::memcpy(value.data() + j, &r, 8);
      }
      make_key(i);
      s->put(0, key, value);
    }
    if (i % 256 == 0) sample();
  }
  std::string_view got;
  for (int64_t n = 0; n < reads; ++n) {
    const int64_t i = static_cast<int64_t>(rng() % keys_per_store);
    make_key(i);
    EXPECT_TRUE(stores[n % 2]->get(0, key, &got));
    EXPECT_EQ(static_cast<int64_t>(got.size()), kValueBytes);
    if (n % 2000 == 0) sample();
  }
  sample();
  for (RocksDBStore* s : stores) s->write_back();  // what the caches held reaches RocksDB, so it counts on disk
  peak.on_disk = stores[0]->estimate_size_bytes() + stores[1]->estimate_size_bytes();
  return peak;
}

double mib(int64_t v) { return static_cast<double>(v) / static_cast<double>(kMiB); }

void print(const Peak& peak, const rocksdb_memory::MemoryBudgetSplit& split, int64_t written) {
  std::printf("budget %.1f MiB (write-back caches %.2f MiB, cache %.2f MiB, write-buffer manager %.2f MiB); state "
              "written %.0f MiB, on disk %.1f MiB\n",
              mib(split.total_bytes), mib(split.write_back_caches_bytes), mib(split.cache_capacity_bytes),
              mib(split.write_buffer_manager_bytes), mib(written), mib(peak.on_disk));
  std::printf("peak: block cache usage %.2f MiB, memtables %.2f MiB, table readers %.3f MiB, write-back caches "
              "%.2f MiB, together %.2f MiB; RSS %.1f MiB before, %.1f MiB peak (+%.1f MiB)\n",
              mib(peak.cache_usage), mib(peak.memtables), mib(peak.table_readers), mib(peak.write_back),
              mib(peak.rocksdb_total), mib(peak.rss_before), mib(peak.rss), mib(peak.rss - peak.rss_before));
}

// A fresh local dir named after `name`, the budget, and the write-back cache's sizing.
RocksDBStateBackendOptions options_for(const std::string& name, int64_t budget, RocksDBWriteBackCacheOptions cache) {
  RocksDBStateBackendOptions o;
  o.local_dir = ::testing::TempDir() + "sluice-rocksdb-" + name + "-it";
  std::filesystem::remove_all(o.local_dir);
  o.instance_name = name;
  o.memory.fixed_per_tm_bytes = budget;
  o.write_back_cache = cache;
  return o;
}

TEST(RocksDBManagedMemory, StaysWithinTheBudgetWhileStateGrowsFarBeyondIt) {
  const int64_t budget = 16 * kMiB;
  const RocksDBStateBackendOptions o = options_for("memory", budget, {});  // RocksDB's own memory alone
  const auto split = rocksdb_memory::split_budget(budget, o.memory.write_buffer_ratio);
  constexpr int64_t kKeysPerStore = 64 * 1024;  // 2 x 64 MiB
  const Peak peak = run_workload(o, kKeysPerStore, 40'000);
  print(peak, split, 2 * kKeysPerStore * kValueBytes);

  // State grew to several times the budget.
  EXPECT_GT(peak.on_disk, 4 * budget);
  // The cache is used, and memtables are charged to it.
  EXPECT_GT(peak.cache_usage, split.cache_capacity_bytes / 2);
  EXPECT_EQ(peak.write_back, 0);
  // RocksDB's memory (cache incl. memtable reservations and index/filter blocks, plus table readers) and the
  // memtables alone stay bounded. Not by the budget itself: as in Flink the write-buffer manager does not stall
  // writes, so memtables outgrow their share while writes outpace flushes (measured over four runs: total
  // 19.5 to 35.5 MiB = 1.2 to 2.2 x a 16 MiB budget on an idle machine, more when flushes are starved of CPU;
  // docs/state-backends.md). The bound, 3/4 of the 128 MiB written, only catches memory that grows with the
  // state; bounding the overshoot itself is unfinished (it needs a stall that cannot deadlock).
  EXPECT_LE(peak.rocksdb_total, 6 * budget);
  EXPECT_LE(peak.memtables, 6 * budget);
  // The process's resident set grows by the budget plus allocator and RocksDB overheads outside its
  // accounting (threads, compaction and flush buffers, malloc fragmentation): measured about +22 MiB idle, and
  // up to +59 MiB on a loaded machine where flushes lag (memtables grow as above). Bounded like RocksDB's own
  // total, at 6 x the budget: below the 128 MiB written, so it still catches memory that grows with the state.
  EXPECT_LE(peak.rss - peak.rss_before, 6 * budget);
}

// The write-back caches drawing on the budget (the configuration's default): half of it for the two caches
// together, the block cache and write-buffer manager split from the other half. The caches' charged bytes never
// pass their half, and RocksDB's memory plus theirs is bounded as above with state 4x the budget.
TEST(RocksDBManagedMemory, WriteBackCachesShareTheBudget) {
  const int64_t budget = 16 * kMiB;
  const RocksDBStateBackendOptions o = options_for("memory-cache", budget, RocksDBWriteBackCacheOptions::managed_memory_share());  // a share of the budget
  const auto split =
      rocksdb_memory::split_budget(budget, o.memory.write_buffer_ratio, rocksdb_memory::kWriteBackCacheFraction);
  EXPECT_EQ(split.write_back_caches_bytes, budget / 2);
  EXPECT_LE(split.write_back_caches_bytes + split.cache_capacity_bytes, budget);
  constexpr int64_t kKeysPerStore = 32 * 1024;  // 2 x 32 MiB
  {
    auto one = RocksDBStore::open(o);
    ASSERT_TRUE(one.is_ok()) << one.status().to_string();
    EXPECT_EQ((*one)->cache_stats().max_size_bytes, split.write_back_caches_bytes);  // alone: the whole share
  }
  const Peak peak = run_workload(o, kKeysPerStore, 20'000);
  print(peak, split, 2 * kKeysPerStore * kValueBytes);

  EXPECT_GT(peak.on_disk, 2 * budget);
  // The caches are used up to their share, and never beyond: one entry over a share is evicted at once.
  EXPECT_GT(peak.write_back, split.write_back_caches_bytes / 2);
  EXPECT_LE(peak.write_back, split.write_back_caches_bytes);
  // Block cache + table readers + write-back caches, and RSS: the bounds of the test above.
  EXPECT_LE(peak.rocksdb_total, 6 * budget);
  EXPECT_LE(peak.rss - peak.rss_before, 6 * budget);
}

}  // namespace
}  // namespace sluice
