// RocksDBStore with its write-back cache: equal to the uncached store on random operation sequences (with
// and without eviction), snapshots equal to the state at the snapshot, the memory bound under pressure, and
// hot keys that stay in memory until a write-back.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sluice/detail/state/rocksdb/rocksdb_store.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<RocksDBStore> open_store(int64_t cache_bytes) {
  const std::string dir = ::testing::TempDir() + "sluice-write-back-cache-test-" + std::to_string(::getpid());
  RocksDBStore::Options o{dir, "t"};
  if (cache_bytes > 0) o.write_back_cache = RocksDBWriteBackCacheOptions::fixed(cache_bytes);
  auto s = RocksDBStore::open(o);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return nullptr;
  auto store = std::move(s).value();
  EXPECT_TRUE(store->column_family("a").is_ok());
  EXPECT_TRUE(store->column_family("b").is_ok());
  return store;
}

std::optional<std::string> get(RocksDBStore& s, int32_t cf, const std::string& key) {
  std::string_view v;
  if (!s.get(cf, key, &v)) return std::nullopt;
  return std::string(v);
}

std::vector<std::pair<std::string, std::string>> scan(RocksDBStore::Iterator& it) {
  std::vector<std::pair<std::string, std::string>> out;
  for (; it.valid(); it.next()) out.emplace_back(it.key(), it.value());
  EXPECT_TRUE(it.status().is_ok());
  return out;
}

std::vector<std::pair<std::string, std::string>> scan(const RocksDBStore& s, int32_t cf, const std::string& lo,
                                                      const std::string& hi) {
  return scan(*s.new_iterator(cf, lo, hi));
}

std::vector<std::pair<std::string, std::string>> scan_snapshot(RocksDBStore::Snapshot& snap, int32_t cf) {
  EXPECT_TRUE(snap.acquire_reader());
  auto out = scan(*snap.new_iterator(cf, "", ""));
  snap.release_reader();
  return out;
}

