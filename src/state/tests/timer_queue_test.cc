// Timer queues (state/timer_queue.h) on every timer store: the heap backend, RocksDB with timers in RocksDB
// (the default), and RocksDB with timers on the heap (state.backend.rocksdb.timer-service.factory: HEAP).
// Dedupe, order, delete, per-key-group iteration, and snapshot/restore (across stores and parallelisms).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backend_test_util.h"
#include "sluice/state/keyed_state_backend.h"

namespace sluice {
namespace {

enum class TimerStore { kHeap, kRocksDB, kRocksDBHeapTimers };

std::string store_name(TimerStore s) {
  switch (s) {
    case TimerStore::kHeap:
      return "HashMap";
    case TimerStore::kRocksDB:
      return "RocksDB";
    case TimerStore::kRocksDBHeapTimers:
      return "RocksDBHeapTimers";
  }
  return "?";
}

template <class K>
std::unique_ptr<KeyedStateBackend<K>> make(TimerStore s, KeyGroupRange range, int32_t max_parallelism) {
  RocksDBStateBackendOptions o = testing_backends::test_rocksdb_options();
  if (s == TimerStore::kRocksDBHeapTimers) o.timer_service_factory = RocksDBTimerServiceFactory::kHeap;
  auto b = make_keyed_state_backend<K>(s == TimerStore::kHeap ? StateBackendKind::kHashMap : StateBackendKind::kRocksDB,
                                       range, max_parallelism, o);
  if (!b.is_ok()) throw std::runtime_error(b.status().to_string());
  return std::move(b).value();
}

using Timer = std::tuple<int64_t, std::string, int64_t>;  // timestamp, key, namespace

template <class K, class N>
void add(KeyedStateBackend<K>& b, InternalTimerQueue<K, N>& q, const K& key, const N& ns, int64_t ts) {
  b.set_current_key(key);
  q.add(b.current_key_context(), ns, ts);
}

// Polls everything up to max_ts.
std::vector<Timer> drain(InternalTimerQueue<std::string, int64_t>& q, int64_t max_ts = INT64_MAX) {
  std::vector<Timer> out;
  while (auto t = q.poll_until(max_ts)) out.emplace_back(t->timestamp_ms, t->key, t->ns);
  return out;
}

std::vector<int64_t> timestamps(const std::vector<Timer>& ts) {
  std::vector<int64_t> out;
  for (const auto& t : ts) out.push_back(std::get<0>(t));
  return out;
}

class TimerQueueTest : public ::testing::TestWithParam<TimerStore> {};

TEST_P(TimerQueueTest, FiresInTimestampOrderOncePerKeyNamespaceAndTimestamp) {
  auto b = make<std::string>(GetParam(), KeyGroupRange(0, 127), 128);
  auto& q = b->get_timer_queue<int64_t>("timers");
  std::multiset<Timer> expected;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::string key = "k" + std::to_string(rng() % 50);
    const auto ns = static_cast<int64_t>(rng() % 3);
    const auto ts = static_cast<int64_t>(rng() % 400) - 100;  // negative timestamps too
    add(*b, q, key, ns, ts);
    expected.insert({ts, key, ns});
  }
  std::set<Timer> unique(expected.begin(), expected.end());
  EXPECT_EQ(q.num_timers(), static_cast<int64_t>(unique.size()));
  EXPECT_EQ(q.peek_timestamp(), std::get<0>(*unique.begin()));

