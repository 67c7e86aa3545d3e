// Two-input operators without a task: the combined watermark (minimum of both inputs, an idle input holding
// nothing back, never backwards), end of each input, co-map / co-process, and a KeyedCoProcessFunction's keyed
// state and timers shared by both inputs on every store, across a checkpoint and a restore at another
// parallelism.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/tests/two_input_harness.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

using namespace two_input_test;  // NOLINT

struct ToString1 {
  std::string operator()(int64_t&& v) const { return "a" + std::to_string(v); }
};
struct ToString2 {
  std::string operator()(std::string&& v) const { return "b" + v; }
};
using CoMapOp = CoStreamMap<int64_t, std::string, std::string, ToString1, ToString2>;

std::unique_ptr<CoMapOp> co_map() { return std::make_unique<CoMapOp>(ToString1{}, ToString2{}); }

TEST(TwoInputOperator, WatermarkIsTheMinimumOfBothInputsAndNeverGoesBack) {
  ManualClock clock(0);
  TwoInputHarness<CoMapOp> h(co_map(), Store::kHeap, &clock);
  h.watermark1(10);
  EXPECT_TRUE(h.out.watermarks.empty()) << "input 2 has no watermark yet: it holds the operator back";
  h.watermark2(5);
  h.watermark2(20);
  h.watermark1(30);
  h.watermark1(25);  // lower than input 1's last: ignored
  h.watermark2(40);
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{5, 10, 20, 30}));
  EXPECT_EQ(h.op().current_watermark_ms(), 30);
  EXPECT_EQ(h.op().input_watermark_ms(1), 30);
  EXPECT_EQ(h.op().input_watermark_ms(2), 40);
  h.element1(7);
  h.element2("x");
  EXPECT_EQ(h.out.records, (std::vector<std::string>{"a7", "bx"}));
}

TEST(TwoInputOperator, AnIdleInputHoldsNothingBackAndBothIdleIsIdleDownstream) {
  ManualClock clock(0);
  TwoInputHarness<CoMapOp> h(co_map(), Store::kHeap, &clock);
  h.watermark1(100);
  h.watermark2(10);
  h.status2(true);  // input 2 idle: input 1 alone counts
  h.watermark1(150);
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"watermark 10", "watermark 100", "watermark 150"}));
  h.out.clear();
  h.status1(true);  // both idle
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"idle"}));
  h.out.clear();
  // Input 2 comes back with an older watermark: active again, but the watermark does not go back; it moves
  // only once the minimum of the active inputs passes 150.
  h.status2(false);
  h.watermark2(120);
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"active"}));
  h.watermark2(160);
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"active", "watermark 160"}));
  h.status1(false);  // input 1 (at 150) is active again: holds the watermark at 160 until it passes it
  h.watermark2(300);
  h.watermark1(200);
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"active", "watermark 160", "watermark 200"}));
}

// Records the order of ends; both inputs' records go to one output.
class EndRecorder final : public TwoInputStreamOperator<int64_t, int64_t, std::string> {
 public:
  void process_element1(int64_t&& v) override { output_->collect("1:" + std::to_string(v)); }
  void process_element2(int64_t&& v) override { output_->collect("2:" + std::to_string(v)); }
  void end_input_of(int32_t n) override { output_->collect("end " + std::to_string(n)); }
  void end_input() override { output_->collect("end"); }
};

TEST(TwoInputOperator, EachInputEndsThenTheOperator) {
  ManualClock clock(0);
  TwoInputHarness<EndRecorder> h(std::make_unique<EndRecorder>(), Store::kHeap, &clock);
  h.element2(1);
  h.element1(2);
  h.end_input();
  EXPECT_EQ(h.out.records, (std::vector<std::string>{"2:1", "1:2", "end 1", "end 2", "end"}));
}

