// The interval join operator against a brute-force nested loop over seeded random inputs: every pair of on-time
// records with equal keys and b.ts - a.ts within the bounds (each bound inclusive or exclusive), each once,
// stamped max(a.ts, b.ts); late records (timestamp < the combined watermark when they arrive) dropped and counted,
// or sent to the late side outputs; and no state left (buffers nor timers) after the final watermark.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/tests/two_input_harness.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

using namespace two_input_test;  // NOLINT

struct Left {
  int64_t id = 0;
  int64_t key = 0;
  SLUICE_FIELDS(Left, id, key)
};
struct Right {
  int64_t id = 0;
  int64_t key = 0;
  SLUICE_FIELDS(Right, id, key)
};
// (left id, right id, left ts, right ts, the pair's timestamp from the context)
using Pair = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;

struct PairUp final : ProcessJoinFunction<Left, Right, Pair> {
  void process_element(const Left& a, const Right& b, ProcessJoinContext& ctx, Collector<Pair>& out) override {
    if (a.key != b.key) throw std::logic_error("joined different keys");
    out.collect({a.id, b.id, ctx.left_timestamp(), ctx.right_timestamp(), ctx.timestamp()});
  }
};
struct LeftKey {
  int64_t operator()(const Left& l) const { return l.key; }
};
struct RightKey {
  int64_t operator()(const Right& r) const { return r.key; }
};
using JoinOp = IntervalJoinOperator<int64_t, Left, Right, Pair, LeftKey, RightKey, PairUp>;

struct Bounds {
  int64_t lower = 0;
  int64_t upper = 0;
  bool lower_exclusive = false;
  bool upper_exclusive = false;
  std::string name() const {
    auto n = [](int64_t v) { return v < 0 ? "m" + std::to_string(-v) : std::to_string(v); };
    return std::string(lower_exclusive ? "Open" : "Closed") + n(lower) + "To" + n(upper) +
           (upper_exclusive ? "Open" : "Closed");
  }
};

std::unique_ptr<JoinOp> join_op(const Bounds& b, bool late_side_outputs) {
  IntervalJoinConfig c;
  c.lower_ms = b.lower;
  c.upper_ms = b.upper;
  c.lower_exclusive = b.lower_exclusive;
  c.upper_exclusive = b.upper_exclusive;
  if (late_side_outputs) {
    c.left_late_data_tag = "late-left";
    c.right_late_data_tag = "late-right";
  }
  return std::make_unique<JoinOp>(LeftKey{}, RightKey{}, PairUp{}, c);
}

struct Rec {
  int64_t id;
  int64_t key;
  int64_t ts;
};

using Param = std::tuple<Store, Bounds, bool /*late side outputs*/>;
class IntervalJoinOracleTest : public ::testing::TestWithParam<Param> {};

