// State TTL (state_ttl_config.h) on every backend: expiry of each state kind, both update types, both
// visibilities, timestamps through snapshot/restore (also across backends), cleanup in full snapshot, heap
// incremental cleanup, the RocksDB compaction filter, and the restore check when TTL is switched on or off.
// Time is a ManualClock: no test sleeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend_test_util.h"

namespace sluice {
namespace {

constexpr int64_t kTtl = 100;
const KeyGroupRange kRange(0, 127);
constexpr int32_t kMaxP = 128;

struct SumCount {
  int64_t sum = 0;
  int64_t count = 0;
  SLUICE_FIELDS(SumCount, sum, count)
};
struct Sum final : AggregateFunction<int64_t, SumCount, int64_t> {
  SumCount create_accumulator() const override { return {}; }
  void add(const int64_t& v, SumCount& acc) const override {
    acc.sum += v;
    acc.count += 1;
  }
  int64_t get_result(const SumCount& acc) const override { return acc.sum; }
  void merge(SumCount& t, const SumCount& o) const override {
    t.sum += o.sum;
    t.count += o.count;
  }
};

StateTtlConfig ttl_config(StateTtlConfig::UpdateType update = StateTtlConfig::UpdateType::kOnCreateAndWrite,
                          StateTtlConfig::StateVisibility visibility =
                              StateTtlConfig::StateVisibility::kNeverReturnExpired) {
  return StateTtlConfig::new_builder(kTtl).set_update_type(update).set_state_visibility(visibility).build();
}

template <class D>
D with_ttl(D d, const StateTtlConfig& c) {
  d.enable_time_to_live(c);
  return d;
}

class TtlTest : public testing_backends::BackendTest {
 protected:
  KeyedStateBackend<int64_t>& make() {
    auto& b = backend<int64_t>(kRange, kMaxP);
    b.set_ttl_clock(clock_);
    return b;
  }
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'000);
  void at(int64_t offset_ms) { clock_->set_ms(1'000 + offset_ms); }
};

TEST_P(TtlTest, ValueExpiresTtlAfterLastWrite) {
  auto& b = make();
  auto& s = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"), ttl_config()));
  b.set_current_key(1);
  s.update(7);
  at(kTtl - 1);
  EXPECT_EQ(s.value(), 7);  // a read does not refresh with OnCreateAndWrite
  at(kTtl);                 // expired when last_access + ttl <= now
  EXPECT_FALSE(s.value().has_value());
  expect_entries(b, 0);     // removed by the read
  s.update(8);
  at(kTtl + 50);
  s.update(9);  // a write refreshes
  at(kTtl + 50 + kTtl - 1);
  EXPECT_EQ(s.value(), 9);
}

TEST_P(TtlTest, OnReadAndWriteRefreshesOnRead) {
  auto& b = make();
  auto& s = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"),
                                 ttl_config(StateTtlConfig::UpdateType::kOnReadAndWrite)));
  b.set_current_key(1);
  s.update(7);
  at(60);
  EXPECT_EQ(s.value(), 7);
  at(150);  // 60 + 100 > 150
  EXPECT_EQ(s.value(), 7);
  at(250);
  EXPECT_FALSE(s.value().has_value());
}

TEST_P(TtlTest, ReturnExpiredIfNotCleanedUpReturnsItOnce) {
  auto& b = make();
  StateTtlConfig c = StateTtlConfig::new_builder(kTtl)
                         .return_expired_if_not_cleaned_up()
                         .disable_cleanup_in_background()
                         .build();
  auto& s = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"), c));
  auto& l = b.get_list_state(with_ttl(ListStateDescriptor<int64_t>("l"), c));
  b.set_current_key(1);
  s.update(7);
  l.add(1);
  at(kTtl);
  EXPECT_EQ(s.value(), 7);  // expired but still there
  EXPECT_FALSE(s.value().has_value());  // the first read cleaned it up
  EXPECT_EQ(l.get(), std::vector<int64_t>{1});
  EXPECT_TRUE(l.get().empty());
}

TEST_P(TtlTest, ListElementsExpireIndividually) {
  auto& b = make();
  auto& l = b.get_list_state(with_ttl(ListStateDescriptor<int64_t>("l"), ttl_config()));
  b.set_current_key(1);
  l.add(1);
  at(50);
  l.add_all({2, 3});
  at(kTtl);
  EXPECT_EQ(l.get(), (std::vector<int64_t>{2, 3}));
  l.add(4);
  at(kTtl + 50);
  EXPECT_EQ(l.get(), std::vector<int64_t>{4});
  at(2 * kTtl + 50);
  EXPECT_TRUE(l.get().empty());
  expect_entries(b, 0);
  l.update({5, 6});
  at(3 * kTtl + 49);
  EXPECT_EQ(l.get(), (std::vector<int64_t>{5, 6}));
}

TEST_P(TtlTest, ListOnReadAndWriteRefreshesElements) {
  auto& b = make();
  auto& l = b.get_list_state(with_ttl(ListStateDescriptor<int64_t>("l"),
                                      ttl_config(StateTtlConfig::UpdateType::kOnReadAndWrite)));
  b.set_current_key(1);
  l.add(1);
  at(90);
  l.add(2);
  EXPECT_EQ(l.get(), (std::vector<int64_t>{1, 2}));  // refreshes both to 90
  at(180);
  EXPECT_EQ(l.get(), (std::vector<int64_t>{1, 2}));
}

TEST_P(TtlTest, MapEntriesExpireIndividually) {
  auto& b = make();
  auto& m = b.get_map_state(with_ttl(MapStateDescriptor<int64_t, std::string>("m"), ttl_config()));
  b.set_current_key(1);
  m.put(1, "a");
  at(50);
  m.put_all({{2, "b"}, {3, "c"}});
  at(kTtl);
  EXPECT_FALSE(m.get(1).has_value());
  EXPECT_FALSE(m.contains(1));
  EXPECT_TRUE(m.contains(2));
  auto keys = m.keys();
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(m.is_empty());
  at(kTtl + 50);
  EXPECT_TRUE(m.is_empty());
  EXPECT_TRUE(m.entries().empty());
  expect_entries(b, 0);
}

TEST_P(TtlTest, MapOnReadAndWriteRefreshesReadEntries) {
  auto& b = make();
  auto& m = b.get_map_state(with_ttl(MapStateDescriptor<int64_t, int64_t>("m"),
                                     ttl_config(StateTtlConfig::UpdateType::kOnReadAndWrite)));
  b.set_current_key(1);
  m.put(1, 10);
  m.put(2, 20);
  at(80);
  EXPECT_EQ(m.get(1), 10);  // refreshes entry 1 only
  at(150);
  EXPECT_EQ(m.get(1), 10);
  EXPECT_FALSE(m.get(2).has_value());
}

// RocksDB: what the for_each callback writes to the map survives the iteration's own TTL refreshes (they are
// written before the callback sees each chunk), also past the first 128-entry chunk.
TEST_P(TtlTest, MapForEachKeepsTheCallbacksWritesUnderOnReadAndWrite) {
  if (GetParam() != StateBackendKind::kRocksDB) GTEST_SKIP() << "the heap map is not modified while iterated";
  auto& b = make();
  auto& m = b.get_map_state(with_ttl(MapStateDescriptor<int64_t, int64_t>("m"),
                                     ttl_config(StateTtlConfig::UpdateType::kOnReadAndWrite)));
  b.set_current_key(1);
  for (int64_t i = 0; i < 300; ++i) m.put(i, i);
  at(10);
  int64_t visited = 0;
  m.for_each([&](const int64_t& k, const int64_t& v) {
    ++visited;
    m.put(k, v + 1000);
  });
  EXPECT_EQ(visited, 300);
  for (int64_t i = 0; i < 300; ++i) ASSERT_EQ(m.get(i), i + 1000) << i;
}

TEST_P(TtlTest, ReducingAccumulatorExpires) {
  auto& b = make();
  auto& r = b.get_reducing_state(with_ttl(
      ReducingStateDescriptor<int64_t>("r", [](const int64_t& a, const int64_t& x) { return a + x; }), ttl_config()));
  b.set_current_key(1);
  r.add(1);
  at(50);
  r.add(2);  // the add refreshes the accumulator
  at(50 + kTtl - 1);
  EXPECT_EQ(r.get(), 3);
  at(50 + kTtl);
  r.add(5);  // an expired accumulator is not reduced into
  EXPECT_EQ(r.get(), 5);
  at(50 + 2 * kTtl);
  EXPECT_FALSE(r.get().has_value());
}

TEST_P(TtlTest, AggregatingAccumulatorExpires) {
  auto& b = make();
  auto& a = b.get_aggregating_state(with_ttl(
      AggregatingStateDescriptor<int64_t, SumCount, int64_t>("a", std::make_shared<Sum>()), ttl_config()));
  b.set_current_key(1);
  a.add(1);
  a.add(2);
  at(kTtl - 1);
  EXPECT_EQ(a.get(), 3);
  at(kTtl);
  EXPECT_FALSE(a.get().has_value());
  a.add(4);
  EXPECT_EQ(a.get(), 4);
}

TEST_P(TtlTest, MergeNamespacesDropsExpiredSources) {
  auto& b = make();
  auto& r = b.get_internal_state<int64_t>(with_ttl(
      ReducingStateDescriptor<int64_t>("r", [](const int64_t& a, const int64_t& x) { return a + x; }), ttl_config()));
  b.set_current_key(1);
  r.set_current_namespace(1);
  r.add(1);
  at(50);
  r.set_current_namespace(2);
  r.add(2);
  r.set_current_namespace(3);
  r.add(3);
  at(kTtl);  // namespace 1 expired
  r.merge_namespaces(3, {1, 2});
  r.set_current_namespace(3);
  EXPECT_EQ(r.get(), 5);
  at(2 * kTtl - 1);  // the merge stamped the result with its time
  EXPECT_EQ(r.get(), 5);
  r.set_current_namespace(2);
  EXPECT_FALSE(r.get().has_value());
}

TEST_P(TtlTest, StatesWithoutTtlNeverExpire) {
  auto& b = make();
  auto& s = b.get_state(ValueStateDescriptor<int64_t>("plain"));
  auto& off = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("off"),
                                   StateTtlConfig::new_builder(kTtl)
                                       .set_update_type(StateTtlConfig::UpdateType::kDisabled)
                                       .build()));
  b.set_current_key(1);
  s.update(1);
  off.update(2);
  at(1'000'000);
  EXPECT_EQ(s.value(), 1);
  EXPECT_EQ(off.value(), 2);
}

