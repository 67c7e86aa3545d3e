// q3, q4 and q9 on hand-built events; every expected row is worked out by hand in the comments.
#include <gtest/gtest.h>

#include "builders.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {
namespace {

using testing::auction;
using testing::bid;
using testing::person;

TEST(NexmarkReferenceJoins, Q3JoinsCategory10AuctionsWithSellersInOrIdCa) {
  const std::vector<Event> events = {
      person(1001, "OR", 0),
      person(1002, "WA", 0),
      auction(2001, 1001, 10, 5),  // row: OR, category 10
      auction(2002, 1002, 10, 5),  // no: WA
      auction(2003, 1003, 10, 5),  // row: the seller registers later in the stream (unwindowed join)
      auction(2004, 1001, 11, 5),  // no: category 11
      auction(2005, 1009, 10, 5),  // no: the seller never registers
      auction(2006, 1004, 10, 5),  // row: ID
      person(1003, "CA", 9),
      person(1004, "ID", 9),
      person(1001, "WA", 9),  // a repeated id: only the first registration counts
  };
  const std::vector<Q3Row> expected = {
      {"name1001", "city1001", "OR", 2001},
      {"name1003", "city1003", "CA", 2003},
      {"name1004", "city1004", "ID", 2006},
  };
  EXPECT_EQ(reference_q3(events), expected);
}

// Auction 3001 (category 10): open [1000, 2000], reserve 500.
// Auction 3002 (category 11): open [1000, 2000], reserve 1000: no bid reaches it.
// Auction 3003 (category 10): open [0, 100], reserve 0, one bid of 1201.
std::vector<Event> winning_bid_events() {
  return {
      bid(3001, 9, 800, 1500),      // ties with the next two on price and time; bidder 5 is smaller
      auction(3001, 1, 10, 1000, 2000, 500),
      bid(3001, 1, 10'000, 999),    // before the auction opened
      bid(3001, 1, 20'000, 2001),   // after it expired
      bid(3001, 1, 400, 1000),      // below the reserve (counts when the reserve is ignored, but 800 is higher)
      bid(3001, 1, 800, 2000),      // at expires: may win, but later than the 800s at 1500
      bid(3001, 5, 800, 1500),      // the winner: highest price, earliest time, smallest bidder
      bid(3001, 7, 800, 1500),
      auction(3002, 1, 11, 1000, 2000, 1000),
      bid(3002, 1, 300, 1000),      // below the reserve
      bid(3002, 2, 999, 2000),      // below the reserve
      bid(3002, 3, 5000, 2500),     // after expiry
      auction(3003, 1, 10, 0, 100, 0),
      bid(3003, 4, 1201, 0),        // at the auction's own time: may win
      bid(3004, 4, 9999, 50),       // an auction that never appears
  };
}

Q9Row q9_row(const Event& a_event, int64_t bidder, int64_t price, int64_t time) {
  const Auction& a = a_event.auction();
  return Q9Row{a.id, a.item_name, a.description, a.initial_bid, a.reserve, a.date_time, a.expires,
               a.seller, a.category, a.extra, a.id, bidder, price, time, "x"};
}

TEST(NexmarkReferenceJoins, Q9PicksHighestThenEarliestThenCanonicallySmallestValidBid) {
  const std::vector<Q9Row> expected = {
      q9_row(auction(3001, 1, 10, 1000, 2000, 500), 5, 800, 1500),
      q9_row(auction(3003, 1, 10, 0, 100, 0), 4, 1201, 0),
  };
  EXPECT_EQ(reference_q9(winning_bid_events()), expected);
}

TEST(NexmarkReferenceJoins, Q9WithoutReserveAsFlinksSql) {
  // 3002 now has a winner: 999, bid exactly at its expiry (inclusive); 5000 came too late.
  const std::vector<Q9Row> expected = {
      q9_row(auction(3001, 1, 10, 1000, 2000, 500), 5, 800, 1500),
      q9_row(auction(3002, 1, 11, 1000, 2000, 1000), 2, 999, 2000),
      q9_row(auction(3003, 1, 10, 0, 100, 0), 4, 1201, 0),
  };
  EXPECT_EQ(reference_q9(winning_bid_events(), ReserveRule::kIgnoreReserve), expected);
}

TEST(NexmarkReferenceJoins, Q4AveragesWinningPricesPerCategoryWithIntegerDivision) {
  // Category 10: (800 + 1201) / 2 = 1000 (truncated from 1000.5). Category 11: no winner, no row.
  EXPECT_EQ(reference_q4(winning_bid_events()), (std::vector<Q4Row>{{10, 1000}}));
  // Without the reserve, category 11 has the winner 999.
  EXPECT_EQ(reference_q4(winning_bid_events(), ReserveRule::kIgnoreReserve),
            (std::vector<Q4Row>{{10, 1000}, {11, 999}}));
}

TEST(NexmarkReferenceJoins, Q9ExactTieOnEveryKeyButStringsUsesCanonicalOrder) {
  // Same auction, bidder, price and time; the url decides ("a" < "b"), whatever the order in the stream.
  const std::vector<Event> events = {auction(3001, 1, 10, 0, 10, 0), bid(3001, 5, 700, 5, "b", "first"),
                                     bid(3001, 5, 700, 5, "a", "second")};
  const std::vector<Q9Row> rows = reference_q9(events);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].bid_extra, "second");
  const std::vector<Event> reversed = {events[2], events[1], events[0]};
  EXPECT_EQ(reference_q9(reversed), rows);
}

}  // namespace
}  // namespace sluice::nexmark::reference