// CoProcessFunction: the element's timestamp and side outputs from both inputs.
struct Tagger final : CoProcessFunction<int64_t, std::string, std::string> {
  void process_element1(const int64_t& v, ProcessContext& ctx, Collector<std::string>& out) override {
    out.collect("left " + std::to_string(v) + "@" + std::to_string(ctx.timestamp().value_or(-1)));
  }
  void process_element2(const std::string& v, ProcessContext& ctx, Collector<std::string>& out) override {
    if (v == "late") {
      ctx.output(OutputTag<std::string>("late-right"), v);
      return;
    }
    out.collect("right " + v + "@" + std::to_string(ctx.timestamp().value_or(-1)));
  }
};

TEST(TwoInputOperator, CoProcessFunctionSeesTimestampsAndSideOutputs) {
  ManualClock clock(0);
  using Op = CoProcessOperator<int64_t, std::string, std::string, Tagger>;
  TwoInputHarness<Op> h(std::make_unique<Op>(Tagger{}), Store::kHeap, &clock);
  h.element1(1, 100);
  h.element2("x");
  h.element2("late", 5);
  EXPECT_EQ(h.out.records, (std::vector<std::string>{"left 1@100", "right x@-1"}));
  EXPECT_EQ(h.late2.records, (std::vector<std::string>{"late"}));
}

// ---- keyed co-process: a control stream (input 2) enables keys for a data stream (input 1) ----

struct Data {
  int64_t key = 0;
  int64_t value = 0;
};
struct Control {
  int64_t key = 0;
  bool enable = false;
  int64_t until_ms = 0;  // event time after which the key is disabled again (a timer)
};
using Event = std::tuple<int64_t, int64_t, std::string>;  // key, value or time, what

// Enabled keys pass their data; a control record enables (with an event-time timer at until_ms that disables
// the key again and reports how many records passed) or disables a key; a processing-time timer reports too.
struct Gate final : KeyedCoProcessFunction<int64_t, Data, Control, Event> {
  ValueState<bool>* enabled = nullptr;
  ValueState<int64_t>* passed = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedCoProcessFunction::open(ctx);
    enabled = &get_state(ValueStateDescriptor<bool>("enabled"));
    passed = &get_state(ValueStateDescriptor<int64_t>("passed"));
  }
  void process_element1(const Data& d, KeyedProcessContext<int64_t>& ctx, Collector<Event>& out) override {
    if (ctx.current_key() != d.key) throw std::logic_error("wrong current key");
    if (!enabled->value().value_or(false)) return;
    passed->update(passed->value().value_or(0) + 1);
    out.collect({d.key, d.value, "data"});
  }
  void process_element2(const Control& c, KeyedProcessContext<int64_t>& ctx, Collector<Event>&) override {
    if (ctx.current_key() != c.key) throw std::logic_error("wrong current key");
    enabled->update(c.enable);
    if (c.enable) {
      ctx.timer_service().register_event_time_timer(c.until_ms);
      ctx.timer_service().register_processing_time_timer(1'000'000 + c.until_ms);
    }
  }
  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>& ctx, Collector<Event>& out) override {
    if (ctx.time_domain() == TimeDomain::kEventTime) {
      enabled->clear();
      out.collect({ctx.current_key(), ts, "disabled after " + std::to_string(passed->value().value_or(0))});
    } else {
      out.collect({ctx.current_key(), ts, "processing time"});
    }
  }
};
struct DataKey {
  int64_t operator()(const Data& d) const { return d.key; }
};
struct ControlKey {
  int64_t operator()(const Control& c) const { return c.key; }
};
using GateOp = KeyedCoProcessOperator<int64_t, Data, Control, Event, DataKey, ControlKey, Gate>;
std::unique_ptr<GateOp> gate() { return std::make_unique<GateOp>(DataKey{}, ControlKey{}, Gate{}); }

class KeyedCoProcessTest : public ::testing::TestWithParam<Store> {};