TEST_P(TtlTest, RegisteringTheSameNameWithAndWithoutTtlThrows) {
  auto& b = make();
  (void)b.get_state(ValueStateDescriptor<int64_t>("v"));
  EXPECT_THROW((void)b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"), ttl_config())), StatusError);
}

// fn(kg bytes) for every non-empty key group of b's synchronous snapshot.
std::vector<std::vector<uint8_t>> snapshot_all(const KeyedStateBackend<int64_t>& b) {
  std::vector<std::vector<uint8_t>> out;
  for (KeyGroup kg : b.key_group_range()) {
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(b.snapshot_key_group(kg, &bytes).is_ok());
    out.push_back(std::move(bytes));
  }
  return out;
}

class TtlCrossBackendTest : public testing_backends::CrossBackendTest {
 protected:
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'000);
  void at(int64_t offset_ms) { clock_->set_ms(1'000 + offset_ms); }
};

TEST_P(TtlCrossBackendTest, SnapshotKeepsTimestamps) {
  auto& src = source<int64_t>(kRange, kMaxP);
  src.set_ttl_clock(clock_);
  const auto vd = with_ttl(ValueStateDescriptor<int64_t>("v"), ttl_config());
  const auto ld = with_ttl(ListStateDescriptor<int64_t>("l"), ttl_config());
  const auto md = with_ttl(MapStateDescriptor<int64_t, int64_t>("m"), ttl_config());
  auto& v = src.get_state(vd);
  auto& l = src.get_list_state(ld);
  auto& m = src.get_map_state(md);
  src.set_current_key(1);
  v.update(1);
  l.add(1);
  m.put(1, 1);
  at(50);
  src.set_current_key(2);
  v.update(2);
  src.set_current_key(1);
  l.add(2);
  m.put(2, 2);
  // The asynchronous snapshot, written after the clock moved on (no cleanup in full snapshot configured).
  std::unique_ptr<KeyedStateSnapshot> snap = src.snapshot();
  at(120);
  std::vector<std::vector<uint8_t>> groups;
  for (KeyGroup kg : kRange) {
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(snap->write_key_group(kg, &bytes).is_ok());
    if (!bytes.empty()) groups.push_back(std::move(bytes));
  }
  snap->release();

  auto& dst = target<int64_t>(kRange, kMaxP);
  dst.set_ttl_clock(clock_);
  ASSERT_TRUE(dst.restore_intersecting_key_groups(groups).is_ok());
  auto& v2 = dst.get_state(vd);
  auto& l2 = dst.get_list_state(ld);
  auto& m2 = dst.get_map_state(md);
  dst.set_current_key(1);
  EXPECT_FALSE(v2.value().has_value());  // written at 0
  EXPECT_EQ(l2.get(), std::vector<int64_t>{2});
  EXPECT_FALSE(m2.get(1).has_value());
  EXPECT_EQ(m2.get(2), 2);
  dst.set_current_key(2);
  EXPECT_EQ(v2.value(), 2);  // written at 50
  at(150);
  EXPECT_FALSE(v2.value().has_value());
}

TEST_P(TtlCrossBackendTest, CleanupInFullSnapshotLeavesOutExpiredValues) {
  auto& src = source<int64_t>(kRange, kMaxP);
  src.set_ttl_clock(clock_);
  const StateTtlConfig c = StateTtlConfig::new_builder(kTtl).cleanup_full_snapshot().disable_cleanup_in_background().build();
  const auto vd = with_ttl(ValueStateDescriptor<int64_t>("v"), c);
  const auto ld = with_ttl(ListStateDescriptor<int64_t>("l"), c);
  const auto md = with_ttl(MapStateDescriptor<int64_t, int64_t>("m"), c);
  auto& v = src.get_state(vd);
  auto& l = src.get_list_state(ld);
  auto& m = src.get_map_state(md);
  for (int64_t k = 0; k < 20; ++k) {  // even keys written at 0, odd keys at 50
    at(k % 2 == 0 ? 0 : 50);
    src.set_current_key(k);
    v.update(k);
    l.add(k);
    m.put(k, k);
    m.put(-k - 1, k);  // a second entry, refreshed below for key 0 only
  }
  at(60);
  src.set_current_key(0);
  l.add(100);
  m.put(-1, 100);
  at(kTtl);  // even keys' values expired, except key 0's newer list element and map entry
  EXPECT_EQ(testing_backends::snapshot_entries(src), 10 + 11 + 11);

  auto& dst = target<int64_t>(kRange, kMaxP);
  dst.set_ttl_clock(clock_);
  ASSERT_TRUE(dst.restore_intersecting_key_groups(snapshot_all(src)).is_ok());
  auto& l2 = dst.get_list_state(ld);
  auto& m2 = dst.get_map_state(md);
  (void)dst.get_state(vd);
  EXPECT_EQ(testing_backends::snapshot_entries(dst), 10 + 11 + 11);
  dst.set_current_key(0);
  EXPECT_EQ(l2.get(), std::vector<int64_t>{100});
  EXPECT_EQ(m2.entries(), (std::vector<std::pair<int64_t, int64_t>>{{-1, 100}}));
}

TEST_P(TtlCrossBackendTest, SwitchingTtlOnOrOffFailsTheRestoreNamingTheState) {
  auto& src = source<int64_t>(kRange, kMaxP);
  auto& v = src.get_state(with_ttl(ValueStateDescriptor<int64_t>("counter"), ttl_config()));
  src.set_current_key(1);
  v.update(1);
  const auto groups = snapshot_all(src);

  // Registered first, then restored: restore_key_group reports the mismatch.
  auto& dst = target<int64_t>(kRange, kMaxP);
  (void)dst.get_state(ValueStateDescriptor<int64_t>("counter"));
  Status st = dst.restore_intersecting_key_groups(groups);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("'counter'"), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("time-to-live"), std::string::npos) << st.to_string();

  // Restored first, then registered: the registration throws.
  auto& dst2 = target<int64_t>(kRange, kMaxP);
  ASSERT_TRUE(dst2.restore_intersecting_key_groups(groups).is_ok());
  try {
    (void)dst2.get_state(ValueStateDescriptor<int64_t>("counter"));
    ADD_FAILURE() << "registration without TTL accepted a state snapshotted with TTL";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("time-to-live"), std::string::npos) << e.what();
  }
}

TEST_P(TtlTest, HeapIncrementalCleanupRemovesEntriesOnAccess) {
  if (!is_heap()) GTEST_SKIP() << "incremental cleanup is the heap backend's strategy";
  auto& b = make();
  const StateTtlConfig c = StateTtlConfig::new_builder(kTtl).cleanup_incrementally(10, false).build();
  auto& v = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"), c));
  auto& l = b.get_list_state(with_ttl(ListStateDescriptor<int64_t>("l"), c));
  for (int64_t k = 0; k < 200; ++k) {
    b.set_current_key(k);
    v.update(k);
    l.add(k);
  }
  at(50);
  for (int64_t k = 0; k < 200; k += 2) {
    b.set_current_key(k);
    l.add(-k);  // even keys get a fresh element
  }
  EXPECT_EQ(b.num_entries(), 400);
  at(kTtl);
  b.set_current_key(1000);
  (void)v.value();  // one access checks at least 10 entries of "v"
  const int64_t after_one = b.num_entries();
  EXPECT_LT(after_one, 400);
  EXPECT_GE(after_one, 400 - 200);  // "l" untouched, "v" lost a bounded number
  for (int i = 0; i < 100; ++i) {
    (void)v.value();
    (void)l.get();
  }
  // Every value of "v" is gone; "l" keeps the even keys, each with its fresh element only.
  testing_backends::expect_entry_count(b, 100);
  auto& heap = dynamic_cast<HeapKeyedStateBackend<int64_t>&>(b);
  for (KeyGroup kg : kRange) {
    heap.for_each_ttl_entry(
        with_ttl(ListStateDescriptor<int64_t>("l"), c), kg,
        [](const int64_t& k, const VoidNamespace&, const std::vector<TtlValue<int64_t>>& list) {
          ASSERT_EQ(list.size(), 1u);
          EXPECT_EQ(list[0].value, -k);
        });
  }
}

TEST_P(TtlTest, HeapIncrementalCleanupForEveryRecord) {
  if (!is_heap()) GTEST_SKIP() << "incremental cleanup is the heap backend's strategy";
  auto& b = make();
  const StateTtlConfig c = StateTtlConfig::new_builder(kTtl).cleanup_incrementally(5, true).build();
  auto& v = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"), c));
  for (int64_t k = 0; k < 100; ++k) {
    b.set_current_key(k);
    v.update(k);
  }
  at(kTtl);
  for (int i = 0; i < 200; ++i) b.set_current_key(i);  // no state access: records alone drive the cleanup
  EXPECT_EQ(b.num_entries(), 0);
}

TEST_P(TtlTest, HeapWithoutBackgroundCleanupKeepsUnreadExpiredEntries) {
  if (!is_heap()) GTEST_SKIP() << "checks the heap backend's entry count (exact there; an estimate on RocksDB)";
  auto& b = make();
  auto& v = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"),
                                 StateTtlConfig::new_builder(kTtl).disable_cleanup_in_background().build()));
  for (int64_t k = 0; k < 50; ++k) {
    b.set_current_key(k);
    v.update(k);
  }
  at(kTtl);
  b.set_current_key(1000);
  for (int i = 0; i < 100; ++i) (void)v.value();
  EXPECT_EQ(b.num_entries(), 50);
}

