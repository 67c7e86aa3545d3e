// Window semantics at operator level, on the heap and RocksDB backends (and RocksDB with heap timers): tumbling,
// sliding and session windows with hand-computed results through aggregate, reduce and process; session merging,
// also by a late element that bridges two fired sessions; allowed lateness (re-firing, cleanup, late side output
// and the dropped-records metric); count and purging triggers; a user trigger.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "window_test_harness.h"

namespace sluice::window_testing {
namespace {

using Strings = std::vector<std::string>;

class WindowOperatorTest : public ::testing::TestWithParam<Store> {
 protected:
  ManualClock clock{1'000'000};
};

TEST_P(WindowOperatorTest, TumblingEventTimeWindowsAggregateReduceAndProcessAgree) {
  auto check = [&](auto op) {
    Harness h(GetParam(), std::move(op), &clock);
    h.send(1, 1, 0);
    h.send(1, 2, 9);
    h.send(2, 5, 3);
    h.send(1, 4, 10);  // next window
    h.send(1, 8, -1);  // window [-10, 0)
    h.watermark(8);
    EXPECT_EQ(h.take(), Strings{win(1, -10, 0, 8)});
    h.watermark(9);  // max_timestamp of [0, 10): fires
    EXPECT_EQ(sorted(h.take()), (Strings{win(1, 0, 10, 3), win(2, 0, 10, 5)}));
    h.watermark(100);
    EXPECT_EQ(h.take(), Strings{win(1, 10, 20, 4)});
    EXPECT_EQ(h.op().window_timers().num_event_time_timers(), 0);
  };
  check(aggregate_op(TumblingEventTimeWindows::of(10)));
  check(reduce_op(TumblingEventTimeWindows::of(10)));
  // process() sees every element: the values of [0, 10) are listed.
  Harness h(GetParam(), process_op(TumblingEventTimeWindows::of(10)), &clock);
  h.send(1, 2, 9);
  h.send(1, 1, 0);
  h.send(1, 4, 10);
  h.watermark(1000);
  EXPECT_EQ(h.take(), (Strings{win(1, 0, 10, "1+2"), win(1, 10, 20, "4")}));
}

TEST_P(WindowOperatorTest, TumblingWindowsWithOffset) {
  Harness h(GetParam(), aggregate_op(TumblingEventTimeWindows::of(10, 3)), &clock);
  h.send(1, 1, 2);   // [-7, 3)
  h.send(1, 10, 3);  // [3, 13)
  h.send(1, 100, 12);
  h.watermark(1000);
  EXPECT_EQ(h.take(), (Strings{win(1, -7, 3, 1), win(1, 3, 13, 110)}));
}

TEST_P(WindowOperatorTest, SlidingEventTimeWindows) {
  Harness h(GetParam(), aggregate_op(SlidingEventTimeWindows::of(10, 5)), &clock);
  h.send(1, 1, 1);    // [-5, 5), [0, 10)
  h.send(1, 10, 6);   // [0, 10), [5, 15)
  h.send(1, 100, 12); // [5, 15), [10, 20)
  h.watermark(4);
  EXPECT_EQ(h.take(), Strings{win(1, -5, 5, 1)});
  h.watermark(9);
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 11)});
  h.watermark(100);
  EXPECT_EQ(h.take(), (Strings{win(1, 5, 15, 110), win(1, 10, 20, 100)}));
}

TEST_P(WindowOperatorTest, SlidingWindowsWhoseSlideDoesNotDivideTheSize) {
  Harness h(GetParam(), process_op(SlidingEventTimeWindows::of(10, 4)), &clock);
  h.send(1, 7, 7);  // starts 4, 0 (and -4: [-4, 6) does not hold 7)
  h.watermark(1000);
  EXPECT_EQ(h.take(), (Strings{win(1, 0, 10, "7"), win(1, 4, 14, "7")}));
}

TEST_P(WindowOperatorTest, EventTimeSessionsMerge) {
  Harness h(GetParam(), process_op(EventTimeSessionWindows::with_gap(10)), &clock);
  h.send(1, 1, 1);
  h.send(1, 2, 5);    // merges: [1, 15)
  h.send(2, 7, 3);    // other key: [3, 13)
  h.send(1, 3, 30);   // new session [30, 40)
  h.send(1, 4, 38);   // [30, 48)
  h.send(1, 5, 15);   // touches [1, 15): [1, 25)
  h.watermark(23);
  EXPECT_EQ(h.take(), Strings{win(2, 3, 13, "7")});
  h.watermark(24);
  EXPECT_EQ(h.take(), Strings{win(1, 1, 25, "1+2+5")});
  h.send(1, 6, 29);   // [29, 39) bridges nothing fired: merges into [29, 48)
  h.watermark(100);
  EXPECT_EQ(h.take(), Strings{win(1, 29, 48, "3+4+6")});
  EXPECT_EQ(h.op().window_timers().num_event_time_timers(), 0);
  EXPECT_EQ(h.op().num_late_records_dropped(), 0);
}

