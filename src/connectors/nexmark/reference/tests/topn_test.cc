// q17, q18 and q19 on hand-built events; expected rows worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "builders.h"
#include "sluice/connectors/nexmark/generator.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {
namespace {

using testing::bid;
using testing::person;

constexpr int64_t kDayMs = 86'400'000;

TEST(NexmarkReferenceAggregates, UtcDay) {
  EXPECT_EQ(utc_day(0), "1970-01-01");
  EXPECT_EQ(utc_day(kDayMs - 1), "1970-01-01");
  EXPECT_EQ(utc_day(kDayMs), "1970-01-02");
  EXPECT_EQ(utc_day(-1), "1969-12-31");
  EXPECT_EQ(utc_day(kDefaultBaseTimeMs), "2024-01-01");
  EXPECT_EQ(utc_day(kDefaultBaseTimeMs + 59 * kDayMs), "2024-02-29");  // a leap year
}

TEST(NexmarkReferenceAggregates, Q17StatisticsPerAuctionAndDay) {
  const std::vector<Event> events = {
      bid(1, 1, 9999, 0),           // rank 1 (< 10,000)
      bid(1, 2, 10'000, 1),         // rank 2 (from 10,000)
      bid(1, 3, 999'999, 2),        // rank 2 (below 1,000,000)
      bid(1, 4, 1'000'000, 3),      // rank 3
      bid(1, 5, 500, kDayMs),       // the next day: its own row
      bid(2, 5, 700, kDayMs - 1),   // the last ms of day 1
      person(7, "OR", 0),
  };
  // Auction 1, day 1: sum 2,019,998; avg 2,019,998 / 4 = 504,999 (truncated from .5).
  const std::vector<Q17Row> expected = {
      {1, "1970-01-01", 4, 1, 2, 1, 9999, 1'000'000, 504'999, 2'019'998},
      {1, "1970-01-02", 1, 1, 0, 0, 500, 500, 500, 500},
      {2, "1970-01-01", 1, 1, 0, 0, 700, 700, 700, 700},
  };
  EXPECT_EQ(reference_q17(events), expected);
}

TEST(NexmarkReferenceTopN, Q18LastBidPerBidderAndAuctionWithTies) {
  const std::vector<Event> events = {
      bid(1, 1, 10, 5),
      bid(1, 1, 9, 7, "b", "tie-url-b"),  // latest time, highest price at that time, but url "b" > "a"
      bid(1, 1, 3, 7),                     // latest time but lower price
      bid(1, 1, 9, 7, "a", "winner"),
      bid(1, 1, 50, 6),                    // higher price but earlier
      bid(2, 1, 1, 1),
      bid(1, 2, 4, 3, "u", "late"),
      bid(1, 2, 8, 2),
  };
  const std::vector<Q18Row> expected = {
      {1, 1, 9, "c", "a", 7, "winner"}, {1, 2, 4, "c", "u", 3, "late"}, {2, 1, 1, "c", "u", 1, "x"}};
  EXPECT_EQ(reference_q18(events), expected);
  std::vector<Event> reversed(events.rbegin(), events.rend());
  EXPECT_EQ(reference_q18(reversed), expected);
}

TEST(NexmarkReferenceTopN, Q19TopTenPerAuctionByPriceThenTimeThenCanonicalOrder) {
  std::vector<Event> events;
  for (int64_t p = 100; p <= 110; ++p) events.push_back(bid(1, 9, p, p - 100));  // 100 at 0 .. 110 at 10
  events.push_back(bid(1, 9, 110, 0));  // ties 110 on price, earlier: rank 1
  events.push_back(bid(1, 3, 109, 9));  // ties (109, 9) exactly; bidder 3 < 9: before it
  events.push_back(bid(2, 4, 5, 0));
  std::reverse(events.begin(), events.end());  // insertion order must not matter
  std::vector<Q19Row> expected = {
      {1, 9, 110, "c", "u", 0, "x", 1},  {1, 9, 110, "c", "u", 10, "x", 2}, {1, 3, 109, "c", "u", 9, "x", 3},
      {1, 9, 109, "c", "u", 9, "x", 4},  {1, 9, 108, "c", "u", 8, "x", 5},  {1, 9, 107, "c", "u", 7, "x", 6},
      {1, 9, 106, "c", "u", 6, "x", 7},  {1, 9, 105, "c", "u", 5, "x", 8},  {1, 9, 104, "c", "u", 4, "x", 9},
      {1, 9, 103, "c", "u", 3, "x", 10}, {2, 4, 5, "c", "u", 0, "x", 1},
  };
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(reference_q19(events), expected);
  std::reverse(events.begin(), events.end());
  EXPECT_EQ(reference_q19(events), expected);
}

}  // namespace
}  // namespace sluice::nexmark::reference
