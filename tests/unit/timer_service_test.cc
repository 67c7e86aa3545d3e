// Timers at operator level (no runtime): the processing-time service on a ManualClock fired by hand, and a
// KeyedProcessFunction's event-time and processing-time timers through KeyedProcessOperator on every timer
// store (heap; RocksDB; RocksDB with timer-service.factory HEAP), across checkpoints and restores (also at
// another parallelism and into another store), with due timers firing exactly once after a restore.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sluice/sluice.h"

namespace sluice {
namespace {

TEST(QueuedProcessingTimeService, FiresDueCallbacksInTimeOrderByHand) {
  ManualClock clock(1000);
  QueuedProcessingTimeService s(&clock);
  std::vector<int64_t> fired;
  s.register_timer(1500, [&](int64_t t) { fired.push_back(t); });
  s.register_timer(1200, [&](int64_t t) { fired.push_back(t); });
  s.register_timer(900, [&](int64_t t) { fired.push_back(t); });  // already passed: the next opportunity
  EXPECT_EQ(s.wait_bound(std::chrono::seconds(1)), std::chrono::nanoseconds(0));
  EXPECT_EQ(s.fire_due(), 1);
  EXPECT_EQ(fired, (std::vector<int64_t>{900}));
  EXPECT_EQ(s.wait_bound(std::chrono::seconds(1)), std::chrono::milliseconds(200));  // sleep until 1200
  EXPECT_EQ(s.wait_bound(std::chrono::milliseconds(50)), std::chrono::milliseconds(50));
  clock.set_ms(1600);
  // A callback registering one that is due at once: it runs in the same round.
  s.register_timer(1300, [&](int64_t t) {
    fired.push_back(t);
    s.register_timer(1, [&](int64_t u) { fired.push_back(u); });
  });
  EXPECT_EQ(s.fire_due(), 4);
  EXPECT_EQ(fired, (std::vector<int64_t>{900, 1200, 1300, 1, 1500}));
  EXPECT_FALSE(s.has_timers());
}

// Periodic watermark emission's schedule: each run `delay` after the end of the previous one, one run per
// round however far the clock jumped (no burst of catch-up runs).
TEST(QueuedProcessingTimeService, FixedDelayTaskRunsADelayAfterThePreviousRun) {
  ManualClock clock(1000);
  QueuedProcessingTimeService s(&clock);
  int runs = 0;
  s.schedule_with_fixed_delay(200, [&] { ++runs; });
  EXPECT_EQ(s.fire_due(), 0);
  EXPECT_EQ(s.next_timer_ms(), std::optional<int64_t>(1200));
  clock.set_ms(1250);
  EXPECT_EQ(s.fire_due(), 1);
  EXPECT_EQ(s.next_timer_ms(), std::optional<int64_t>(1450));
  clock.set_ms(5000);
  EXPECT_EQ(s.fire_due(), 1);
  EXPECT_EQ(s.next_timer_ms(), std::optional<int64_t>(5200));
  EXPECT_EQ(runs, 2);
}

enum class Store { kHeap, kRocksDB, kRocksDBHeapTimers };
std::string store_name(Store s) {
  return s == Store::kHeap ? "HashMap" : s == Store::kRocksDB ? "RocksDB" : "RocksDBHeapTimers";
}

// (key, timer timestamp, domain, count of the key's records) per firing.
using Fired = std::tuple<int64_t, int64_t, TimeDomain, int64_t>;

// Records what reaches it; with `timestamp` set, also the order of records (with their record timestamp) and
// watermarks.
template <class T>
class VectorOutput final : public Output<T> {
 public:
  void collect(T&& r) override {
    records.push_back(std::move(r));
    if (timestamp != nullptr) {
      log.push_back(timestamp->has_timestamp ? "record@" + std::to_string(timestamp->timestamp_ms) : "record@none");
    }
  }
  void emit_watermark(int64_t watermark_ms) override { log.push_back("watermark " + std::to_string(watermark_ms)); }
  std::vector<T> records;
  const RecordTimestamp* timestamp = nullptr;
  std::vector<std::string> log;
};

// Counts records per key; a record v registers an event-time timer at v and a processing-time timer at
// v + 1'000'000 (the clock starts at 1'000'000); v < 0 deletes the event-time timer at -v. on_timer emits
// (key, timestamp, domain, count) and clears the count on event time.
struct TimerFunction final : KeyedProcessFunction<int64_t, std::pair<int64_t, int64_t>, Fired> {
  ValueState<int64_t>* count = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const std::pair<int64_t, int64_t>& r, KeyedProcessContext<int64_t>& ctx,
                       Collector<Fired>&) override {
    if (r.second < 0) {
      ctx.timer_service().delete_event_time_timer(-r.second);
      return;
    }
    count->update(count->value().value_or(0) + 1);
    ctx.timer_service().register_event_time_timer(r.second);
    ctx.timer_service().register_processing_time_timer(1'000'000 + r.second);
  }
  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>& ctx, Collector<Fired>& out) override {
    out.collect({ctx.current_key(), ts, ctx.time_domain(), count->value().value_or(0)});
    if (ctx.time_domain() == TimeDomain::kEventTime) count->clear();
  }
};

