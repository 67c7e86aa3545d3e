// HeapTimerSet (state/heap/heap_timer_set.h) against a std::set model: random adds (many duplicates), removes
// and pops, with hash functions that collide often, so the index's backward-shift deletion and the heap's
// ordering on hash ties are exercised.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "sluice/detail/state/heap/heap_timer_set.h"

namespace sluice {
namespace {

using Set = HeapTimerSet<int64_t, int64_t>;
using Model = std::set<std::tuple<int64_t, uint64_t, int64_t, int64_t>>;  // ts, hash, key, ns

// `hash_bits`: how many distinct hashes keys and namespaces map to (few bits: many collisions).
uint64_t hash_of(int64_t key, int64_t ns, int hash_bits) {
  const uint64_t h = static_cast<uint64_t>(key * 31 + ns) * 0x9E3779B97F4A7C15ULL;
  return hash_bits >= 64 ? h : h >> (64 - hash_bits);
}

void run(uint64_t seed, int hash_bits, int ops) {
  std::mt19937_64 rng(seed);
  Set set;
  Model model;
  for (int i = 0; i < ops; ++i) {
    const int64_t ts = static_cast<int64_t>(rng() % 50);
    const int64_t key = static_cast<int64_t>(rng() % 40);
    const int64_t ns = static_cast<int64_t>(rng() % 3);
    const uint64_t h = hash_of(key, ns, hash_bits);
    switch (rng() % 4) {
      case 0:
      case 1: {
        const bool added = set.add(InternalTimer<int64_t, int64_t>{ts, key, ns}, h);
        ASSERT_EQ(added, model.emplace(ts, h, key, ns).second) << "seed " << seed << " op " << i;
        break;
      }
      case 2: {
        const bool removed = set.remove(InternalTimer<int64_t, int64_t>{ts, key, ns}, h);
        ASSERT_EQ(removed, model.erase({ts, h, key, ns}) == 1) << "seed " << seed << " op " << i;
        break;
      }
      default:
        if (model.empty()) {
          ASSERT_TRUE(set.empty());
          break;
        }
        ASSERT_EQ(set.top_timestamp(), std::get<0>(*model.begin()));
        const auto timer = set.pop();
        const uint64_t th = hash_of(timer.key, timer.ns, hash_bits);
        // Ties on (timestamp, hash) are ordered by serialized bytes: not the model's order; remove what came out.
        ASSERT_EQ(timer.timestamp_ms, std::get<0>(*model.begin())) << "seed " << seed << " op " << i;
        ASSERT_EQ(th, std::get<1>(*model.begin())) << "seed " << seed << " op " << i;
        ASSERT_EQ(model.erase({timer.timestamp_ms, th, timer.key, timer.ns}), 1u);
    }
    ASSERT_EQ(set.size(), model.size());
    // Removed timers' entries are reclaimed lazily, within a bound.
    ASSERT_LE(set.held_entries(), 2 * set.size() + 64) << "seed " << seed << " op " << i;
  }
  // What remains comes out in order, each timer once.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> sorted;
  set.for_each_sorted([&](const InternalTimer<int64_t, int64_t>& t) { sorted.emplace_back(t.timestamp_ms, t.key, t.ns); });
  ASSERT_EQ(sorted.size(), model.size());
  int64_t last_ts = INT64_MIN;
  while (!set.empty()) {
    const auto timer = set.pop();
    EXPECT_GE(timer.timestamp_ms, last_ts);
    last_ts = timer.timestamp_ms;
    EXPECT_EQ(model.erase({timer.timestamp_ms, hash_of(timer.key, timer.ns, hash_bits), timer.key, timer.ns}), 1u);
  }
  EXPECT_TRUE(model.empty());
  EXPECT_EQ(set.held_entries(), 0u);
}

TEST(HeapTimerSet, MatchesAnOrderedSetWithDistinctHashes) {
  for (uint64_t seed = 1; seed <= 20; ++seed) run(seed, 64, 4000);
}

TEST(HeapTimerSet, MatchesAnOrderedSetWhenHashesCollide) {
  for (uint64_t seed = 1; seed <= 20; ++seed) run(seed, 3, 4000);
}

TEST(HeapTimerSet, SortedVisitIsByTimestampThenHash) {
  Set set;
  EXPECT_TRUE(set.add({5, 1, 0}, 9));
  EXPECT_TRUE(set.add({5, 2, 0}, 3));
  EXPECT_TRUE(set.add({1, 3, 0}, 7));
  EXPECT_FALSE(set.add({5, 1, 0}, 9));
  std::vector<int64_t> keys;
  set.for_each_sorted([&](const InternalTimer<int64_t, int64_t>& t) { keys.push_back(t.key); });
  EXPECT_EQ(keys, (std::vector<int64_t>{3, 2, 1}));
  EXPECT_FALSE(set.remove({5, 1, 1}, 9));  // another namespace: not there
  EXPECT_TRUE(set.remove({5, 1, 0}, 9));
  EXPECT_EQ(set.size(), 2u);
}

// Removing most timers of a large set (as session windows and process functions do when they move a timer) keeps
// the heap's memory bounded, and a removed timer added again fires once.
TEST(HeapTimerSet, RemovedTimersAreReclaimedAndCanComeBack) {
  Set set;
  for (int64_t k = 0; k < 10000; ++k) ASSERT_TRUE(set.add({1000 + k, k, 0}, hash_of(k, 0, 64)));
  for (int64_t k = 0; k < 10000; ++k) {
    if (k % 10 != 0) {
      ASSERT_TRUE(set.remove({1000 + k, k, 0}, hash_of(k, 0, 64)));
    }
  }
  EXPECT_EQ(set.size(), 1000u);
  EXPECT_LE(set.held_entries(), 2 * 1000u + 64u);
  EXPECT_FALSE(set.remove({1001, 1, 0}, hash_of(1, 0, 64)));
  ASSERT_TRUE(set.add({1001, 1, 0}, hash_of(1, 0, 64)));  // removed, then added again
  ASSERT_FALSE(set.add({1001, 1, 0}, hash_of(1, 0, 64)));
  std::vector<int64_t> keys;
  while (!set.empty()) keys.push_back(set.pop().key);
  ASSERT_EQ(keys.size(), 1001u);
  EXPECT_EQ(keys[0], 0);
  EXPECT_EQ(keys[1], 1);
  for (size_t i = 2; i < keys.size(); ++i) EXPECT_EQ(keys[i], static_cast<int64_t>(10 * (i - 1)));
  EXPECT_EQ(set.held_entries(), 0u);
}

}  // namespace
}  // namespace sluice
