// The references over generated streams: the generator entry point equals the explicit-list one, and a few
// hundred thousand events satisfy each query's internal invariants (checked here by other means than the
// reference's own code: pane sums, per-window maxima, recounts).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "sluice/connectors/nexmark/generator.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {
namespace {

// 10 K events/s: 300 K events span 30 s of event time, so every kind of window fires several times.
GeneratorConfig slow_config() {
  GeneratorConfig c;
  c.seed = 42;
  c.declared_rate_per_s = 10'000;
  return c;
}
constexpr int64_t kEvents = 300'000;

std::vector<Event> generate(const GeneratorConfig& config, int64_t n) {
  const Generator g(config);
  std::vector<Event> events;
  events.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) events.push_back(g.event_at(i));
  return events;
}

std::vector<Bid> bids_of(const GeneratorConfig& config, int64_t n) {
  const Generator g(config);
  std::vector<Bid> bids;
  for (int64_t i = 0; i < n; ++i) {
    if (g.event_kind(i) == EventKind::kBid) bids.push_back(g.event_at(i).bid());
  }
  return bids;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

TEST(NexmarkReferenceGenerated, GeneratorEntryPointEqualsTheExplicitList) {
  for (const double rate : {10'000.0, 10'000'000.0}) {
    GeneratorConfig c = slow_config();
    c.declared_rate_per_s = rate;
    c.out_of_order_group_size = rate > 1e6 ? 7 : 1;  // the references do not depend on the order
    constexpr int64_t n = 20'000;
    const std::vector<Event> events = generate(c, n);
    EXPECT_EQ(reference_q0(c, n), reference_q0(events));
    EXPECT_EQ(reference_q1(c, n), reference_q1(events));
    EXPECT_EQ(reference_q2(c, n), reference_q2(events));
    EXPECT_EQ(reference_q3(c, n), reference_q3(events));
    EXPECT_EQ(reference_q4(c, n), reference_q4(events));
    EXPECT_EQ(reference_q5(c, n), reference_q5(events));
    EXPECT_EQ(reference_q7(c, n), reference_q7(events));
    EXPECT_EQ(reference_q8(c, n), reference_q8(events));
    EXPECT_EQ(reference_q9(c, n), reference_q9(events));
    EXPECT_EQ(reference_q11(c, n), reference_q11(events));
    EXPECT_EQ(reference_q17(c, n), reference_q17(events));
    EXPECT_EQ(reference_q18(c, n), reference_q18(events));
    EXPECT_EQ(reference_q19(c, n), reference_q19(events));
    std::vector<Event> reversed(events.rbegin(), events.rend());
    EXPECT_EQ(reference_q9(events), reference_q9(reversed));
    EXPECT_EQ(reference_q11(events), reference_q11(reversed));
    EXPECT_EQ(reference_q19(events), reference_q19(reversed));
  }
}

class NexmarkReferenceInvariants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { bids_ = new std::vector<Bid>(bids_of(slow_config(), kEvents)); }
  static void TearDownTestSuite() {
    delete bids_;
    bids_ = nullptr;
  }
  static const std::vector<Bid>& bids() { return *bids_; }
  static std::vector<Bid>* bids_;
};
std::vector<Bid>* NexmarkReferenceInvariants::bids_ = nullptr;

TEST_F(NexmarkReferenceInvariants, StatelessQueriesSeeEveryBid) {
  EXPECT_EQ(static_cast<size_t>(reference_digest_q0({slow_config(), kEvents}).count), bids().size());
  const std::vector<Q1Row> q1 = reference_q1(slow_config(), kEvents);
  ASSERT_EQ(q1.size(), bids().size());
  for (const Q1Row& r : q1) ASSERT_EQ(r.price_milli % kQ1RateMilli, 0) << describe_row(r);
  const std::vector<Q2Row> q2 = reference_q2(slow_config(), kEvents);
  const auto selected = std::count_if(bids().begin(), bids().end(), [](const Bid& b) { return b.auction % 123 == 0; });
  EXPECT_EQ(static_cast<int64_t>(q2.size()), selected);
  EXPECT_GT(q2.size(), 0u);
}

TEST_F(NexmarkReferenceInvariants, Q5MatchesPaneSums) {
  // Count per 2 s pane and auction; a window's count is the sum of its five panes.
  std::map<int64_t, std::map<int64_t, int64_t>> panes;  // pane start -> auction -> bids
  for (const Bid& b : bids()) ++panes[floor_div(b.date_time, kQ5SlideMs) * kQ5SlideMs][b.auction];
  std::map<int64_t, int64_t> window_max;  // window start -> highest count
  const int64_t first = panes.begin()->first - kQ5WindowMs + kQ5SlideMs;
  const int64_t last = panes.rbegin()->first;
  for (int64_t start = first; start <= last; start += kQ5SlideMs) {
    std::map<int64_t, int64_t> sums;
    for (int64_t p = start; p < start + kQ5WindowMs; p += kQ5SlideMs) {
      const auto it = panes.find(p);
      if (it == panes.end()) continue;
      for (const auto& [auction, count] : it->second) sums[auction] += count;
    }
    for (const auto& [auction, count] : sums) window_max[start] = std::max(window_max[start], count);
  }
  const std::vector<Q5Row> q5 = reference_q5(slow_config(), kEvents);
  std::set<int64_t> windows;
  for (const Q5Row& r : q5) {
    ASSERT_EQ(r.window_end_ms - r.window_start_ms, kQ5WindowMs);
    ASSERT_EQ(r.num, window_max.at(r.window_start_ms)) << describe_row(r);
    windows.insert(r.window_start_ms);
  }
  EXPECT_EQ(windows.size(), window_max.size());
  EXPECT_GT(windows.size(), 10u);
}

TEST_F(NexmarkReferenceInvariants, Q7RowsAreTheWindowMaxima) {
  std::map<int64_t, std::pair<int64_t, int64_t>> max;  // window start -> (highest price, bids at it)
  for (const Bid& b : bids()) {
    auto& [price, count] = max[floor_div(b.date_time, kTumblingWindowMs) * kTumblingWindowMs];
    if (b.price > price) {
      price = b.price;
      count = 0;
    }
    if (b.price == price) ++count;
  }
  const std::vector<Q7Row> q7 = reference_q7(slow_config(), kEvents);
  int64_t expected_rows = 0;
  for (const auto& [start, m] : max) expected_rows += m.second;
  EXPECT_EQ(static_cast<int64_t>(q7.size()), expected_rows);
  for (const Q7Row& r : q7) {
    ASSERT_EQ(r.price, max.at(floor_div(r.date_time, kTumblingWindowMs) * kTumblingWindowMs).first);
  }
  EXPECT_GE(max.size(), 3u);
}

TEST_F(NexmarkReferenceInvariants, Q11SessionsPartitionEachBiddersBids) {
  const std::vector<Q11Row> q11 = reference_q11(slow_config(), kEvents);
  int64_t total = 0;
  for (size_t i = 0; i < q11.size(); ++i) {
    total += q11[i].bid_count;
    ASSERT_GE(q11[i].window_end_ms - q11[i].window_start_ms, kSessionGapMs);
    if (i > 0 && q11[i - 1].bidder == q11[i].bidder) {
      ASSERT_GT(q11[i].window_start_ms, q11[i - 1].window_end_ms) << describe_row(q11[i]);  // gap > 10 s
    }
  }
  EXPECT_EQ(total, static_cast<int64_t>(bids().size()));
}

TEST_F(NexmarkReferenceInvariants, Q12CheckAcceptsAnyCompleteAssignmentAndRejectsALostBid) {
  // A fake processing-time assignment: bid i lands in window i / 1000.
  std::map<std::pair<int64_t, int64_t>, int64_t> counts;  // (bidder, window) -> bids
  for (size_t i = 0; i < bids().size(); ++i) {
    ++counts[{bids()[i].bidder, static_cast<int64_t>(i / 1000) * kTumblingWindowMs}];
  }
  std::vector<Q12Row> rows;
  for (const auto& [key, count] : counts) {
    rows.push_back({key.first, count, key.second, key.second + kTumblingWindowMs});
  }
  const EventInput input(slow_config(), kEvents);
  EXPECT_TRUE(check_q12(input, rows).is_ok());
  --rows[rows.size() / 2].bid_count;
  if (rows[rows.size() / 2].bid_count == 0) rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(rows.size() / 2));
  EXPECT_FALSE(check_q12(input, rows).is_ok());
}