TEST_P(IntervalJoinOracleTest, EqualsTheNestedLoopOverOnTimeRecordsAndLeavesNoState) {
  const auto& [store, bounds, side_outputs] = GetParam();
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    ManualClock clock(0);
    TwoInputHarness<JoinOp> h(join_op(bounds, side_outputs), store, &clock);

    // Inputs advance at different paces with jitter; now and then a record far behind (likely late).
    std::vector<Rec> lefts, rights, late_lefts, late_rights;
    int64_t wm[2] = {kMinWatermark, kMinWatermark};
    int64_t combined = kMinWatermark;
    int64_t clock_ms[2] = {1000, 1000};
    for (int64_t i = 0; i < 600; ++i) {
      const uint64_t r = rng() % 100;
      const int side = static_cast<int>(rng() % 2);
      if (r < 85) {
        clock_ms[side] += static_cast<int64_t>(rng() % 4);
        int64_t ts = clock_ms[side] + static_cast<int64_t>(rng() % 30) - 15;
        if (rng() % 20 == 0) ts -= 100;
        const Rec rec{i, static_cast<int64_t>(rng() % 4), ts};
        const bool late = combined != kMinWatermark && ts < combined;
        if (side == 0) {
          (late ? late_lefts : lefts).push_back(rec);
          h.element1(Left{rec.id, rec.key}, ts);
        } else {
          (late ? late_rights : rights).push_back(rec);
          h.element2(Right{rec.id, rec.key}, ts);
        }
      } else {
        const int64_t w = clock_ms[side] - 20 - static_cast<int64_t>(rng() % 20);
        wm[side] = std::max(wm[side], w);
        combined = std::max(combined, std::min(wm[0], wm[1]));
        if (side == 0) {
          h.watermark1(w);
        } else {
          h.watermark2(w);
        }
        ASSERT_EQ(h.op().current_watermark_ms(), combined);
      }
    }
    h.end_input();

    const int64_t lo = bounds.lower + (bounds.lower_exclusive ? 1 : 0);
    const int64_t hi = bounds.upper - (bounds.upper_exclusive ? 1 : 0);
    std::vector<Pair> expected;
    for (const Rec& a : lefts) {
      for (const Rec& b : rights) {
        if (a.key == b.key && b.ts - a.ts >= lo && b.ts - a.ts <= hi) {
          expected.emplace_back(a.id, b.id, a.ts, b.ts, std::max(a.ts, b.ts));
        }
      }
    }
    std::vector<Pair> got = h.out.records;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(h.out.timestamps[i], std::optional<int64_t>(std::get<4>(got[i]))) << "output stamped max(a.ts, b.ts)";
    }
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    EXPECT_GT(expected.size(), bounds.upper - bounds.lower > 0 ? 100u : 20u)
        << "the random input should join a fair number of pairs";
    EXPECT_EQ(got, expected);

    ASSERT_GT(late_lefts.size() + late_rights.size(), 0u) << "the random input should have late records";
    if (side_outputs) {
      EXPECT_EQ(h.op().num_late_records_dropped(), 0);
      ASSERT_EQ(h.late1.records.size(), late_lefts.size());
      ASSERT_EQ(h.late2.records.size(), late_rights.size());
      for (size_t i = 0; i < late_lefts.size(); ++i) EXPECT_EQ(h.late1.records[i].id, late_lefts[i].id);
      for (size_t i = 0; i < late_rights.size(); ++i) EXPECT_EQ(h.late2.records[i].id, late_rights[i].id);
    } else {
      EXPECT_EQ(h.op().num_late_records_dropped(), static_cast<int64_t>(late_lefts.size() + late_rights.size()));
      EXPECT_TRUE(h.late1.records.empty());
    }
    for (int64_t key = 0; key < 4; ++key) {
      EXPECT_EQ(h.op().num_buffered_timestamps(key), 0) << "key " << key << ": buffers left after the final watermark";
    }
    EXPECT_EQ(h.op().num_cleanup_timers(), 0);
    // RocksDB counts entries by estimate (tombstones); the heap backend exactly.
    if (store == Store::kHeap) {
      EXPECT_EQ(h.op().keyed_backend().num_entries(), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    BoundsAndStores, IntervalJoinOracleTest,
    ::testing::Combine(::testing::Values(Store::kHeap, Store::kRocksDB),
                       ::testing::Values(Bounds{-20, 30, false, false}, Bounds{-20, 30, true, true},
                                         Bounds{0, 0, false, false}, Bounds{5, 40, true, false},
                                         Bounds{-40, -5, false, true}, Bounds{-10, 10, true, false}),
                       ::testing::Bool()),
    [](const auto& p) {
      return store_name(std::get<0>(p.param)) + "_" + std::get<1>(p.param).name() +
             (std::get<2>(p.param) ? "_LateToSideOutputs" : "_LateDropped");
    });

// Buffers are cleaned up as the watermark passes what can still join, not only at the end.
TEST(IntervalJoin, BuffersAreCleanedUpByWatermarksAsTheyPass) {
  ManualClock clock(0);
  TwoInputHarness<JoinOp> h(join_op(Bounds{-10, 20, false, false}, false), Store::kHeap, &clock);
  h.element1(Left{1, 7}, 100);   // joins right 90..120; useless once the watermark passes 120
  h.element2(Right{2, 7}, 130);  // joins left 110..140; useless once the watermark passes 140
  EXPECT_EQ(h.op().num_buffered_timestamps(7), 2);
  EXPECT_EQ(h.op().num_cleanup_timers(), 2);
  h.watermark1(120);
  h.watermark2(120);
  h.element2(Right{3, 7}, 120);  // on time (not below the watermark): still joins left 1
  EXPECT_EQ(h.out.records.size(), 1u);
  h.watermark1(121);
  h.watermark2(121);
  h.element2(Right{4, 7}, 121);  // left 1 is gone, and could not have joined anyway
  h.element1(Left{5, 7}, 100);   // late
  EXPECT_EQ(h.op().num_late_records_dropped(), 1);
  EXPECT_EQ(h.op().num_buffered_timestamps(7), 3) << "right 2, 3 and 4";
  h.watermark1(200);
  h.watermark2(200);
  EXPECT_EQ(h.op().num_buffered_timestamps(7), 0);
  EXPECT_EQ(h.op().num_cleanup_timers(), 0);
  EXPECT_EQ(h.op().keyed_backend().num_entries(), 0);
  EXPECT_EQ(h.out.records, (std::vector<Pair>{{1, 3, 100, 120, 120}}));
}

TEST(IntervalJoin, RecordsWithoutTimestampsFailAndEmptyBoundsAreRejected) {
  ManualClock clock(0);
  TwoInputHarness<JoinOp> h(join_op(Bounds{0, 10, false, false}, false), Store::kHeap, &clock);
  EXPECT_THROW(h.element1(Left{1, 1}), OperatorFailure);
  EXPECT_THROW(join_op(Bounds{5, 5, true, false}, false), std::invalid_argument);
  EXPECT_THROW(join_op(Bounds{10, 0, false, false}, false), std::invalid_argument);
}

}  // namespace
}  // namespace sluice
