// Window operators across a snapshot and restore, from each store into each store: window contents, trigger
// state, merging sets and timers come back; windows that fired before the checkpoint never fire again (only their
// cleanup remains), pending ones fire once, and processing-time windows that became due while the job was down
// fire once after the restore.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "window_test_harness.h"

namespace sluice::window_testing {
namespace {

using Strings = std::vector<std::string>;

class WindowRestoreTest : public ::testing::TestWithParam<std::tuple<Store, Store>> {
 protected:
  Store from() const { return std::get<0>(GetParam()); }
  Store to() const { return std::get<1>(GetParam()); }
  ManualClock clock{1'000'000};
};

TEST_P(WindowRestoreTest, EventTimeWindowsFiredBeforeTheCheckpointNeverFireAgain) {
  const WindowOperatorConfig cfg{5, kLateTag};
  KeyGroups groups;
  {
    Harness h(from(), aggregate_op(TumblingEventTimeWindows::of(10), EventTimeTrigger{}, cfg), &clock);
    h.send(1, 1, 1);
    h.send(2, 2, 5);
    h.send(1, 4, 12);
    h.send(3, 8, 15);
    h.watermark(9);
    EXPECT_EQ(sorted(h.take()), (Strings{win(1, 0, 10, 1), win(2, 0, 10, 2)}));
    groups = h.checkpoint(1);
    h.watermark(100);  // after the checkpoint: lost with the failure
    EXPECT_EQ(h.take().size(), 2u);
  }
  Harness r(to(), aggregate_op(TumblingEventTimeWindows::of(10), EventTimeTrigger{}, cfg), &clock, &groups);
  // Timers: cleanup of the fired windows at 14, firing of the pending ones at 19 and their cleanup at 24.
  EXPECT_EQ(r.op().window_timers().num_event_time_timers(), 6);
  r.watermark(9);
  EXPECT_TRUE(r.take().empty());
  r.send(1, 16, 3);  // within the lateness of [0, 10): the restored contents fire with it
  EXPECT_EQ(r.take(), Strings{win(1, 0, 10, 17)});
  r.watermark(100);
  EXPECT_EQ(sorted(r.take()), (Strings{win(1, 10, 20, 4), win(3, 10, 20, 8)}));
  EXPECT_EQ(r.op().window_timers().num_event_time_timers(), 0);
  r.send(2, 1, 9);  // [0, 10) was cleaned up: late
  EXPECT_EQ(r.take_late(), (std::vector<Event>{{2, 1}}));
}

TEST_P(WindowRestoreTest, SessionsMergeAcrossARestore) {
  KeyGroups groups;
  {
    Harness h(from(), process_op(EventTimeSessionWindows::with_gap(10), CountTrigger::of(4)), &clock);
    h.send(1, 1, 0);
    h.send(1, 2, 20);
    h.send(1, 3, 21);  // [20, 31), count 2
    groups = h.checkpoint(1);
  }
  Harness r(to(), process_op(EventTimeSessionWindows::with_gap(10), CountTrigger::of(4)), &clock, &groups);
  r.send(1, 4, 10);  // bridges [0, 10) and [20, 31): counts 1 + 2 + 1 = 4
  EXPECT_EQ(r.take(), Strings{win(1, 0, 31, "1+2+3+4")});
  r.watermark(1000);
  EXPECT_TRUE(r.take().empty());
  EXPECT_EQ(r.op().window_timers().num_event_time_timers(), 0);
}

TEST_P(WindowRestoreTest, DueProcessingTimeWindowsFireOnceAfterARestore) {
  KeyGroups groups;
  clock.set_ms(1'000'100);
  {
    Harness h(from(), aggregate_op(TumblingProcessingTimeWindows::of(1000)), &clock);
    h.send(1, 1, kNoRecordTimestamp);
    h.send(2, 2, kNoRecordTimestamp);
    clock.set_ms(1'001'100);
    h.send(1, 5, kNoRecordTimestamp);
    h.fire_processing_time();
    EXPECT_EQ(sorted(h.take()), (Strings{win(1, 1'000'000, 1'001'000, 1), win(2, 1'000'000, 1'001'000, 2)}));
    groups = h.checkpoint(1);
    clock.set_ms(1'002'500);
    h.fire_processing_time();  // lost with the failure
    EXPECT_EQ(h.take().size(), 1u);
  }
  Harness r(to(), aggregate_op(TumblingProcessingTimeWindows::of(1000)), &clock, &groups);
  r.fire_processing_time();
  EXPECT_EQ(r.take(), Strings{win(1, 1'001'000, 1'002'000, 5)});
  r.fire_processing_time();
  EXPECT_TRUE(r.take().empty());
  EXPECT_EQ(r.op().window_timers().num_processing_time_timers(), 0);
}

INSTANTIATE_TEST_SUITE_P(Stores, WindowRestoreTest,
                         ::testing::Combine(::testing::Values(Store::kHeap, Store::kRocksDB),
                                            ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers)),
                         [](const auto& p) {
                           return store_name(std::get<0>(p.param)) + "To" + store_name(std::get<1>(p.param));
                         });

}  // namespace
}  // namespace sluice::window_testing