// The same random operations on a cached store, an uncached one and a std::map; every read agrees.
// Returns the cached store's statistics at the end.
RocksDBStore::CacheStats run_random_sequence(uint64_t seed, int64_t cache_bytes, int ops) {
  SCOPED_TRACE("seed=" + std::to_string(seed) + " cache_bytes=" + std::to_string(cache_bytes));
  std::printf("write-back cache random sequence: seed %llu, cache %lld bytes\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(cache_bytes));
  auto cached = open_store(cache_bytes);
  auto plain = open_store(0);
  if (cached == nullptr || plain == nullptr) {
    ADD_FAILURE() << "cannot open the stores";
    return {};
  }
  std::map<std::pair<int32_t, std::string>, std::string> model;
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto key = [&] {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "k%03d", pick(200));
    return std::string(buf);
  };
  auto value = [&] { return std::string(static_cast<size_t>(1 + pick(40)), static_cast<char>('a' + pick(26))); };
  std::vector<std::pair<std::shared_ptr<RocksDBStore::Snapshot>, std::map<std::pair<int32_t, std::string>, std::string>>>
      snapshots;
  for (int i = 0; i < ops; ++i) {
    const int32_t cf = pick(2);
    const int op = pick(100);
    if (op < 30) {
      std::string k = key(), v = value();
      cached->put(cf, k, v);
      plain->put(cf, k, v);
      model[{cf, k}] = v;
    } else if (op < 55) {
      std::string k = key();
      auto it = model.find({cf, k});
      std::optional<std::string> want = it == model.end() ? std::nullopt : std::optional(it->second);
      EXPECT_EQ(get(*cached, cf, k), want) << "op " << i;
      EXPECT_EQ(get(*plain, cf, k), want) << "op " << i;
      if (::testing::Test::HasFailure()) return cached->cache_stats();
    } else if (op < 70) {
      std::string k = key(), v = value();
      cached->merge(cf, k, v);
      plain->merge(cf, k, v);
      model[{cf, k}] += v;
    } else if (op < 82) {
      std::string k = key();
      cached->remove(cf, k);
      plain->remove(cf, k);
      model.erase({cf, k});
    } else if (op < 88) {  // a range read: sees every cached change
      std::string lo = key(), hi = key();
      if (hi < lo) std::swap(lo, hi);
      std::vector<std::pair<std::string, std::string>> want;
      for (auto it = model.lower_bound({cf, lo}); it != model.end() && it->first.first == cf && it->first.second < hi;
           ++it) {
        want.emplace_back(it->first.second, it->second);
      }
      EXPECT_EQ(scan(*cached, cf, lo, hi), want) << "op " << i;
      EXPECT_EQ(scan(*plain, cf, lo, hi), want) << "op " << i;
    } else if (op < 95) {  // a batch: applies after the cached changes, replaces their entries
      RocksDBStore::WriteBatch bc(*cached), bp(*plain);
      for (int j = 0, n = 1 + pick(4); j < n; ++j) {
        std::string k = key(), v = value();
        switch (pick(4)) {
          case 0: bc.put(cf, k, v), bp.put(cf, k, v), model[{cf, k}] = v; break;
          case 1: bc.merge(cf, k, v), bp.merge(cf, k, v), model[{cf, k}] += v; break;
          case 2: bc.remove(cf, k), bp.remove(cf, k), model.erase({cf, k}); break;
          default: {
            std::string lo = key(), hi = key();
            if (hi < lo) std::swap(lo, hi);
            bc.delete_range(cf, lo, hi);
            bp.delete_range(cf, lo, hi);
            for (auto it = model.lower_bound({cf, lo}); it != model.end() && it->first.first == cf &&
                                                        it->first.second < hi;) {
              it = model.erase(it);
            }
          }
        }
      }
      cached->write(bc);
      plain->write(bp);
    } else if (op < 98) {  // a snapshot: checked against the model of its moment at the end
      snapshots.emplace_back(cached->snapshot(), model);
    } else {
      cached->write_back();
      EXPECT_EQ(cached->cache_stats().dirty_entries, 0);
    }
  }
  for (auto& [snap, at] : snapshots) {
    for (int32_t cf : {0, 1}) {
      std::vector<std::pair<std::string, std::string>> want;
      for (const auto& [k, v] : at) {
        if (k.first == cf) want.emplace_back(k.second, v);
      }
      EXPECT_EQ(scan_snapshot(*snap, cf), want);
    }
  }
  const RocksDBStore::CacheStats st = cached->cache_stats();
  EXPECT_TRUE(st.enabled);
  EXPECT_GT(st.hits, 0);
  return st;
}

TEST(RocksDBWriteBackCache, EqualsTheUncachedStoreOnRandomSequences) {
  int64_t small_evictions = 0, small_dirty_evictions = 0, large_evictions = 0;
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const RocksDBStore::CacheStats small = run_random_sequence(seed, 4 * 1024, 4000);  // ~25 entries
    const RocksDBStore::CacheStats large = run_random_sequence(seed, 8 << 20, 4000);   // everything fits
    small_evictions += small.evictions;
    small_dirty_evictions += small.dirty_evictions;
    large_evictions += large.evictions;
  }
  // The sequences exercised what they are for: eviction, also of changes RocksDB had not seen yet.
  EXPECT_GT(small_evictions, 1000);
  EXPECT_GT(small_dirty_evictions, 0);
  EXPECT_EQ(large_evictions, 0);
}

TEST(RocksDBWriteBackCache, ASnapshotIsTheStateAtItsCallIncludingCachedChanges) {
  auto s = open_store(1 << 20);
  ASSERT_NE(s, nullptr);
  s->put(0, "k", "v1");
  s->merge(0, "list", "a");  // uncached: goes to RocksDB as a merge
  ASSERT_EQ(get(*s, 0, "list"), "a");
  s->merge(0, "list", "b");  // cached now: appended in memory
  s->remove(1, "gone");
  EXPECT_GT(s->cache_stats().dirty_entries, 0);
  auto snap = s->snapshot();
  EXPECT_EQ(s->cache_stats().dirty_entries, 0);
  s->put(0, "k", "v2");
  s->merge(0, "list", "c");
  s->put(1, "gone", "back");
  using KV = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(scan_snapshot(*snap, 0), (KV{{"k", "v1"}, {"list", "ab"}}));
  EXPECT_EQ(scan_snapshot(*snap, 1), KV{});
  EXPECT_EQ(get(*s, 0, "k"), "v2");
  EXPECT_EQ(get(*s, 0, "list"), "abc");
  EXPECT_EQ(get(*s, 1, "gone"), "back");
}

