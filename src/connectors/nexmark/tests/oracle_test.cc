#include "sluice/connectors/nexmark/oracle.h"

#include <gtest/gtest.h>

#include <map>

namespace sluice::nexmark {
namespace {

TEST(NexmarkOracle, MatchesABruteForcePassOverEventAt) {
  GeneratorConfig config;
  config.max_events = 50'000;
  const auto oracle = compute_per_auction_oracle(config, 20'000);

  const Generator g(config);
  std::map<int64_t, AuctionAggregate> expected;
  int64_t bids = 0;
  for (int64_t n = 0; n < 20'000; ++n) {
    const Event e = g.event_at(n);
    if (!e.is_bid()) continue;
    ++bids;
    AuctionAggregate& a = expected[e.bid().auction];
    a.count += 1;
    a.sum += e.bid().price;
    a.max = std::max(a.max, e.bid().price);
  }
  EXPECT_EQ(bids, 20'000 / 50 * 46);
  ASSERT_EQ(oracle.size(), expected.size());
  int64_t counted = 0;
  for (const auto& [auction, agg] : expected) {
    auto it = oracle.find(auction);
    ASSERT_NE(it, oracle.end()) << auction;
    EXPECT_EQ(it->second, agg) << auction;
    counted += it->second.count;
  }
  EXPECT_EQ(counted, bids);
}

TEST(NexmarkOracle, EmptyAndPeopleOnlyPrefixes) {
  EXPECT_TRUE(compute_per_auction_oracle(GeneratorConfig{}, 0).empty());
  EXPECT_TRUE(compute_per_auction_oracle(GeneratorConfig{}, 4).empty());  // a person and three auctions
  EXPECT_EQ(compute_per_auction_oracle(GeneratorConfig{}, 5).size(), 1u);
}

}  // namespace
}  // namespace sluice::nexmark