  std::vector<Timer> fired = drain(q, 100);
  std::vector<int64_t> ts = timestamps(fired);
  EXPECT_TRUE(std::is_sorted(ts.begin(), ts.end()));
  EXPECT_TRUE(std::all_of(ts.begin(), ts.end(), [](int64_t t) { return t <= 100; }));
  std::vector<Timer> rest = drain(q);
  fired.insert(fired.end(), rest.begin(), rest.end());
  EXPECT_EQ(std::set<Timer>(fired.begin(), fired.end()), unique);
  EXPECT_EQ(fired.size(), unique.size());  // no duplicates
  EXPECT_FALSE(q.peek_timestamp().has_value());
  EXPECT_EQ(q.num_timers(), 0);
}

TEST_P(TimerQueueTest, DeleteRemovesOnlyThatTimer) {
  auto b = make<std::string>(GetParam(), KeyGroupRange(0, 127), 128);
  auto& q = b->get_timer_queue<int64_t>("timers");
  add(*b, q, std::string("a"), int64_t{0}, 10);
  add(*b, q, std::string("a"), int64_t{1}, 10);
  add(*b, q, std::string("a"), int64_t{0}, 20);
  add(*b, q, std::string("b"), int64_t{0}, 5);
  b->set_current_key("a");
  q.remove(b->current_key_context(), 0, 10);
  q.remove(b->current_key_context(), 0, 11);  // absent: nothing happens
  b->set_current_key("b");
  q.remove(b->current_key_context(), 0, 5);
  EXPECT_EQ(q.peek_timestamp(), 10);
  EXPECT_EQ(drain(q), (std::vector<Timer>{{10, "a", 1}, {20, "a", 0}}));
}

TEST_P(TimerQueueTest, ManyTimersInOneKeyGroupComeOutInOrder) {
  // More timers than the RocksDB head cache holds, removed and added while polling.
  auto b = make<std::string>(GetParam(), KeyGroupRange(0, 0), 1);
  auto& q = b->get_timer_queue<int64_t>("timers");
  std::mt19937_64 rng(3);
  std::set<Timer> live;
  for (int i = 0; i < 1500; ++i) {
    const Timer t{static_cast<int64_t>(rng() % 100000), "k" + std::to_string(i % 37), 0};
    add(*b, q, std::get<1>(t), std::get<2>(t), std::get<0>(t));
    live.insert(t);
  }
  int64_t last = INT64_MIN;
  int polled = 0;
  while (auto t = q.poll_until(INT64_MAX)) {
    ASSERT_GE(t->timestamp_ms, last);
    last = t->timestamp_ms;
    ASSERT_EQ(live.erase({t->timestamp_ms, t->key, t->ns}), 1u);
    if (++polled % 10 == 0 && !live.empty()) {  // delete one and add one later than the head
      const Timer victim = *std::prev(live.end());
      b->set_current_key(std::get<1>(victim));
      q.remove(b->current_key_context(), std::get<2>(victim), std::get<0>(victim));
      live.erase(victim);
      const Timer later{last + static_cast<int64_t>(rng() % 1000), "late" + std::to_string(polled), 1};
      add(*b, q, std::get<1>(later), std::get<2>(later), std::get<0>(later));
      live.insert(later);
    }
  }
  EXPECT_TRUE(live.empty());
}

TEST_P(TimerQueueTest, IteratesPerKeyGroup) {
  auto b = make<std::string>(GetParam(), KeyGroupRange(0, 15), 16);
  auto& q = b->get_timer_queue<int64_t>("timers");
  std::map<int32_t, std::set<Timer>> by_group;
  for (int i = 0; i < 300; ++i) {
    const std::string key = "key-" + std::to_string(i);
    add(*b, q, key, int64_t{i % 2}, int64_t{i * 7 % 50});
    by_group[key_group_for_key(key, 16).value()].insert({i * 7 % 50, key, i % 2});
  }
  for (KeyGroup kg : KeyGroupRange(0, 15)) {
    std::set<Timer> seen;
    q.for_each_in_key_group(kg, [&](const InternalTimer<std::string, int64_t>& t) {
      EXPECT_EQ(key_group_for_key(t.key, 16), kg);
      seen.insert({t.timestamp_ms, t.key, t.ns});
    });
    EXPECT_EQ(seen, by_group[kg.value()]) << "key group " << kg.value();
  }
}

TEST_P(TimerQueueTest, ANameHasOneNamespaceTypeAndIsNotAState) {
  auto b = make<std::string>(GetParam(), KeyGroupRange(0, 127), 128);
  auto& q = b->get_timer_queue<int64_t>("timers");
  EXPECT_EQ(&b->get_timer_queue<int64_t>("timers"), &q);
  EXPECT_THROW(b->get_timer_queue<std::string>("timers"), StatusError);
  EXPECT_THROW(b->get_state(ValueStateDescriptor<int64_t>("timers")), StatusError);
  EXPECT_THROW(b->get_timer_queue<int64_t>(""), StatusError);
}

INSTANTIATE_TEST_SUITE_P(Stores, TimerQueueTest,
                         ::testing::Values(TimerStore::kHeap, TimerStore::kRocksDB, TimerStore::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

// ---- snapshot and restore: every pair of stores, at the same and another parallelism ----

class TimerSnapshotTest : public ::testing::TestWithParam<std::tuple<TimerStore, TimerStore>> {
 protected:
  TimerStore source() const { return std::get<0>(GetParam()); }
  TimerStore target() const { return std::get<1>(GetParam()); }
};

std::set<Timer> fill(KeyedStateBackend<std::string>& b, InternalTimerQueue<std::string, int64_t>& q, int n) {
  std::set<Timer> all;
  for (int i = 0; i < n; ++i) {
    const std::string key = "key-" + std::to_string(i % 97);
    const Timer t{int64_t{i * 13 % 1000}, key, int64_t{i % 3}};
    add(b, q, key, std::get<2>(t), std::get<0>(t));
    all.insert(t);
  }
  return all;
}

TEST_P(TimerSnapshotTest, AsyncSnapshotRestoresAtAnotherParallelism) {
  auto src = make<std::string>(source(), KeyGroupRange(0, 31), 32);
  auto& q = src->get_timer_queue<int64_t>("timers");
  src->get_state(ValueStateDescriptor<int64_t>("count"));  // a state beside the timers
  const std::set<Timer> all = fill(*src, q, 500);

  std::unique_ptr<KeyedStateSnapshot> snap = src->snapshot();
  add(*src, q, std::string("after-snapshot"), int64_t{0}, 1);  // not in the snapshot
  drain(q, 100);                                                // neither are these removals
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets;
  ASSERT_TRUE(write_all_key_groups(*snap, &bytes, &offsets).is_ok());
  snap->release();
  std::vector<std::vector<uint8_t>> groups;
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    if (offsets[i] == offsets[i + 1]) continue;
    groups.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                        bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
  }

  // Restore into two subtasks (scale out), registering the queue before and after the restore.
  std::set<Timer> restored;
  for (int sub = 0; sub < 2; ++sub) {
    const KeyGroupRange r = key_group_range_for_subtask(32, 2, SubtaskIndex(sub));
    auto dst = make<std::string>(target(), r, 32);
    InternalTimerQueue<std::string, int64_t>* dq = nullptr;
    if (sub == 0) dq = &dst->get_timer_queue<int64_t>("timers");
    ASSERT_TRUE(dst->restore_intersecting_key_groups(groups).is_ok());
    if (sub == 1) dq = &dst->get_timer_queue<int64_t>("timers");
    std::vector<Timer> got = drain(*dq);
    std::vector<int64_t> ts = timestamps(got);
    EXPECT_TRUE(std::is_sorted(ts.begin(), ts.end()));
    for (const Timer& t : got) {
      EXPECT_TRUE(r.contains(key_group_for_key(std::get<1>(t), 32)));
      EXPECT_TRUE(restored.insert(t).second);
    }
  }
  EXPECT_EQ(restored, all);
}

TEST_P(TimerSnapshotTest, SynchronousKeyGroupSnapshotReplacesTheKeyGroup) {
  auto src = make<std::string>(source(), KeyGroupRange(0, 7), 8);
  auto& q = src->get_timer_queue<int64_t>("timers");
  const std::set<Timer> all = fill(*src, q, 200);
  std::vector<std::vector<uint8_t>> groups;
  for (KeyGroup kg : KeyGroupRange(0, 7)) {
    groups.emplace_back();
    ASSERT_TRUE(src->snapshot_key_group(kg, &groups.back()).is_ok());
  }
  auto dst = make<std::string>(target(), KeyGroupRange(0, 7), 8);
  auto& dq = dst->get_timer_queue<int64_t>("timers");
  add(*dst, dq, std::string("overwritten"), int64_t{0}, 1);  // its key group is replaced by the restore
  ASSERT_TRUE(dst->restore_intersecting_key_groups(groups).is_ok());
  std::vector<Timer> got = drain(dq);
  EXPECT_EQ(std::set<Timer>(got.begin(), got.end()), all);
  EXPECT_EQ(got.size(), all.size());
}

INSTANTIATE_TEST_SUITE_P(
    Stores, TimerSnapshotTest,
    ::testing::Combine(::testing::Values(TimerStore::kHeap, TimerStore::kRocksDB, TimerStore::kRocksDBHeapTimers),
                       ::testing::Values(TimerStore::kHeap, TimerStore::kRocksDB, TimerStore::kRocksDBHeapTimers)),
    [](const auto& p) { return store_name(std::get<0>(p.param)) + "To" + store_name(std::get<1>(p.param)); });

// ---- incremental RocksDB snapshots carry the timers (their column family), with either timer store ----

IncrementalRestoreFile restore_file(const LocalSnapshotFile& f) {
  std::ifstream in(f.path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return IncrementalRestoreFile{f.name, f.path, f.size_bytes, XXH3_64bits(bytes.data(), bytes.size()), "", nullptr};
}

class TimerIncrementalTest : public TimerSnapshotTest {};

TEST_P(TimerIncrementalTest, IncrementalSnapshotRestoresTimersAtAnotherParallelism) {
  auto src = make<std::string>(source(), KeyGroupRange(0, 31), 32);
  auto& q = src->get_timer_queue<int64_t>("timers");
  const std::set<Timer> all = fill(*src, q, 500);
  auto snap = src->snapshot_incremental(CheckpointId(1));
  ASSERT_TRUE(snap.is_ok()) << snap.status().to_string();
  drain(q, 500);  // after the snapshot: not seen by the restore
  IncrementalRestoreHandle h;
  h.range = (*snap)->range;
  h.backend_id = (*snap)->backend_id;
  h.checkpoint_id = (*snap)->checkpoint_id;
  h.state_meta = (*snap)->state_meta;
  h.what = "test handle";
  for (const auto& f : (*snap)->shared_to_upload) h.shared_files.push_back(restore_file(f));
  for (const auto& f : (*snap)->private_files) h.private_files.push_back(restore_file(f));

  std::set<Timer> restored;
  for (int sub = 0; sub < 2; ++sub) {
    const KeyGroupRange r = key_group_range_for_subtask(32, 2, SubtaskIndex(sub));
    auto dst = make<std::string>(target(), r, 32);
    ASSERT_TRUE(dst->restore_incremental({h}).is_ok());
    auto& dq = dst->get_timer_queue<int64_t>("timers");
    std::vector<Timer> got = drain(dq);
    for (const Timer& t : got) EXPECT_TRUE(restored.insert(t).second);
    // The restored timers are checkpointed again (full snapshot of the restored backend).
    EXPECT_EQ(testing_backends::snapshot_entries(*dst), 0);
  }
  (*snap)->release();
  EXPECT_EQ(restored, all);
}

INSTANTIATE_TEST_SUITE_P(
    Stores, TimerIncrementalTest,
    ::testing::Combine(::testing::Values(TimerStore::kRocksDB, TimerStore::kRocksDBHeapTimers),
                       ::testing::Values(TimerStore::kRocksDB, TimerStore::kRocksDBHeapTimers)),
    [](const auto& p) { return store_name(std::get<0>(p.param)) + "To" + store_name(std::get<1>(p.param)); });

}  // namespace
}  // namespace sluice