struct KeyOf {
  int64_t operator()(const std::pair<int64_t, int64_t>& r) const { return r.first; }
};
using Op = KeyedProcessOperator<int64_t, std::pair<int64_t, int64_t>, Fired, KeyOf, TimerFunction>;

constexpr int32_t kMaxP = 32;

// One operator subtask with its own processing-time service on a shared ManualClock.
struct Harness {
  Harness(Store store, ManualClock* clock, int32_t subtask, int32_t parallelism,
          const OperatorRestoreState* restored = nullptr)
      : pts(clock), op(KeyOf{}, TimerFunction{}) {
    OperatorSetup s;
    s.info.operator_name = "timers";
    s.info.subtask_index = subtask;
    s.info.parallelism = parallelism;
    s.info.max_parallelism = kMaxP;
    s.clock = clock;
    s.key_group_range = key_group_range_for_subtask(kMaxP, parallelism, SubtaskIndex(subtask));
    s.state_backend_type = store == Store::kHeap ? "hashmap" : "rocksdb";
    s.rocksdb.local_dir = ::testing::TempDir() + "sluice-timer-tests";
    if (store == Store::kRocksDBHeapTimers) s.rocksdb.timer_service_factory = RocksDBTimerServiceFactory::kHeap;
    s.processing_time_service = &pts;
    s.checkpointing = true;
    op.setup(s);
    op.set_output(&out);
    op.initialize_state(restored);
    op.open();
  }
  ~Harness() { op.close(); }
  void send(int64_t key, int64_t v) { op.collect({key, v}); }
  // The keyed state as the checkpoint's key groups.
  std::vector<std::vector<uint8_t>> checkpoint(int64_t id) {
    OperatorSnapshot snap = op.snapshot_state(CheckpointId(id), 0);
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> offsets;
    EXPECT_TRUE(snap.write_keyed(&bytes, &offsets).is_ok());
    std::vector<std::vector<uint8_t>> groups;
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      if (offsets[i] == offsets[i + 1]) continue;
      groups.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                          bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
    }
    return groups;
  }

  QueuedProcessingTimeService pts;
  VectorOutput<Fired> out;
  Op op;
};

class KeyedProcessTimersTest : public ::testing::TestWithParam<Store> {};

TEST_P(KeyedProcessTimersTest, EventAndProcessingTimeTimersFireInOrderWithTheirKey) {
  ManualClock clock(1'000'000);
  Harness h(GetParam(), &clock, 0, 1);
  h.send(1, 30);
  h.send(2, 10);
  h.send(1, 30);  // same key and time: one timer
  h.send(3, 20);
  h.send(3, 40);
  h.send(3, -40);  // deletes key 3's event-time timer at 40
  EXPECT_EQ(h.op.user_timers().num_event_time_timers(), 3);

  h.op.advance_watermark(25);
  EXPECT_EQ(h.out.records, (std::vector<Fired>{{2, 10, TimeDomain::kEventTime, 1}, {3, 20, TimeDomain::kEventTime, 2}}));
  h.op.advance_watermark(20);  // lower: ignored
  h.op.advance_watermark(1000);
  ASSERT_EQ(h.out.records.size(), 3u);
  EXPECT_EQ(h.out.records[2], (Fired{1, 30, TimeDomain::kEventTime, 2}));
  EXPECT_EQ(h.op.user_timers().current_watermark(), 1000);

  h.out.records.clear();
  h.send(4, 5);  // event time 5 is below the watermark: fires at the next watermark
  h.op.advance_watermark(1001);
  EXPECT_EQ(h.out.records, (std::vector<Fired>{{4, 5, TimeDomain::kEventTime, 1}}));

  h.out.records.clear();
  EXPECT_EQ(h.pts.fire_due(), 0);  // processing time stands still
  clock.set_ms(1'000'030);
  h.pts.fire_due();
  // Every processing-time timer up to 1'000'030 fires, in timestamp order (counts were cleared by event time).
  EXPECT_EQ(h.out.records, (std::vector<Fired>{{4, 1'000'005, TimeDomain::kProcessingTime, 0},
                                               {2, 1'000'010, TimeDomain::kProcessingTime, 0},
                                               {3, 1'000'020, TimeDomain::kProcessingTime, 0},
                                               {1, 1'000'030, TimeDomain::kProcessingTime, 0}}));
  EXPECT_EQ(h.op.user_timers().num_processing_time_timers(), 1);  // key 3 at 1'000'040
}