TEST_F(NexmarkReferenceInvariants, WinningBidsSatisfyTheJoinConditionsAndQ4AveragesThem) {
  const GeneratorConfig c = slow_config();
  const std::vector<Q9Row> q9 = reference_q9(c, kEvents);
  ASSERT_GT(q9.size(), 100u);
  std::map<int64_t, std::pair<int64_t, int64_t>> per_category;  // category -> (sum, count)
  for (const Q9Row& r : q9) {
    ASSERT_EQ(r.auction, r.id);
    ASSERT_GE(r.bid_date_time, r.date_time);
    ASSERT_LE(r.bid_date_time, r.expires);
    ASSERT_GE(r.price, r.reserve);
    per_category[r.category].first += r.price;
    ++per_category[r.category].second;
  }
  std::vector<Q4Row> expected_q4;
  for (const auto& [category, sc] : per_category) expected_q4.push_back({category, sc.first / sc.second});
  EXPECT_EQ(reference_q4(c, kEvents), expected_q4);
  // Each winner is the highest valid bid of its auction.
  std::unordered_map<int64_t, const Q9Row*> winner;
  for (const Q9Row& r : q9) winner[r.id] = &r;
  for (const Bid& b : bids()) {
    const auto it = winner.find(b.auction);
    if (it == winner.end()) continue;
    const Q9Row& w = *it->second;
    if (b.date_time < w.date_time || b.date_time > w.expires || b.price < w.reserve) continue;
    ASSERT_LE(b.price, w.price);
  }
  EXPECT_GE(reference_q9(c, kEvents, ReserveRule::kIgnoreReserve).size(), q9.size());
}

