// HeapTimerSet (state/heap/heap_timer_set.h) against a std::set model: random adds (many duplicates), removes
// and pops, with hash functions that collide often, so the index's backward-shift deletion and the heap's
// ordering on hash ties are exercised.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "sluice/state/heap/heap_timer_set.h"

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
        ASSERT_EQ(set.top().timer.timestamp_ms, std::get<0>(*model.begin()));
        const auto node = set.pop();
        // Ties on (timestamp, hash) are ordered by serialized bytes: not the model's order; remove what came out.
        ASSERT_EQ(node.timer.timestamp_ms, std::get<0>(*model.begin())) << "seed " << seed << " op " << i;
        ASSERT_EQ(node.hash, std::get<1>(*model.begin())) << "seed " << seed << " op " << i;
        ASSERT_EQ(model.erase({node.timer.timestamp_ms, node.hash, node.timer.key, node.timer.ns}), 1u);
    }
    ASSERT_EQ(set.size(), model.size());
  }
  // What remains comes out in order, each timer once.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> sorted;
  set.for_each_sorted([&](const InternalTimer<int64_t, int64_t>& t) { sorted.emplace_back(t.timestamp_ms, t.key, t.ns); });
  ASSERT_EQ(sorted.size(), model.size());
  int64_t last_ts = INT64_MIN;
  while (!set.empty()) {
    const auto node = set.pop();
    EXPECT_GE(node.timer.timestamp_ms, last_ts);
    last_ts = node.timer.timestamp_ms;
    EXPECT_EQ(model.erase({node.timer.timestamp_ms, node.hash, node.timer.key, node.timer.ns}), 1u);
  }
  EXPECT_TRUE(model.empty());
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

}  // namespace
}  // namespace sluice