TEST_P(WindowOperatorTest, SessionMergingWithIncrementalAggregation) {
  Harness h(GetParam(), aggregate_op(EventTimeSessionWindows::with_gap(10)), &clock);
  h.send(1, 1, 0);
  h.send(1, 2, 20);
  h.send(1, 4, 40);
  h.send(1, 8, 10);  // bridges [0, 10) and [20, 30): [0, 30)
  h.send(1, 16, 30); // bridges [0, 30) and [40, 50): [0, 50)
  h.watermark(48);
  EXPECT_TRUE(h.take().empty());
  h.watermark(49);
  EXPECT_EQ(h.take(), Strings{win(1, 0, 50, 31)});
}

// Two sessions fire; a late element within the allowed lateness bridges them: the merged session fires at once
// with all elements, is cleaned up after the lateness, and a later element for it goes to the side output.
TEST_P(WindowOperatorTest, LateElementBridgesTwoFiredSessions) {
  WindowOperatorConfig cfg{100, kLateTag};
  Harness h(GetParam(), process_op(EventTimeSessionWindows::with_gap(10), EventTimeTrigger{}, cfg), &clock);
  h.send(1, 1, 1);   // [1, 11)
  h.send(1, 18, 18); // [18, 28)
  h.watermark(30);
  EXPECT_EQ(h.take(), (Strings{win(1, 1, 11, "1"), win(1, 18, 28, "18")}));
  h.send(1, 10, 10);  // late by the watermark, within the lateness: [10, 20) bridges both: [1, 28)
  EXPECT_EQ(h.take(), Strings{win(1, 1, 28, "1+10+18")});
  h.watermark(126);   // cleanup of [1, 28) at 27 + 100
  EXPECT_TRUE(h.take().empty());
  EXPECT_EQ(h.op().window_timers().num_event_time_timers(), 1);
  h.watermark(127);
  EXPECT_TRUE(h.take().empty());
  EXPECT_EQ(h.op().window_timers().num_event_time_timers(), 0);
  h.send(1, 20, 15);  // [15, 25): cleanup 24 + 100 <= 127: late
  EXPECT_TRUE(h.take().empty());
  EXPECT_EQ(h.take_late(), (std::vector<Event>{{1, 20}}));
  h.send(1, 30, 30);  // [30, 40) is not late (cleanup 139): a new session
  h.watermark(1000);
  EXPECT_EQ(h.take(), Strings{win(1, 30, 40, "30")});
}

TEST_P(WindowOperatorTest, AllowedLatenessRefiresAndThenSendsToTheSideOutput) {
  WindowOperatorConfig cfg{20, kLateTag};
  Harness h(GetParam(), aggregate_op(TumblingEventTimeWindows::of(10), EventTimeTrigger{}, cfg), &clock);
  h.send(1, 3, 3);
  h.send(1, 5, 5);
  h.watermark(9);
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 8)});
  h.send(1, 7, 7);  // late, within lateness: fires again with everything so far
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 15)});
  h.send(1, 1, 1);
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 16)});
  h.watermark(28);
  EXPECT_TRUE(h.take().empty());
  h.send(1, 100, 2);  // still within: cleanup time is 9 + 20 = 29
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 116)});
  h.watermark(29);  // cleanup: no firing
  EXPECT_TRUE(h.take().empty());
  h.send(1, 1000, 8);
  EXPECT_TRUE(h.take().empty());
  EXPECT_EQ(h.take_late(), (std::vector<Event>{{1, 1000}}));
  EXPECT_EQ(h.op().num_late_records_dropped(), 0);
  EXPECT_EQ(h.op().window_timers().num_event_time_timers(), 0);
}

TEST_P(WindowOperatorTest, LateElementsWithoutSideOutputAreCounted) {
  Harness h(GetParam(), reduce_op(SlidingEventTimeWindows::of(10, 5)), &clock);
  h.send(1, 1, 12);
  h.watermark(14);  // [5, 15) fired and, without lateness, cleaned up
  EXPECT_EQ(h.take(), Strings{win(1, 5, 15, 1)});
  h.send(1, 2, 11);  // [5, 15) late but [10, 20) not: added there, not late
  h.send(1, 4, 9);   // [0, 10) and [5, 15): both late
  h.send(1, 8, 3);
  EXPECT_EQ(h.op().num_late_records_dropped(), 2);
  EXPECT_TRUE(h.take_late().empty());
  h.watermark(100);
  EXPECT_EQ(h.take(), Strings{win(1, 10, 20, 3)});
}