TEST(RocksDBWriteBackCache, StaysWithinItsBudgetUnderMemoryPressure) {
  const int64_t budget = 64 * 1024;
  auto s = open_store(budget);
  ASSERT_NE(s, nullptr);
  const std::string v(100, 'x');
  for (int i = 0; i < 10'000; ++i) {
    s->put(0, "key-" + std::to_string(i), v + std::to_string(i));
    ASSERT_LE(s->cache_stats().size_bytes, budget);
  }
  const RocksDBStore::CacheStats st = s->cache_stats();
  EXPECT_GT(st.evictions, 9'000);
  EXPECT_EQ(st.dirty_evictions, st.evictions);  // every evicted entry was a change RocksDB had not seen
  EXPECT_LE(st.entries * 128, budget);
  for (int i = 0; i < 10'000; i += 7) {
    ASSERT_EQ(get(*s, 0, "key-" + std::to_string(i)), v + std::to_string(i)) << i;
  }
  EXPECT_LE(s->cache_stats().size_bytes, budget);
}

TEST(RocksDBWriteBackCache, AHotKeyReachesRocksDBOnlyWhenWrittenBack) {
  auto s = open_store(1 << 20);
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 1000; ++i) {
    std::string_view cur;
    int64_t n = s->get(0, "hot", &cur) ? std::stoll(std::string(cur)) : 0;
    s->put(0, "hot", std::to_string(n + 1));
  }
  const RocksDBStore::CacheStats st = s->cache_stats();
  EXPECT_EQ(st.misses, 1);
  EXPECT_EQ(st.hits, 999);
  EXPECT_EQ(st.dirty_entries, 1);
  EXPECT_EQ(s->estimate_num_keys(), 0);  // RocksDB's memtable has seen nothing yet
  s->write_back();
  EXPECT_EQ(s->estimate_num_keys(), 1);
  EXPECT_EQ(s->cache_stats().dirty_entries, 0);
  EXPECT_EQ(get(*s, 0, "hot"), "1000");
}

TEST(RocksDBWriteBackCache, ABatchMergesAfterTheCachedValueAndReplacesIt) {
  auto s = open_store(1 << 20);
  ASSERT_NE(s, nullptr);
  s->put(0, "k", "a");  // only in the cache
  RocksDBStore::WriteBatch batch(*s);
  batch.merge(0, "k", "b");
  s->write(batch);
  EXPECT_EQ(get(*s, 0, "k"), "ab");
  s->put(0, "r1", "x");
  s->put(0, "r2", "y");
  RocksDBStore::WriteBatch range(*s);
  range.delete_range(0, "r", "s");
  s->write(range);
  EXPECT_EQ(get(*s, 0, "r1"), std::nullopt);
  EXPECT_EQ(get(*s, 0, "r2"), std::nullopt);
  EXPECT_EQ(get(*s, 0, "k"), "ab");
}

TEST(RocksDBWriteBackCache, OffByDefault) {
  auto s = open_store(0);
  ASSERT_NE(s, nullptr);
  s->put(0, "k", "v");
  EXPECT_FALSE(s->cache_stats().enabled);
  EXPECT_EQ(s->estimate_num_keys(), 1);
}

