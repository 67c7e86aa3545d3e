// Window joins and co-groups (windowing/window_join.h) in running jobs, against a brute-force nested loop over the
// same seeded random inputs: tumbling and sliding event-time windows, parallelism 1 and 2, both function shapes
// (lambda and JoinFunction / CoGroupFunction classes).
#include "sluice/windowing/window_join.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "sluice/sluice.h"

namespace sluice {
namespace {

struct Left {
  int64_t key = 0;
  int64_t ts = 0;
  int64_t id = 0;
  SLUICE_FIELDS(Left, key, ts, id)
};
struct Right {
  int64_t key = 0;
  int64_t ts = 0;
  int64_t id = 0;
  std::string tag;  // a string member, so the tagged union carries one
  SLUICE_FIELDS(Right, key, ts, id, tag)
};
using Pair = std::tuple<int64_t, int64_t>;                      // (left id, right id)
using Group = std::tuple<int64_t, int64_t, int64_t, int64_t>;   // (key, left count, right count, id sum)

struct Inputs {
  std::vector<Left> left;
  std::vector<Right> right;
};

Inputs random_inputs(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  Inputs in;
  for (int i = 0; i < n; ++i) {
    in.left.push_back(Left{static_cast<int64_t>(rng() % 7), static_cast<int64_t>(rng() % 1000), i});
    in.right.push_back(Right{static_cast<int64_t>(rng() % 7), static_cast<int64_t>(rng() % 1000), 10'000 + i, "r"});
  }
  return in;
}

// The windows [start, start + size) with start a multiple of slide that hold t.
std::vector<int64_t> window_starts(int64_t t, int64_t size, int64_t slide) {
  std::vector<int64_t> out;
  for (int64_t s = t - (((t % slide) + slide) % slide); s > t - size; s -= slide) out.push_back(s);
  return out;
}

std::vector<Pair> brute_force_join(const Inputs& in, int64_t size, int64_t slide) {
  std::vector<Pair> out;
  for (const Left& a : in.left) {
    for (const Right& b : in.right) {
      if (a.key != b.key) continue;
      auto wa = window_starts(a.ts, size, slide);
      for (int64_t s : window_starts(b.ts, size, slide)) {
        if (std::find(wa.begin(), wa.end(), s) != wa.end()) out.emplace_back(a.id, b.id);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Group> brute_force_co_group(const Inputs& in, int64_t size, int64_t slide) {
  std::vector<Group> out;
  for (int64_t start = -((size + slide - 1) / slide) * slide; start < 1000 + size; start += slide) {
    for (int64_t key = 0; key < 7; ++key) {
      int64_t nl = 0, nr = 0, ids = 0;
      for (const Left& a : in.left) {
        if (a.key == key && a.ts >= start && a.ts < start + size) ++nl, ids += a.id;
      }
      for (const Right& b : in.right) {
        if (b.key == key && b.ts >= start && b.ts < start + size) ++nr, ids += b.id;
      }
      if (nl + nr > 0) out.emplace_back(key, nl, nr, ids);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Watermarks held back further than the whole input spans: nothing is late, every window fires at the end.
template <class T>
DataStream<T> stamped(StreamExecutionEnvironment& env, std::vector<T> v) {
  return env.from_collection(std::move(v))
      .assign_timestamps_and_watermarks(WatermarkStrategy<T>::for_bounded_out_of_orderness(std::chrono::hours(1))
                                            .with_timestamp_assigner([](const T& x) { return x.ts; }));
}

struct PairOf final : JoinFunction<Left, Right, Pair> {
  Pair join(const Left& a, const Right& b) override { return {a.id, b.id}; }
};

struct CountSides final : CoGroupFunction<Left, Right, Group> {
  void co_group(const std::vector<Left>& l, const std::vector<Right>& r, Collector<Group>& out) override {
    int64_t ids = 0;
    for (const auto& a : l) ids += a.id;
    for (const auto& b : r) ids += b.id;
    out.collect(Group{l.empty() ? r.front().key : l.front().key, static_cast<int64_t>(l.size()),
                      static_cast<int64_t>(r.size()), ids});
  }
};

struct Case {
  int64_t size;
  int64_t slide;
  int32_t parallelism;
};

class WindowJoinTest : public ::testing::TestWithParam<Case> {};

template <class Assigner>
std::vector<Pair> run_join(const Inputs& in, Assigner assigner, int32_t parallelism, bool lambda) {
  StreamExecutionEnvironment env;
  env.set_parallelism(parallelism);
  auto joined = stamped(env, in.left).join(stamped(env, in.right))
                    .where([](const Left& a) { return a.key; })
                    .equal_to([](const Right& b) { return b.key; })
                    .window(assigner);
  auto collected = std::make_shared<CollectedRecords<Pair>>();
  if (lambda) {
    joined.apply([](const Left& a, const Right& b) { return Pair{a.id, b.id}; }).sink_to(CollectSink<Pair>(collected));
  } else {
    joined.apply(PairOf{}).sink_to(CollectSink<Pair>(collected));
  }
  auto result = env.execute("window-join-test");
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  auto rows = collected->snapshot();
  std::sort(rows.begin(), rows.end());
  return rows;
}

template <class Assigner>
std::vector<Group> run_co_group(const Inputs& in, Assigner assigner, int32_t parallelism) {
  StreamExecutionEnvironment env;
  env.set_parallelism(parallelism);
  auto collected = std::make_shared<CollectedRecords<Group>>();
  stamped(env, in.left).co_group(stamped(env, in.right))
      .where([](const Left& a) { return a.key; })
      .equal_to([](const Right& b) { return b.key; })
      .window(assigner)
      .apply(CountSides{})
      .sink_to(CollectSink<Group>(collected));
  auto result = env.execute("window-co-group-test");
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  auto rows = collected->snapshot();
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST_P(WindowJoinTest, JoinEqualsNestedLoop) {
  const Case c = GetParam();
  for (uint64_t seed : {1u, 2u}) {
    Inputs in = random_inputs(seed, 150);
    auto expected = brute_force_join(in, c.size, c.slide);
    ASSERT_FALSE(expected.empty());
    if (c.size == c.slide) {
      EXPECT_EQ(run_join(in, TumblingEventTimeWindows::of(c.size), c.parallelism, seed == 1), expected);
    } else {
      EXPECT_EQ(run_join(in, SlidingEventTimeWindows::of(c.size, c.slide), c.parallelism, seed == 1), expected);
    }
  }
}

TEST_P(WindowJoinTest, CoGroupEqualsNestedLoop) {
  const Case c = GetParam();
  Inputs in = random_inputs(3, 150);
  // One side only in some windows: co-group still sees them (a join would not).
  in.right.resize(60);
  auto expected = brute_force_co_group(in, c.size, c.slide);
  if (c.size == c.slide) {
    EXPECT_EQ(run_co_group(in, TumblingEventTimeWindows::of(c.size), c.parallelism), expected);
  } else {
    EXPECT_EQ(run_co_group(in, SlidingEventTimeWindows::of(c.size, c.slide), c.parallelism), expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Windows, WindowJoinTest,
                         ::testing::Values(Case{100, 100, 1}, Case{100, 100, 2}, Case{100, 30, 1}, Case{90, 30, 2}),
                         [](const auto& param_info) {
                           return "size" + std::to_string(param_info.param.size) + "_slide" +
                                  std::to_string(param_info.param.slide) + "_p" + std::to_string(param_info.param.parallelism);
                         });

TEST(WindowJoinTest, KeyWithOneSideOnlyJoinsNothing) {
  Inputs in;
  in.left = {Left{1, 5, 1}, Left{2, 6, 2}};
  in.right = {Right{1, 50, 10, "x"}, Right{3, 7, 11, "y"}, Right{1, 150, 12, "z"}};
  EXPECT_EQ(run_join(in, TumblingEventTimeWindows::of(100), 1, true), (std::vector<Pair>{{1, 10}}));
}

}  // namespace
}  // namespace sluice