TEST_P(WindowOperatorTest, CountTriggerOnGlobalWindowsKeepsAndPurgingDrops) {
  {
    Harness h(GetParam(), reduce_op(GlobalWindows::create(), CountTrigger::of(2)), &clock);
    for (int64_t v = 1; v <= 5; ++v) h.send(7, v, kNoRecordTimestamp);
    h.send(8, 100, kNoRecordTimestamp);
    h.watermark(std::numeric_limits<int64_t>::max());
    EXPECT_EQ(h.take(), (Strings{"7@global=3", "7@global=10"}));  // 1+2, then 1+2+3+4: the contents are kept
  }
  {
    Harness h(GetParam(), reduce_op(GlobalWindows::create(), purging(CountTrigger::of(2))), &clock);
    for (int64_t v = 1; v <= 5; ++v) h.send(7, v, kNoRecordTimestamp);
    EXPECT_EQ(h.take(), (Strings{"7@global=3", "7@global=7"}));  // 1+2, then 3+4: purged after each firing
  }
}

TEST_P(WindowOperatorTest, CountTriggerCountsAcrossMergedSessions) {
  Harness h(GetParam(), process_op(EventTimeSessionWindows::with_gap(10), CountTrigger::of(3)), &clock);
  h.send(1, 1, 0);
  h.send(1, 2, 20);
  EXPECT_TRUE(h.take().empty());
  h.send(1, 3, 10);  // merges [0, 10), [10, 20), [20, 30): counts 1 + 1 + 1 = 3
  EXPECT_EQ(h.take(), Strings{win(1, 0, 30, "1+2+3")});
  h.send(1, 4, 25);
  h.watermark(1000);  // the count trigger ignores time; the window is cleaned up
  EXPECT_TRUE(h.take().empty());
  h.send(1, 5, 2000);
  h.send(1, 6, 2001);
  h.send(1, 7, 2002);
  EXPECT_EQ(h.take(), Strings{win(1, 2000, 2012, "5+6+7")});
}

TEST_P(WindowOperatorTest, PurgingEventTimeTriggerForgetsFiredContentsWithinLateness) {
  WindowOperatorConfig cfg{50, ""};
  Harness h(GetParam(), aggregate_op(TumblingEventTimeWindows::of(10), purging(EventTimeTrigger{}), cfg), &clock);
  h.send(1, 1, 1);
  h.send(1, 2, 2);
  h.watermark(20);
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 3)});
  h.send(1, 4, 4);
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 4)});
}

// A user trigger: fires when an element's value is negative, and at the end of the window; keeps a per-window
// ValueState of the last value it saw (trigger state namespaced by the window).
struct FireOnNegative final : Trigger<int64_t, Event, TimeWindow> {
  ValueStateDescriptor<int64_t> last{"last-value"};
  TriggerResult on_element(const Event& e, int64_t, const TimeWindow& w, Context& ctx) override {
    ctx.get_partitioned_state(last).update(e.second);
    ctx.register_event_time_timer(w.max_timestamp());
    return e.second < 0 ? TriggerResult::kFireAndPurge : TriggerResult::kContinue;
  }
  TriggerResult on_event_time(int64_t t, const TimeWindow& w, Context& ctx) override {
    return t == w.max_timestamp() && ctx.get_partitioned_state(last).value() ? TriggerResult::kFire
                                                                             : TriggerResult::kContinue;
  }
  TriggerResult on_processing_time(int64_t, const TimeWindow&, Context&) override { return TriggerResult::kContinue; }
  void clear(const TimeWindow& w, Context& ctx) override {
    ctx.get_partitioned_state(last).clear();
    ctx.delete_event_time_timer(w.max_timestamp());
  }
};

TEST_P(WindowOperatorTest, UserTrigger) {
  Harness h(GetParam(), aggregate_op(TumblingEventTimeWindows::of(10), FireOnNegative{}), &clock);
  h.send(1, 5, 1);
  h.send(1, -1, 2);
  EXPECT_EQ(h.take(), Strings{win(1, 0, 10, 4)});
  h.send(1, 7, 3);
  h.send(2, 9, 15);
  h.watermark(100);
  EXPECT_EQ(sorted(h.take()), (Strings{win(1, 0, 10, 7), win(2, 10, 20, 9)}));
}