// Keys of a column family in the raw store, with their value sizes.
std::vector<size_t> raw_value_sizes(const RocksDBStore& store, int32_t cf) {
  std::vector<size_t> sizes;
  auto it = store.new_iterator(cf, std::string(1, '\0'), "");
  for (; it->valid(); it->next()) sizes.push_back(it->value().size());
  EXPECT_TRUE(it->status().is_ok());
  return sizes;
}

TEST_P(TtlTest, RocksDBCompactionFilterDropsExpiredValues) {
  if (is_heap()) GTEST_SKIP() << "the compaction filter is the RocksDB backend's strategy";
  auto& b = make();
  auto& rb = dynamic_cast<RocksDBKeyedStateBackend<int64_t>&>(b);
  const StateTtlConfig c = StateTtlConfig::new_builder(kTtl).cleanup_in_rocksdb_compact_filter(3).build();
  auto& v = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("v"), c));                  // cf 0
  auto& l = b.get_list_state(with_ttl(ListStateDescriptor<std::string>("l"), c));         // cf 1
  auto& m = b.get_map_state(with_ttl(MapStateDescriptor<int64_t, int64_t>("m"), c));      // cf 2
  auto& plain = b.get_state(with_ttl(ValueStateDescriptor<int64_t>("plain"),                // cf 3
                                     StateTtlConfig::new_builder(kTtl).disable_cleanup_in_background().build()));
  for (int64_t k = 0; k < 50; ++k) {
    b.set_current_key(k);
    v.update(k);
    plain.update(k);
    l.add("old");
    m.put(1, k);
  }
  ASSERT_TRUE(rb.compact_all().is_ok());  // part of the list in an SST, part in merge operands below
  at(60);
  for (int64_t k = 0; k < 50; k += 2) {
    b.set_current_key(k);
    l.add("new!");
    m.put(2, k);
  }
  at(kTtl + 10);  // everything written at 0 expired; what was written at 60 lives
  ASSERT_TRUE(rb.compact_all().is_ok());
  EXPECT_TRUE(raw_value_sizes(rb.store(), 0).empty());
  EXPECT_EQ(raw_value_sizes(rb.store(), 3).size(), 50u);  // no filter: expired values stay until read
  const std::vector<size_t> lists = raw_value_sizes(rb.store(), 1);
  ASSERT_EQ(lists.size(), 25u);
  for (size_t size : lists) EXPECT_EQ(size, kTtlTimestampBytes + 5);  // only "new!" (length byte + 4)
  EXPECT_EQ(raw_value_sizes(rb.store(), 2).size(), 25u);
  b.set_current_key(2);
  EXPECT_EQ(l.get(), std::vector<std::string>{"new!"});
  EXPECT_EQ(m.entries(), (std::vector<std::pair<int64_t, int64_t>>{{2, 2}}));
}

SLUICE_INSTANTIATE_FOR_BACKENDS(TtlTest);
SLUICE_INSTANTIATE_FOR_BACKEND_PAIRS(TtlCrossBackendTest);

}  // namespace
}  // namespace sluice
