// The demo's output check on hand-written part files: at-least-once verification counts per bid (record
// identity), so a lost bid is missing even when a duplicate of another bid brings the count back to n.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "verify.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;

// Auction 7 has three bids: 100, 200 and 300 (count 3, sum 600, max 300).
const std::unordered_map<int64_t, nexmark::AuctionAggregate> kOracle = {{7, {3, 600, 300}}};
const AuctionBidPrices kPrices = {{7, {300, 100, 200}}};

std::string output_with(const std::string& name, const std::vector<std::string>& lines) {
  fs::path dir = fs::path(::testing::TempDir()) / "verify_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream out(dir / "part-0123456789abcdef0123456789abcdef-0-1-0");  // a name the file sink writes
  for (const auto& l : lines) out << l << "\n";
  return dir.string();
}

TEST(VerifyPerAuction, ALostBidMaskedByADuplicateIsMissing) {
  // Bid 200 never counted, bid 300 counted twice: counts 1, 2, 3 each once, as if nothing happened.
  const std::string dir = output_with("masked", {"7,1,100,100", "7,2,400,300", "7,3,700,300"});
  auto by_count = verify_per_auction_output(dir, kOracle);
  ASSERT_TRUE(by_count.is_ok());
  EXPECT_EQ(by_count->missing, 0) << "count values alone cannot see it";
  auto by_bid = verify_per_auction_output(dir, kOracle, &kPrices);
  ASSERT_TRUE(by_bid.is_ok()) << by_bid.status().to_string();
  EXPECT_EQ(by_bid->missing, 1);
  EXPECT_FALSE(by_bid->at_least_once());
  EXPECT_FALSE(by_bid->exactly_once());
  const auto& notes = by_bid->first_mismatches;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& m) {
    return m.find("auction 7: 1 bids that no update added") != std::string::npos;
  })) << testing::PrintToString(notes);
}

TEST(VerifyPerAuction, ReplayedBidsAreDuplicatesNotLosses) {
  // Bid 200 replayed after a restore: counted twice, the counts run on beyond 3.
  const std::string dir = output_with("replayed", {"7,1,100,100", "7,2,300,200", "7,3,600,300", "7,4,800,300"});
  auto r = verify_per_auction_output(dir, kOracle, &kPrices);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->missing, 0);
  EXPECT_EQ(r->duplicates, 1);
  EXPECT_TRUE(r->at_least_once());
  EXPECT_FALSE(r->exactly_once());
}

TEST(VerifyPerAuction, ExactOutputAndGapsAreCountedOnce) {
  auto exact = verify_per_auction_output(output_with("exact", {"7,2,300,200", "7,1,100,100", "7,3,600,300"}),
                                         kOracle, &kPrices);
  ASSERT_TRUE(exact.is_ok());
  EXPECT_TRUE(exact->exactly_once()) << exact->mismatches();
  // A gap at count 2 is one missing record (the count check), not one more from the bid check.
  auto gap = verify_per_auction_output(output_with("gap", {"7,1,100,100", "7,3,600,300"}), kOracle, &kPrices);
  ASSERT_TRUE(gap.is_ok());
  EXPECT_EQ(gap->missing, 1);
}

TEST(VerifyPerAuction, ReadsOnlyTheFileSinksPartFiles) {
  // A user's own files in the output folder, "part-" ones included, are not the job's output.
  const std::string dir = output_with("foreign", {"7,2,300,200", "7,1,100,100", "7,3,600,300"});
  for (const char* name : {"part-mine.txt", "notes.txt", "part-0123-0-1-0", ".part-0123456789abcdef0123456789abcdef-0-1-0"}) {
    std::ofstream(fs::path(dir) / name) << "7,9,9,9\n";
  }
  auto report = verify_per_auction_output(dir, kOracle, &kPrices);
  ASSERT_TRUE(report.is_ok());
  EXPECT_TRUE(report->exactly_once()) << report->mismatches();
}

TEST(VerifyPerAuction, BidPricesAgreeWithTheOracle) {
  nexmark::GeneratorConfig config;
  config.max_events = 20'000;
  const auto oracle = nexmark::compute_per_auction_oracle(config, 20'000);
  const auto prices = compute_auction_bid_prices(config, 20'000);
  ASSERT_EQ(prices.size(), oracle.size());
  for (const auto& [auction, agg] : oracle) {
    const auto& p = prices.at(auction);
    EXPECT_EQ(static_cast<int64_t>(p.size()), agg.count);
    int64_t sum = 0;
    for (int64_t x : p) sum += x;
    EXPECT_EQ(sum, agg.sum);
    EXPECT_EQ(*std::max_element(p.begin(), p.end()), agg.max);
  }
}

}  // namespace
}  // namespace sluice::cli