// The runtime's path: a watermark reaching the operator (process_watermark) fires the event-time timers up to
// it, each output stamped with its timer's time, and only then goes downstream; a timer registered at or below
// the watermark waits for the next one (Flink's behaviour).
TEST_P(KeyedProcessTimersTest, ProcessWatermarkFiresTimersThenForwardsTheWatermark) {
  ManualClock clock(1'000'000);
  Harness h(GetParam(), &clock, 0, 1);
  h.out.timestamp = &h.op.record_timestamp();
  h.send(1, 30);
  h.send(2, 10);
  h.send(3, 50);
  h.op.process_watermark(30);
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"record@10", "record@30", "watermark 30"}));
  EXPECT_EQ(h.op.user_timers().current_watermark(), 30);
  EXPECT_EQ(h.op.current_watermark_ms(), 30);
  EXPECT_FALSE(h.op.record_timestamp().has_timestamp) << "the record's own (absent) timestamp is back";

  h.out.log.clear();
  h.send(4, 20);  // at or below the watermark: nothing fires until the next watermark
  h.send(5, 30);
  EXPECT_TRUE(h.out.log.empty());
  h.op.process_watermark(31);
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"record@20", "record@30", "watermark 31"}));
  EXPECT_EQ(std::get<0>(h.out.records[2]), 4);
  EXPECT_EQ(std::get<0>(h.out.records[3]), 5);

  h.out.log.clear();
  clock.set_ms(1'000'010);
  h.pts.fire_due();  // processing-time timers' output carries no timestamp
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"record@none"}));
  h.out.log.clear();
  h.op.end_input();  // the end of event time: the rest fires, nothing is forwarded by end_input itself
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"record@50"}));
}

INSTANTIATE_TEST_SUITE_P(Stores, KeyedProcessTimersTest,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

// Checkpoint on one store at parallelism 1, restore into every store at parallelism 2: the timers come back
// with their key groups, those that became due fire once, and a checkpoint after firing no longer holds them.
class TimerRestoreTest : public ::testing::TestWithParam<std::tuple<Store, Store>> {};

TEST_P(TimerRestoreTest, DueTimersFireExactlyOnceAfterARescaledRestore) {
  ManualClock clock(1'000'000);
  std::vector<std::vector<uint8_t>> groups;
  {
    Harness h(std::get<0>(GetParam()), &clock, 0, 1);
    for (int64_t k = 0; k < 40; ++k) h.send(k, 100 + k);  // event time 100+k, processing time 1'000'100+k
    groups = h.checkpoint(1);
    h.op.advance_watermark(1'000'000'000);  // fires after the checkpoint: lost with the failure
    EXPECT_EQ(h.out.records.size(), 40u);
  }
  clock.set_ms(1'000'120);  // 20 processing-time timers became due while the job was down
  std::multiset<std::tuple<int64_t, int64_t, TimeDomain>> fired;
  for (int32_t sub = 0; sub < 2; ++sub) {
    OperatorRestoreState restored;
    restored.checkpoint_id = CheckpointId(1);
    restored.key_groups = groups;  // every old key group: the backend takes those in its range
    // restore_intersecting_key_groups is what the runtime does; KeyedOperatorBase restores only its own.
    const KeyGroupRange r = key_group_range_for_subtask(kMaxP, 2, SubtaskIndex(sub));
    restored.key_groups.erase(std::remove_if(restored.key_groups.begin(), restored.key_groups.end(),
                                             [&](const std::vector<uint8_t>& g) {
                                               auto hd = peek_key_group_snapshot(g.data(), g.size());
                                               return !hd.is_ok() || !r.contains(hd->key_group);
                                             }),
                              restored.key_groups.end());
    Harness h(std::get<1>(GetParam()), &clock, sub, 2, &restored);
    h.pts.fire_due();
    h.pts.fire_due();  // nothing fires twice
    for (const Fired& f : h.out.records) {
      EXPECT_TRUE(r.contains(key_group_for_key(std::get<0>(f), kMaxP)));
      EXPECT_EQ(std::get<3>(f), 1) << "the restored count is there";
      fired.insert({std::get<0>(f), std::get<1>(f), std::get<2>(f)});
    }
    h.out.records.clear();
    h.op.advance_watermark(139);
    for (const Fired& f : h.out.records) fired.insert({std::get<0>(f), std::get<1>(f), std::get<2>(f)});
  }
  std::multiset<std::tuple<int64_t, int64_t, TimeDomain>> expected;
  for (int64_t k = 0; k <= 20; ++k) expected.insert({k, 1'000'100 + k, TimeDomain::kProcessingTime});
  for (int64_t k = 0; k < 40; ++k) expected.insert({k, 100 + k, TimeDomain::kEventTime});
  EXPECT_EQ(fired, expected);
}

INSTANTIATE_TEST_SUITE_P(
    Stores, TimerRestoreTest,
    ::testing::Combine(::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                       ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers)),
    [](const auto& p) { return store_name(std::get<0>(p.param)) + "To" + store_name(std::get<1>(p.param)); });

}  // namespace
}  // namespace sluice
