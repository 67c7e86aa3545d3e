// Pane sharing: SlicingWindowOperator gives the same results as WindowOperator with the event-time trigger for
// sliding windows with reduce and aggregate, on random out-of-order input with late elements (within and beyond
// the allowed lateness, to the side output or counted), across a checkpoint and restore, on every store. Also
// checks that each element updates a single pane: the pane path holds fewer state entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "window_test_harness.h"

namespace sluice::window_testing {
namespace {

struct SliceTimed {
  int64_t key;
  int64_t value;
  int64_t ts;
};

struct Result {
  std::vector<std::string> out;
  std::vector<Event> late;
  int64_t dropped = 0;
  bool operator==(const Result&) const = default;
};

// Random events and watermarks: the watermark trails the largest timestamp seen by a random amount, so some
// elements are late by the watermark, some beyond the allowed lateness too. At `restore_at` the operator is
// checkpointed and replaced by a restored one (make() builds each), which first gets the last watermark back.
template <class Make>
Result run(Store store, Make make, uint32_t seed, size_t n, size_t restore_at) {
  std::mt19937 rng(seed);
  // Timestamps rise by 8 per element with up to 250 of disorder.
  std::uniform_int_distribution<int64_t> key(0, 3), value(1, 100), jitter(0, 250), lag(0, 150);
  std::vector<SliceTimed> events;
  for (size_t i = 0; i < n; ++i) events.push_back({key(rng), value(rng), static_cast<int64_t>(i) * 8 + jitter(rng)});
  ManualClock clock(0);
  Result r;
  auto h = std::make_unique<Harness<typename decltype(make())::element_type>>(store, make(), &clock);
  int64_t max_ts = 0, wm = std::numeric_limits<int64_t>::min();
  auto collect = [&](auto& harness) {
    auto out = harness.take();
    r.out.insert(r.out.end(), out.begin(), out.end());
    auto late = harness.take_late();
    r.late.insert(r.late.end(), late.begin(), late.end());
  };
  for (size_t i = 0; i < events.size(); ++i) {
    if (i == restore_at) {
      collect(*h);
      r.dropped += h->op().num_late_records_dropped();
      KeyGroups groups = h->checkpoint(1);
      h.reset();
      h = std::make_unique<Harness<typename decltype(make())::element_type>>(store, make(), &clock, &groups);
      if (wm != std::numeric_limits<int64_t>::min()) h->watermark(wm);
    }
    h->send(events[i].key, events[i].value, events[i].ts);
    max_ts = std::max(max_ts, events[i].ts);
    if (rng() % 4 == 0 && max_ts - lag(rng) > wm) {
      wm = max_ts - lag(rng);
      h->watermark(wm);
    }
  }
  h->watermark(std::numeric_limits<int64_t>::max());
  collect(*h);
  r.dropped += h->op().num_late_records_dropped();
  EXPECT_EQ(h->op().window_timers().num_event_time_timers(), 0);
  std::sort(r.out.begin(), r.out.end());
  std::sort(r.late.begin(), r.late.end());
  return r;
}

template <class Panes>
using SlicingOp = SlicingWindowOperator<int64_t, Event, std::string, KeyOf, Panes>;

auto slicing_aggregate(SlidingEventTimeWindows a, WindowOperatorConfig cfg) {
  using P = AggregatingPanes<Event, int64_t, int64_t, std::string, Describe<TimeWindow>>;
  return std::make_unique<SlicingOp<P>>(KeyOf{}, a, P(std::make_shared<const SumAggregate>(), Describe<TimeWindow>{}), cfg);
}
auto slicing_reduce(SlidingEventTimeWindows a, WindowOperatorConfig cfg) {
  using P = ReducingPanes<Event, std::string, SumValues, DescribeEvent<TimeWindow>>;
  return std::make_unique<SlicingOp<P>>(KeyOf{}, a, P(SumValues{}, DescribeEvent<TimeWindow>{}), cfg);
}

class SlicingWindowTest : public ::testing::TestWithParam<Store> {};

TEST_P(SlicingWindowTest, PanesGiveTheSameResultsAsWindows) {
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes{{100, 20, 0}, {100, 30, 7}, {90, 40, -13}};
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    for (const auto& [size, slide, offset] : shapes) {
      for (int64_t lateness : {0, 60}) {
        for (std::string tag : {std::string(), kLateTag}) {
          SCOPED_TRACE("seed " + std::to_string(seed) + " size " + std::to_string(size) + " slide " +
                       std::to_string(slide) + " offset " + std::to_string(offset) + " lateness " +
                       std::to_string(lateness) + " tag '" + tag + "'");
          const auto a = SlidingEventTimeWindows::of(size, slide, offset);
          const WindowOperatorConfig cfg{lateness, tag};
          const size_t n = 400, restore_at = seed == 1 ? n : 150;  // seed 2 restores in the middle
          const Result windows =
              run(GetParam(), [&] { return aggregate_op(a, EventTimeTrigger{}, cfg); }, seed, n, restore_at);
          ASSERT_GT(windows.out.size(), 50u);
          EXPECT_GT(windows.late.size() + static_cast<size_t>(windows.dropped), 0u) << "no late element: a weak test";
          EXPECT_EQ(run(GetParam(), [&] { return slicing_aggregate(a, cfg); }, seed, n, restore_at), windows);
          EXPECT_EQ(run(GetParam(), [&] { return slicing_reduce(a, cfg); }, seed, n, restore_at), windows);
          EXPECT_EQ(run(GetParam(), [&] { return reduce_op(a, EventTimeTrigger{}, cfg); }, seed, n, restore_at), windows);
        }
      }
    }
  }
}

TEST_P(SlicingWindowTest, EachElementUpdatesOnePane) {
  ManualClock clock(0);
  const auto a = SlidingEventTimeWindows::of(100, 10);
  Harness panes(GetParam(), slicing_aggregate(a, {}), &clock);
  Harness windows(GetParam(), aggregate_op(a), &clock);
  for (int64_t t = 0; t < 50; ++t) {
    panes.send(1, 1, t);
    windows.send(1, 1, t);
  }
  // 50 ms of elements: 5 panes of 10 ms; the per-window path keeps 14 windows ([-90, 10) ... [40, 140)).
  auto entries = [](auto& h) {
    int64_t n = 0;
    for (const auto& g : h.checkpoint(1)) n += static_cast<int64_t>(g.size());
    return n;
  };
  EXPECT_LT(entries(panes), entries(windows));
  panes.watermark(1000);
  windows.watermark(1000);
  EXPECT_EQ(sorted(panes.take()), sorted(windows.take()));
}

INSTANTIATE_TEST_SUITE_P(Stores, SlicingWindowTest,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

}  // namespace
}  // namespace sluice::window_testing
