// Managed memory under load: two RocksDB instances sharing a 16 MiB budget while ~128 MiB of state is written
// to them and then read back at random. Measures what RocksDB holds in memory (block cache usage, which includes
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
  int64_t rocksdb_total = 0;     // cache usage + table readers (memtables are inside the cache's usage)
  int64_t rss = 0;
};

TEST(RocksDBManagedMemory, StaysWithinTheBudgetWhileStateGrowsFarBeyondIt) {
  const int64_t budget = 16 * kMiB;
  RocksDBStateBackendOptions o;
  o.local_dir = ::testing::TempDir() + "sluice-rocksdb-memory-it";
  std::filesystem::remove_all(o.local_dir);
  o.instance_name = "mem";
  o.memory.fixed_per_tm_bytes = budget;
  const auto split = rocksdb_memory::split_budget(budget, o.memory.write_buffer_ratio);

  const int64_t rss_before = rss_bytes();
  auto a = RocksDBStore::open(o);
  auto b = RocksDBStore::open(o);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  RocksDBStore* stores[2] = {a->get(), b->get()};
  for (RocksDBStore* s : stores) ASSERT_TRUE(s->column_family("state:v").is_ok());

  Peak peak;
  auto sample = [&] {
    const int64_t usage = static_cast<int64_t>(property(*stores[0], rocksdb::DB::Properties::kBlockCacheUsage));
    int64_t mem = 0, readers = 0;
    for (RocksDBStore* s : stores) {
      mem += static_cast<int64_t>(property(*s, rocksdb::DB::Properties::kCurSizeAllMemTables));
      readers += static_cast<int64_t>(property(*s, rocksdb::DB::Properties::kEstimateTableReadersMem));
    }
    peak.cache_usage = std::max(peak.cache_usage, usage);
    peak.memtables = std::max(peak.memtables, mem);
    peak.table_readers = std::max(peak.table_readers, readers);
    peak.rocksdb_total = std::max(peak.rocksdb_total, usage + readers);
    peak.rss = std::max(peak.rss, rss_bytes());
  };

  // 2 x 64 MiB of 1 KiB values that do not compress; keys spread over 16 prefixes (as key groups), so flushed
  // files overlap and compactions run.
  constexpr int64_t kValueBytes = 1024;
  constexpr int64_t kKeysPerStore = 64 * 1024;
  std::mt19937_64 rng(42);
  std::string value(kValueBytes, '\0');
  std::string key(10, '\0');
  auto make_key = [&](int64_t i) {
    for (int j = 0; j < 8; ++j) key[static_cast<size_t>(2 + j)] = static_cast<char>(i >> (56 - 8 * j));
    key[0] = static_cast<char>((i % 16) >> 8);
    key[1] = static_cast<char>(i % 16);
  };
  for (int64_t i = 0; i < kKeysPerStore; ++i) {
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
  // Random point reads fill the block cache (and keep index blocks hot).
  std::string_view got;
  for (int64_t n = 0; n < 40'000; ++n) {
    const int64_t i = static_cast<int64_t>(rng() % kKeysPerStore);
    make_key(i);
    ASSERT_TRUE(stores[n % 2]->get(0, key, &got));
    ASSERT_EQ(static_cast<int64_t>(got.size()), kValueBytes);
    if (n % 2000 == 0) sample();
  }
  sample();
  const int64_t on_disk = stores[0]->estimate_size_bytes() + stores[1]->estimate_size_bytes();

  auto mib = [](int64_t v) { return static_cast<double>(v) / static_cast<double>(kMiB); };
  std::printf("budget %.1f MiB (cache %.2f MiB, write-buffer manager %.2f MiB); state written %.0f MiB, on disk "
              "%.1f MiB\n",
              mib(budget), mib(split.cache_capacity_bytes), mib(split.write_buffer_manager_bytes),
              mib(2 * kKeysPerStore * kValueBytes), mib(on_disk));
  std::printf("peak: block cache usage %.2f MiB, memtables %.2f MiB, table readers %.3f MiB, cache + readers %.2f "
              "MiB; RSS %.1f MiB before, %.1f MiB peak (+%.1f MiB)\n",
              mib(peak.cache_usage), mib(peak.memtables), mib(peak.table_readers), mib(peak.rocksdb_total),
              mib(rss_before), mib(peak.rss), mib(peak.rss - rss_before));

  // State grew to several times the budget.
  EXPECT_GT(on_disk, 4 * budget);
  // The cache is used, and memtables are charged to it.
  EXPECT_GT(peak.cache_usage, split.cache_capacity_bytes / 2);
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
  EXPECT_LE(peak.rss - rss_before, 6 * budget);
}

}  // namespace
}  // namespace sluice