// Under managed memory (kManagedMemoryShare: the configuration's default) the caches of the process share half the
// budget in equal parts: a cache shrinks to its share when another opens and grows back when it closes.
TEST(WriteBackCachePool, CachesShareHalfTheBudget) {
  const std::string dir = ::testing::TempDir() + "sluice-write-back-pool-test-" + std::to_string(::getpid());
  RocksDBStore::Options o{dir, "pool", RocksDBWriteBackCacheOptions::managed_memory_share()};
  o.memory.fixed_per_tm_bytes = int64_t{1} << 20;
  const int64_t pool = o.memory.fixed_per_tm_bytes / 2;
  auto a = RocksDBStore::open(o);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  RocksDBStore& sa = **a;
  ASSERT_TRUE(sa.column_family("a").is_ok());
  EXPECT_TRUE(sa.cache_stats().enabled);
  EXPECT_EQ(sa.cache_stats().max_size_bytes, pool);
  const std::string value(1000, 'v');
  auto fill = [&](RocksDBStore& s) {
    for (int i = 0; i < 1000; ++i) s.put(0, "k" + std::to_string(i), value);
  };
  fill(sa);
  EXPECT_GT(sa.cache_stats().size_bytes, pool / 2);
  EXPECT_LE(sa.cache_stats().size_bytes, pool);
  {
    auto b = RocksDBStore::open(o);
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    ASSERT_TRUE((*b)->column_family("a").is_ok());
    EXPECT_EQ(sa.cache_stats().max_size_bytes, pool / 2);
    EXPECT_EQ((*b)->cache_stats().max_size_bytes, pool / 2);
    fill(**b);
    sa.put(0, "one more", value);  // a's next write evicts it down to its new share
    EXPECT_LE(sa.cache_stats().size_bytes + (*b)->cache_stats().size_bytes, pool);
  }
  EXPECT_EQ(sa.cache_stats().max_size_bytes, pool);
  for (int i = 0; i < 1000; ++i) {  // nothing lost on the way: evicted changes reached RocksDB
    std::string_view v;
    ASSERT_TRUE(sa.get(0, "k" + std::to_string(i), &v)) << i;
    EXPECT_EQ(v, value);
  }
}

// Off and a fixed size are not drawn from the budget.
TEST(WriteBackCachePool, FixedSizeAndOffAreNotShared) {
  const std::string dir = ::testing::TempDir() + "sluice-write-back-pool-test-" + std::to_string(::getpid());
  RocksDBStore::Options o{dir, "fixed", RocksDBWriteBackCacheOptions::fixed(64 << 10)};
  o.memory.fixed_per_tm_bytes = int64_t{1} << 20;
  auto fixed = RocksDBStore::open(o);
  ASSERT_TRUE(fixed.is_ok()) << fixed.status().to_string();
  EXPECT_EQ((*fixed)->cache_stats().max_size_bytes, 64 << 10);
  o.write_back_cache = {};
  auto off = RocksDBStore::open(o);
  ASSERT_TRUE(off.is_ok()) << off.status().to_string();
  EXPECT_FALSE((*off)->cache_stats().enabled);
}

// A share without a budget to share is cache.max-size's default; a fixed size must be positive.
TEST(WriteBackCachePool, AShareWithoutABudgetIsTheDefaultSizeAndAFixedSizeMustBePositive) {
  const std::string dir = ::testing::TempDir() + "sluice-write-back-pool-test-" + std::to_string(::getpid());
  RocksDBStore::Options o{dir, "unmanaged", RocksDBWriteBackCacheOptions::managed_memory_share()};
  o.memory.managed = false;
  ASSERT_EQ(o.memory.budget_bytes(), 0);
  auto share = RocksDBStore::open(o);
  ASSERT_TRUE(share.is_ok()) << share.status().to_string();
  EXPECT_EQ((*share)->cache_stats().max_size_bytes, int64_t{64} << 20);
  o.write_back_cache = RocksDBWriteBackCacheOptions::fixed(0);
  auto zero = RocksDBStore::open(o);
  ASSERT_FALSE(zero.is_ok());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("state.backend.rocksdb.cache.max-size"), std::string::npos)
      << zero.status().to_string();
}

}  // namespace
}  // namespace sluice
