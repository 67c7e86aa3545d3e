// q5, q7, q8, q11 and the q12 invariants on hand-built events; expected rows worked out by hand.
#include <gtest/gtest.h>

#include "builders.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {
namespace {

using testing::auction;
using testing::bid;
using testing::person;

TEST(NexmarkReferenceWindows, Q5SlidingWindowsKeepEveryAuctionWithTheMaximumCount) {
  // Auction 1 at 0 and 1999; auction 2 at 2000, 2500 and 9999; auction 3 at 10000 (each bid lies in the five
  // windows of 10 s starting at multiples of 2 s that contain it; 2000 and 10000 open new windows).
  const std::vector<Event> events = {bid(2, 7, 1, 9999), bid(1, 7, 1, 0),    bid(2, 7, 1, 2000),
                                     person(5, "OR", 0), bid(1, 7, 1, 1999), bid(3, 7, 1, 10'000),
                                     bid(2, 7, 1, 2500),  auction(9, 5, 10, 0)};
  const std::vector<Q5Row> expected = {
      {-8000, 2000, 1, 2},                          // [-8000, 2000): 0, 1999
      {-6000, 4000, 1, 2},   {-6000, 4000, 2, 2},   // tie: auction 2 has 2000, 2500
      {-4000, 6000, 1, 2},   {-4000, 6000, 2, 2},
      {-2000, 8000, 1, 2},   {-2000, 8000, 2, 2},
      {0, 10'000, 2, 3},                            // 9999 is inside, 10000 is not
      {2000, 12'000, 2, 3},                         // auction 1's 1999 is out; 3 has one
      {4000, 14'000, 2, 1},  {4000, 14'000, 3, 1},  // 9999 and 10000
      {6000, 16'000, 2, 1},  {6000, 16'000, 3, 1},
      {8000, 18'000, 2, 1},  {8000, 18'000, 3, 1},
      {10'000, 20'000, 3, 1},                       // 10000 belongs to the window starting there
  };
  EXPECT_EQ(reference_q5(events), expected);
}

TEST(NexmarkReferenceWindows, Q7EveryBidAtTheWindowsHighestPriceHalfOpenWindows) {
  const std::vector<Event> events = {
      bid(1, 1, 5, 0),
      bid(2, 1, 7, 9999, "u", "a"),   // window [0, 10000): tied highest
      bid(3, 2, 7, 5000, "u", "b"),   // tied highest
      bid(4, 3, 7, 10'000, "u", "c"),  // exactly at the end: the next window's only highest
      bid(5, 3, 3, 10'001),
      bid(6, 4, 100, -1, "u", "d"),   // window [-10000, 0)
  };
  const std::vector<Q7Row> expected = {
      {2, 1, 7, 9999, "a"}, {3, 2, 7, 5000, "b"}, {4, 3, 7, 10'000, "c"}, {6, 4, 100, -1, "d"}};
  EXPECT_EQ(reference_q7(events), expected);
}

TEST(NexmarkReferenceWindows, Q8PeopleWhoOpenedAnAuctionInTheirRegistrationWindow) {
  const std::vector<Event> events = {
      auction(50, 3, 10, 4999),   // before person 3 registers, same window: counts
      person(1, "OR", 1000),
      person(2, "OR", 9999),
      person(3, "OR", 5000),
      person(4, "OR", 15'000),
      auction(51, 1, 10, 2000),   // person 1, twice: one row
      auction(52, 1, 11, 3000),
      auction(53, 2, 10, 10'000),  // person 2 registered at 9999: next window, no row
      auction(54, 99, 10, 1000),  // seller never registers
      auction(55, 4, 10, 9000),   // person 4 registers in the next window: no row
  };
  const std::vector<Q8Row> expected = {{1, "name1", 0}, {3, "name3", 0}};
  EXPECT_EQ(reference_q8(events), expected);
}

TEST(NexmarkReferenceWindows, Q11SessionsMergeWhenBidsAreAtMostTheGapApart) {
  const std::vector<Event> events = {
      bid(1, 1, 1, 20'001),  // 10001 after 10000: a new session
      bid(1, 1, 1, 0),
      bid(1, 2, 1, 5000),
      bid(1, 1, 1, 10'000),  // exactly the gap after 0: same session (touching windows merge)
      bid(1, 1, 1, 25'000),
  };
  const std::vector<Q11Row> expected = {
      {1, 2, 0, 20'000}, {1, 2, 20'001, 35'000}, {2, 1, 5000, 15'000}};
  EXPECT_EQ(reference_q11(events), expected);
}

class NexmarkReferenceQ12 : public ::testing::Test {
 protected:
  // Bidder 1 has three bids, bidder 2 one.
  std::vector<Event> events_ = {bid(1, 1, 1, 0), bid(1, 1, 1, 1), bid(2, 1, 1, 2), bid(1, 2, 1, 3),
                                person(1, "OR", 0)};
};

TEST_F(NexmarkReferenceQ12, AcceptsAnySplitThatCountsEveryBidOnce) {
  EXPECT_TRUE(check_q12(events_, {{1, 2, 0, 10'000}, {1, 1, 10'000, 20'000}, {2, 1, 0, 10'000}}).is_ok());
  EXPECT_TRUE(check_q12(events_, {{2, 1, 70'000, 80'000}, {1, 3, 50'000, 60'000}}).is_ok());
}

TEST_F(NexmarkReferenceQ12, RejectsLostDuplicatedInventedOrMisalignedCounts) {
  const Status lost = check_q12(events_, {{1, 2, 0, 10'000}, {2, 1, 0, 10'000}});
  EXPECT_NE(lost.message().find("bidder 1 has 3 bids in the input but 2 counted"), std::string::npos)
      << lost.message();
  const Status twice = check_q12(events_, {{1, 2, 0, 10'000}, {1, 1, 0, 10'000}, {2, 1, 0, 10'000}});
  EXPECT_NE(twice.message().find("reported twice"), std::string::npos) << twice.message();
  const Status invented = check_q12(events_, {{1, 3, 0, 10'000}, {2, 1, 0, 10'000}, {7, 1, 0, 10'000}});
  EXPECT_NE(invented.message().find("bidder 7 has 1 counted bids but none in the input"), std::string::npos)
      << invented.message();
  const Status misaligned = check_q12(events_, {{1, 3, 5, 10'005}, {2, 1, 0, 10'000}});
  EXPECT_NE(misaligned.message().find("not aligned"), std::string::npos) << misaligned.message();
  const Status wrong_size = check_q12(events_, {{1, 3, 0, 20'000}, {2, 1, 0, 10'000}});
  EXPECT_NE(wrong_size.message().find("not aligned"), std::string::npos) << wrong_size.message();
  const Status zero = check_q12(events_, {{1, 3, 0, 10'000}, {2, 1, 0, 10'000}, {2, 0, 10'000, 20'000}});
  EXPECT_NE(zero.message().find("bid_count < 1"), std::string::npos) << zero.message();
}

}  // namespace
}  // namespace sluice::nexmark::reference