TEST_F(NexmarkReferenceInvariants, Q3RowsAreFromTheThreeStates) {
  const std::vector<Q3Row> q3 = reference_q3(slow_config(), kEvents);
  ASSERT_GT(q3.size(), 0u);
  for (const Q3Row& r : q3) ASSERT_TRUE(r.state == "OR" || r.state == "ID" || r.state == "CA") << describe_row(r);
}

TEST_F(NexmarkReferenceInvariants, Q8PeopleAreUniqueAndWindowsAligned) {
  const std::vector<Q8Row> q8 = reference_q8(slow_config(), kEvents);
  ASSERT_GT(q8.size(), 0u);
  std::set<int64_t> ids;
  for (const Q8Row& r : q8) {
    ASSERT_TRUE(ids.insert(r.person_id).second);
    ASSERT_EQ(r.window_start_ms % kTumblingWindowMs, 0);
  }
}

TEST_F(NexmarkReferenceInvariants, Q17CountsEveryBidOnce) {
  const std::vector<Q17Row> q17 = reference_q17(slow_config(), kEvents);
  int64_t total = 0;
  for (const Q17Row& r : q17) {
    ASSERT_EQ(r.rank1_bids + r.rank2_bids + r.rank3_bids, r.total_bids);
    ASSERT_LE(r.min_price, r.avg_price);
    ASSERT_LE(r.avg_price, r.max_price);
    ASSERT_EQ(r.day, "2024-01-01");
    total += r.total_bids;
  }
  EXPECT_EQ(total, static_cast<int64_t>(bids().size()));
}

TEST_F(NexmarkReferenceInvariants, Q18AndQ19KeepOneResultPerKey) {
  std::set<std::pair<int64_t, int64_t>> pairs;
  std::map<int64_t, int64_t> per_auction;
  for (const Bid& b : bids()) {
    pairs.emplace(b.bidder, b.auction);
    ++per_auction[b.auction];
  }
  const std::vector<Q18Row> q18 = reference_q18(slow_config(), kEvents);
  EXPECT_EQ(q18.size(), pairs.size());
  const std::vector<Q19Row> q19 = reference_q19(slow_config(), kEvents);
  size_t expected_q19 = 0;
  for (const auto& [auction, count] : per_auction) expected_q19 += static_cast<size_t>(std::min<int64_t>(count, 10));
  EXPECT_EQ(q19.size(), expected_q19);
  EXPECT_EQ(reference_digest_q18({slow_config(), kEvents}), digest_of(q18));
  EXPECT_EQ(reference_digest_q19({slow_config(), kEvents}), digest_of(q19));
  // Ranks 1..k per auction, prices non-increasing with rank.
  std::map<int64_t, std::map<int64_t, int64_t>> ranks;  // auction -> rank -> price
  for (const Q19Row& r : q19) ASSERT_TRUE(ranks[r.auction].emplace(r.rank_number, r.price).second);
  for (const auto& [auction, by_rank] : ranks) {
    int64_t expect_rank = 1;
    int64_t prev_price = INT64_MAX;
    for (const auto& [rank, price] : by_rank) {
      ASSERT_EQ(rank, expect_rank++);
      ASSERT_LE(price, prev_price);
      prev_price = price;
    }
  }
}

}  // namespace
}  // namespace sluice::nexmark::reference