TEST_P(WindowOperatorTest, EventTimeWindowRejectsRecordsWithoutTimestamp) {
  Harness h(GetParam(), aggregate_op(TumblingEventTimeWindows::of(10)), &clock);
  EXPECT_THROW(h.send(1, 1, kNoRecordTimestamp), OperatorFailure);
}

TEST_P(WindowOperatorTest, ProcessingTimeWindowsFireByTheClock) {
  Harness h(GetParam(), aggregate_op(TumblingProcessingTimeWindows::of(1000)), &clock);
  clock.set_ms(1'000'100);
  h.send(1, 1, kNoRecordTimestamp);
  h.send(2, 2, 5);  // the event timestamp is ignored
  clock.set_ms(1'000'998);
  h.send(1, 3, kNoRecordTimestamp);
  h.fire_processing_time();
  EXPECT_TRUE(h.take().empty());  // the window's timer is at its max_timestamp, 1'000'999
  clock.set_ms(1'001'000);
  h.send(1, 10, kNoRecordTimestamp);  // next window
  h.fire_processing_time();
  EXPECT_EQ(sorted(h.take()), (Strings{win(1, 1'000'000, 1'001'000, 4), win(2, 1'000'000, 1'001'000, 2)}));
  h.watermark(std::numeric_limits<int64_t>::max());  // event time does nothing to processing-time windows
  EXPECT_TRUE(h.take().empty());
  clock.set_ms(1'002'000);
  h.fire_processing_time();
  EXPECT_EQ(h.take(), Strings{win(1, 1'001'000, 1'002'000, 10)});
  EXPECT_EQ(h.op().window_timers().num_processing_time_timers(), 0);
}

TEST_P(WindowOperatorTest, ProcessingTimeSessions) {
  Harness h(GetParam(), process_op(ProcessingTimeSessionWindows::with_gap(100)), &clock);
  clock.set_ms(1'000'000);
  h.send(1, 1, kNoRecordTimestamp);
  clock.set_ms(1'000'050);
  h.send(1, 2, kNoRecordTimestamp);  // [1'000'000, 1'000'150)
  clock.set_ms(1'000'120);
  h.fire_processing_time();
  EXPECT_TRUE(h.take().empty());  // the timer at 1'000'099 belonged to the merged-away window
  clock.set_ms(1'000'149);
  h.fire_processing_time();
  EXPECT_EQ(h.take(), Strings{win(1, 1'000'000, 1'000'150, "1+2")});
}

TEST(WindowAssigners, RejectInvalidArguments) {
  EXPECT_THROW(TumblingEventTimeWindows::of(0), std::invalid_argument);
  EXPECT_THROW(TumblingEventTimeWindows::of(10, 10), std::invalid_argument);
  EXPECT_THROW(SlidingEventTimeWindows::of(10, 0), std::invalid_argument);
  EXPECT_THROW(SlidingProcessingTimeWindows::of(10, 5, -5), std::invalid_argument);
  EXPECT_THROW(EventTimeSessionWindows::with_gap(0), std::invalid_argument);
  EXPECT_THROW(CountTrigger::of(0), std::invalid_argument);
}

TEST(TimeWindowTest, WindowStartFormulaHandlesNegativeTimestampsAndOffsets) {
  EXPECT_EQ(window_start_ms(0, 0, 10), 0);
  EXPECT_EQ(window_start_ms(9, 0, 10), 0);
  EXPECT_EQ(window_start_ms(-1, 0, 10), -10);
  EXPECT_EQ(window_start_ms(-10, 0, 10), -10);
  EXPECT_EQ(window_start_ms(2, 3, 10), -7);
  EXPECT_EQ(window_start_ms(3, 3, 10), 3);
  EXPECT_EQ(window_start_ms(5, -3, 10), -3);
  EXPECT_EQ(window_start_ms(7, -3, 10), 7);
  EXPECT_EQ((TimeWindow{0, 10}.max_timestamp()), 9);
  EXPECT_TRUE((TimeWindow{0, 10}.intersects(TimeWindow{10, 20})));
  EXPECT_FALSE((TimeWindow{0, 10}.intersects(TimeWindow{11, 20})));
  std::vector<uint8_t> bytes;
  serialize_append(TimeWindow{-5, 5}, bytes);
  auto back = deserialize_bytes<TimeWindow>(bytes.data(), bytes.size(), "window");
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(*back, (TimeWindow{-5, 5}));
}

INSTANTIATE_TEST_SUITE_P(Stores, WindowOperatorTest,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

}  // namespace
}  // namespace sluice::window_testing
