// Window results against a straightforward oracle on random input: events with random keys and timestamps are fed
// out of order, the watermark trails the smallest timestamp still to come (so nothing is late), and every window
// of every key must fire exactly once with the sum of its elements. Tumbling (with offsets), sliding (slides that
// do and do not divide the size) and session windows, through aggregate, reduce and process, on every store.
// Prints the seed of a failing case.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "window_test_harness.h"

namespace sluice::window_testing {
namespace {

struct Timed {
  int64_t key;
  int64_t value;
  int64_t ts;
};

std::vector<Timed> random_events(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> key(0, 4), value(1, 1000), ts(-200, 2000);
  std::vector<Timed> events;
  for (int i = 0; i < n; ++i) events.push_back({key(rng), value(rng), ts(rng)});
  return events;
}

// Feeds `events` in their (random) order; every few events the watermark moves to just below the smallest
// timestamp still to come. Returns everything the operator emitted, sorted.
template <class Op>
std::vector<std::string> run(Store store, std::unique_ptr<Op> op, const std::vector<Timed>& events, uint32_t seed) {
  ManualClock clock(0);
  Harness h(store, std::move(op), &clock);
  std::vector<int64_t> min_after(events.size() + 1, std::numeric_limits<int64_t>::max());
  for (size_t i = events.size(); i-- > 0;) min_after[i] = std::min(min_after[i + 1], events[i].ts);
  std::mt19937 rng(seed * 7 + 1);
  for (size_t i = 0; i < events.size(); ++i) {
    h.send(events[i].key, events[i].value, events[i].ts);
    if (rng() % 5 == 0 && min_after[i + 1] != std::numeric_limits<int64_t>::max()) h.watermark(min_after[i + 1] - 1);
  }
  h.watermark(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(h.op().num_late_records_dropped(), 0);
  EXPECT_EQ(h.op().window_timers().num_event_time_timers(), 0);
  return sorted(h.take());
}

std::vector<std::string> oracle_sliding(const std::vector<Timed>& events, int64_t size, int64_t slide, int64_t offset) {
  std::map<std::tuple<int64_t, int64_t>, int64_t> sums;  // (key, start) -> sum
  for (const Timed& e : events) {
    // Every start s = offset + j * slide with s <= ts < s + size, found by scanning (no formula shared with the
    // engine).
    for (int64_t s = offset - slide * (12'000 / slide + 1); s <= e.ts; s += slide) {
      if (e.ts < s + size) sums[{e.key, s}] += e.value;
    }
  }
  std::vector<std::string> out;
  for (const auto& [ks, sum] : sums) out.push_back(win(std::get<0>(ks), std::get<1>(ks), std::get<1>(ks) + size, sum));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> oracle_sessions(const std::vector<Timed>& events, int64_t gap) {
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> per_key;  // key -> (ts, value)
  for (const Timed& e : events) per_key[e.key].push_back({e.ts, e.value});
  std::vector<std::string> out;
  for (auto& [key, list] : per_key) {
    std::sort(list.begin(), list.end());
    int64_t start = list[0].first, end = list[0].first + gap, sum = 0;
    for (const auto& [ts, v] : list) {
      if (ts > end) {  // [ts, ts + gap) does not touch [start, end)
        out.push_back(win(key, start, end, sum));
        start = ts;
        sum = 0;
      }
      end = std::max(end, ts + gap);
      sum += v;
    }
    out.push_back(win(key, start, end, sum));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The list of values of process() becomes their sum, to compare with the oracle.
std::vector<std::string> summed(std::vector<std::string> described) {
  for (std::string& s : described) {
    const size_t eq = s.find('=');
    int64_t sum = 0;
    size_t pos = eq + 1;
    while (pos < s.size()) {
      size_t plus = s.find('+', pos);
      if (plus == std::string::npos) plus = s.size();
      sum += std::stoll(s.substr(pos, plus - pos));
      pos = plus + 1;
    }
    s = s.substr(0, eq + 1) + std::to_string(sum);
  }
  std::sort(described.begin(), described.end());
  return described;
}

class WindowOracleTest : public ::testing::TestWithParam<Store> {};

TEST_P(WindowOracleTest, TumblingAndSlidingWindowsMatchTheOracle) {
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes{
      {100, 100, 0}, {100, 100, 37}, {100, 100, -20}, {100, 50, 0}, {100, 30, 7}, {90, 40, -13}, {10, 3, 0}};
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    const std::vector<Timed> events = random_events(seed, 300);
    for (const auto& [size, slide, offset] : shapes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " size " + std::to_string(size) + " slide " +
                   std::to_string(slide) + " offset " + std::to_string(offset));
      const auto expected = oracle_sliding(events, size, slide, offset);
      ASSERT_GT(expected.size(), 50u);
      if (size == slide) {
        EXPECT_EQ(run(GetParam(), aggregate_op(TumblingEventTimeWindows::of(size, offset)), events, seed), expected);
      }
      const auto assigner = SlidingEventTimeWindows::of(size, slide, offset);
      EXPECT_EQ(run(GetParam(), aggregate_op(assigner), events, seed), expected);
      EXPECT_EQ(run(GetParam(), reduce_op(assigner), events, seed), expected);
      EXPECT_EQ(summed(run(GetParam(), process_op(assigner), events, seed)), expected);
    }
  }
}

TEST_P(WindowOracleTest, SessionWindowsMatchTheOracle) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const std::vector<Timed> events = random_events(seed, 200);
    for (int64_t gap : {5, 20, 60}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " gap " + std::to_string(gap));
      const auto expected = oracle_sessions(events, gap);
      ASSERT_GT(expected.size(), 5u);
      const auto assigner = EventTimeSessionWindows::with_gap(gap);
      EXPECT_EQ(run(GetParam(), aggregate_op(assigner), events, seed), expected);
      EXPECT_EQ(run(GetParam(), reduce_op(assigner), events, seed), expected);
      EXPECT_EQ(summed(run(GetParam(), process_op(assigner), events, seed)), expected);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, WindowOracleTest,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

}  // namespace
}  // namespace sluice::window_testing
