// Copy-on-write of one StateMap, single-threaded: a view taken at a version keeps its contents through every
// kind of mutation, including long collision chains (hashes are caller-supplied, so keys can share one) and
// rehashing, and the originals are freed when the version is released.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

#include "sluice/detail/state/heap/state_map.h"
#include "sluice/detail/state/heap/state_versions.h"

namespace sluice {
namespace {

using Map = StateMap<int64_t, VoidNamespace, int64_t>;
using Contents = std::map<int64_t, int64_t>;

const VoidNamespace kNs{};

template <class M>
Contents contents(const M& m) {
  Contents c;
  m.for_each([&](const int64_t& k, const VoidNamespace&, const int64_t& v) {
    EXPECT_TRUE(c.emplace(k, v).second) << "key " << k << " twice";
  });
  return c;
}

// Few distinct hashes: chains of ~n/buckets.. entries whatever the bucket count.
uint64_t colliding_hash(int64_t k) { return static_cast<uint64_t>(k % 5) * 0x1234567ull; }

TEST(StateMapCopyOnWrite, ViewSurvivesEveryMutationInLongChains) {
  StateVersions versions;
  Map m(versions);
  Contents model;
  for (int64_t k = 0; k < 60; ++k) {
    m.put(k, kNs, colliding_hash(k), k * 10);
    model[k] = k * 10;
  }
  const uint64_t s = versions.begin_snapshot();
  const Map::View view = m.view();
  const Contents at_snapshot = model;
  EXPECT_EQ(contents(view), at_snapshot);
  EXPECT_EQ(view.size, 60u);

  std::mt19937_64 rng(99);
  for (int i = 0; i < 3000; ++i) {
    const int64_t k = static_cast<int64_t>(rng() % 200);  // grows to ~200 keys: several rehashes
    const uint64_t h = colliding_hash(k);
    switch (rng() % 5) {
      case 0:
        m.put(k, kNs, h, i);
        model[k] = i;
        break;
      case 1:
        if (int64_t* v = m.find_for_update(k, kNs, h)) {
          *v += 1;
          ++model[k];
        }
        break;
      case 2:
        EXPECT_EQ(m.remove(k, kNs, h), model.erase(k) == 1);
        break;
      case 3: {
        auto taken = m.take(k, kNs, h);
        auto it = model.find(k);
        ASSERT_EQ(taken.has_value(), it != model.end());
        if (taken) {
          EXPECT_EQ(*taken, it->second);
          model.erase(it);
        }
        break;
      }
      default: {
        auto [v, inserted] = m.find_or_insert(k, kNs, h, [] { return int64_t{-1}; });
        EXPECT_EQ(inserted, model.count(k) == 0);
        *v += 2;
        model[k] = inserted ? 1 : model[k] + 2;
        break;
      }
    }
    if (i % 500 == 0) {
      ASSERT_EQ(contents(view), at_snapshot) << "after " << i << " operations";
    }
  }
  EXPECT_EQ(contents(m), model);
  EXPECT_EQ(contents(view), at_snapshot);
  EXPECT_GT(m.bucket_count(), 16u);  // rehashed while the snapshot was live
  EXPECT_GT(versions.retained_objects(), 0u);

  versions.release(s);
  EXPECT_EQ(versions.retained_objects(), 0u);
  EXPECT_EQ(contents(m), model);
  // Without a snapshot nothing is retained.
  for (int64_t k = 0; k < 200; ++k) m.put(k, kNs, colliding_hash(k), k);
  EXPECT_EQ(versions.retained_objects(), 0u);
}

TEST(StateMapCopyOnWrite, TwoVersionsAndClear) {
  StateVersions versions;
  Map m(versions);
  for (int64_t k = 0; k < 100; ++k) m.put(k, kNs, static_cast<uint64_t>(k) * 0x9E3779B97F4A7C15ull, k);
  const uint64_t s1 = versions.begin_snapshot();
  const Map::View v1 = m.view();
  const Contents c1 = contents(m);
  for (int64_t k = 0; k < 100; k += 2) m.put(k, kNs, static_cast<uint64_t>(k) * 0x9E3779B97F4A7C15ull, -k);
  const uint64_t s2 = versions.begin_snapshot();
  const Map::View v2 = m.view();
  const Contents c2 = contents(m);
  EXPECT_NE(c1, c2);
  m.clear();
  for (int64_t k = 500; k < 900; ++k) m.put(k, kNs, static_cast<uint64_t>(k) * 0x9E3779B97F4A7C15ull, k);
  EXPECT_EQ(contents(v1), c1);
  EXPECT_EQ(contents(v2), c2);

  versions.release(s2);  // the newer first: v1 still intact
  EXPECT_EQ(contents(v1), c1);
  EXPECT_GT(versions.retained_objects(), 0u);
  versions.release(s1);
  EXPECT_EQ(versions.retained_objects(), 0u);
  EXPECT_EQ(m.size(), 400u);
}

TEST(StateMapCopyOnWrite, RetireKeepsOnlyWhatALiveSnapshotCanRead) {
  StateVersions versions;
  int destroyed = 0;
  auto destroy = [](void* p) { ++*static_cast<int*>(p); };
  const uint64_t s1 = versions.begin_snapshot();                      // 1
  versions.retire(&destroyed, destroy, /*created_version=*/1, 8);     // made after s1: not needed
  EXPECT_EQ(destroyed, 1);
  versions.retire(&destroyed, destroy, /*created_version=*/0, 8);     // s1 may read it
  EXPECT_EQ(destroyed, 1);
  const uint64_t s2 = versions.begin_snapshot();                      // 2
  versions.retire(&destroyed, destroy, /*created_version=*/1, 8);     // only s2 may read it
  EXPECT_EQ(versions.retained_objects(), 2u);
  EXPECT_EQ(versions.retained_bytes(), 16u);
  EXPECT_EQ(versions.highest_required(), s2);
  versions.release(s2);
  EXPECT_EQ(destroyed, 2);
  EXPECT_EQ(versions.highest_required(), s1);
  versions.release(s2);  // unknown by now: ignored
  versions.release(s1);
  EXPECT_EQ(destroyed, 3);
  EXPECT_EQ(versions.highest_required(), 0u);
  EXPECT_EQ(versions.retained_bytes(), 0u);
}

}  // namespace
}  // namespace sluice
