#include "sluice/metrics/meter_view.h"

#include <atomic>
#include <stdexcept>

#include <gtest/gtest.h>

#include "sluice/metrics/metric_registry.h"

namespace sluice {
namespace {

TEST(RateViewTest, RateSinceCreationUntilTheSpanIsFull) {
  ManualClock clock(1'000);
  double total = 100;  // what was counted before the view existed does not count
  RateView view([&] { return total; }, 60'000, &clock);
  EXPECT_EQ(view.rate_per_second(), 0) << "no time passed";
  clock.advance_ms(2'000);
  total = 300;
  EXPECT_DOUBLE_EQ(view.rate_per_second(), 100);
  clock.advance_ms(8'000);
  total = 1'300;  // 1,200 in 10 s
  EXPECT_DOUBLE_EQ(view.rate_per_second(), 120);
}

TEST(RateViewTest, OnlyTheLastSpanCountsOnceItIsFull) {
  ManualClock clock;
  double total = 0;
  RateView view([&] { return total; }, 10'000, &clock);
  // 1,000 per second for 20 s, read every second, then 10 per second.
  for (int s = 1; s <= 20; ++s) {
    clock.advance_ms(1'000);
    total += 1'000;
    EXPECT_DOUBLE_EQ(view.rate_per_second(), 1'000) << "second " << s;
  }
  for (int s = 1; s <= 10; ++s) {
    clock.advance_ms(1'000);
    total += 10;
    view.rate_per_second();
  }
  EXPECT_DOUBLE_EQ(view.rate_per_second(), 10) << "the 1,000 per second are older than the span";
}

TEST(RateViewTest, RareReadsAverageOverTheTimeBetweenThem) {
  ManualClock clock;
  double total = 0;
  RateView view([&] { return total; }, 60'000, &clock);
  clock.advance_ms(90'000);
  total = 900;  // read only now: the first sample is 90 s old, the rate is over those 90 s
  EXPECT_DOUBLE_EQ(view.rate_per_second(), 10);
  clock.advance_ms(30'000);
  total = 1'500;  // 600 in the 30 s since the last read (the first sample left the span)
  EXPECT_DOUBLE_EQ(view.rate_per_second(), 20);
}

TEST(RateViewTest, AResetTotalRestartsTheView) {
  ManualClock clock;
  double total = 500;
  RateView view([&] { return total; }, 60'000, &clock);
  clock.advance_ms(1'000);
  total = 10;
  EXPECT_EQ(view.rate_per_second(), 0);
  clock.advance_ms(1'000);
  total = 30;
  EXPECT_DOUBLE_EQ(view.rate_per_second(), 20);
}

TEST(RateViewTest, RefusesASpanShorterThanASecond) {
  EXPECT_THROW(RateView([] { return 0.0; }, 999), std::invalid_argument);
}

TEST(RateViewTest, PerSecondGaugeOfACounterIsNamedAsFlinks) {
  ManualClock clock;
  MetricRegistry registry;
  MetricGroup& group = registry.add_job_group("job");
  Counter& records = group.counter("numRecordsIn");
  register_per_second_of_counter(group, "numRecordsIn", &clock);
  records.inc(50);
  clock.advance_ms(5'000);
  EXPECT_DOUBLE_EQ(registry.find("job", "numRecordsInPerSecond").value_or(-1), 10);
}

}  // namespace
}  // namespace sluice