TEST_P(KeyedCoProcessTest, StateAndTimersAreSharedByBothInputsPerKey) {
  ManualClock clock(1'000'000);
  TwoInputHarness<GateOp> h(gate(), GetParam(), &clock);
  h.element1({1, 10});  // key 1 not enabled yet
  h.element2({1, true, 50});
  h.element2({2, true, 30});
  h.element1({1, 11});
  h.element1({2, 20});
  h.element1({2, 21});
  h.element1({3, 30});  // never enabled
  EXPECT_EQ(h.out.records, (std::vector<Event>{{1, 11, "data"}, {2, 20, "data"}, {2, 21, "data"}}));
  EXPECT_EQ(h.op().user_timers().num_event_time_timers(), 2);

  // Timers fire on the combined watermark: input 1 alone at 100 is not enough.
  h.out.clear();
  h.watermark1(100);
  EXPECT_TRUE(h.out.records.empty());
  h.watermark2(40);  // combined 40: key 2's timer at 30 fires, stamped with its time, before the watermark
  EXPECT_EQ(h.out.records, (std::vector<Event>{{2, 30, "disabled after 2"}}));
  EXPECT_EQ(h.out.timestamps, (std::vector<std::optional<int64_t>>{30}));
  EXPECT_EQ(h.out.log, (std::vector<std::string>{"record", "watermark 40"}));
  EXPECT_EQ(h.op().user_timers().current_watermark(), 40);
  h.element1({2, 22});  // key 2 disabled again
  EXPECT_EQ(h.out.records.size(), 1u);

  // Input 2 idle: input 1's watermark (100) alone fires key 1's timer at 50.
  h.out.clear();
  h.status2(true);
  EXPECT_EQ(h.out.records, (std::vector<Event>{{1, 50, "disabled after 1"}}));  // (1, 10) came before enabling
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{100}));

  // Processing-time timers of both keys.
  h.out.clear();
  clock.set_ms(1'000'100);
  h.fire_processing_time();
  EXPECT_EQ(h.out.records, (std::vector<Event>{{2, 1'000'030, "processing time"}, {1, 1'000'050, "processing time"}}));
  EXPECT_EQ(h.out.timestamps, (std::vector<std::optional<int64_t>>{std::nullopt, std::nullopt}));
}

TEST_P(KeyedCoProcessTest, StateAndTimersSurviveACheckpointAndARestoreAtParallelismTwo) {
  ManualClock clock(1'000'000);
  std::vector<std::vector<uint8_t>> groups;
  {
    TwoInputHarness<GateOp> h(gate(), GetParam(), &clock);
    for (int64_t k = 0; k < 8; ++k) h.element2({k, true, 100 + k});
    for (int64_t k = 0; k < 8; ++k) h.element1({k, k});
    groups = h.checkpoint(1);
  }
  // Restore into two subtasks: each gets the key groups of its range; together they fire every timer once.
  std::map<int64_t, std::string> fired;
  int64_t data = 0;
  for (int32_t subtask = 0; subtask < 2; ++subtask) {
    OperatorRestoreState restored;
    restored.checkpoint_id = CheckpointId(1);
    const KeyGroupRange range = key_group_range_for_subtask(kMaxParallelism, 2, SubtaskIndex(subtask));
    for (const auto& g : groups) {
      auto hd = peek_key_group_snapshot(g.data(), g.size());
      ASSERT_TRUE(hd.is_ok());
      if (range.contains(hd->key_group)) restored.key_groups.push_back(g);
    }
    TwoInputHarness<GateOp> h(gate(), GetParam() == Store::kHeap ? Store::kRocksDB : Store::kHeap, &clock, subtask, 2,
                              &restored);
    for (int64_t k = 0; k < 8; ++k) {
      if (range.contains(key_group_for_key(k, kMaxParallelism))) h.element1({k, 100 + k});
    }
    h.watermark1(1000);
    h.watermark2(1000);
    for (size_t i = 0; i < h.out.records.size(); ++i) {
      const auto& [k, v, what] = h.out.records[i];
      if (what == "data") {
        ++data;
      } else {
        EXPECT_TRUE(fired.emplace(k, what + "@" + std::to_string(v)).second) << "key " << k << " fired twice";
      }
    }
  }
  EXPECT_EQ(data, 8) << "every key was still enabled after the restore";
  ASSERT_EQ(fired.size(), 8u);
  for (int64_t k = 0; k < 8; ++k) EXPECT_EQ(fired[k], "disabled after 2@" + std::to_string(100 + k));
}

INSTANTIATE_TEST_SUITE_P(Stores, KeyedCoProcessTest,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

}  // namespace
}  // namespace sluice
