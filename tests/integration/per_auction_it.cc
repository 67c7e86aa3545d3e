// The main job end to end at parallelism 1..4: its output passes the demo's --verify check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../../examples/per_auction/per_auction_job.h"
#include "../../tools/sluice/verify.h"

namespace sluice {
namespace {

class PerAuctionTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(PerAuctionTest, OutputMatchesOracle) {
  std::string dir = ::testing::TempDir() + "per-auction-" + std::to_string(::getpid()) + "-" + std::to_string(GetParam());
  std::filesystem::remove_all(dir);
  StreamExecutionEnvironment env;
  env.set_parallelism(GetParam());
  per_auction::JobOptions opt;
  opt.source.generator.max_events = 200'000;
  opt.source.generator.seed = 7;
  opt.source.num_splits = 5;
  opt.output_dir = dir;
  per_auction::build(env, opt);
  auto r = env.execute("per-auction");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();

  auto oracle = nexmark::compute_per_auction_oracle(opt.source.generator, opt.source.generator.max_events);
  auto report = cli::verify_per_auction_output(dir, oracle);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_GT(report->auctions, 1000);
  EXPECT_EQ(report->mismatches(), 0) << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  int64_t bids = 0;
  for (const auto& [a, agg] : oracle) bids += agg.count;
  EXPECT_EQ(report->records, bids);
  if (!HasFailure()) std::filesystem::remove_all(dir);  // kept for a look when the test fails
}

INSTANTIATE_TEST_SUITE_P(Parallelism, PerAuctionTest, ::testing::Values(1, 2, 3, 4));

TEST(PerAuctionVerify, DetectsMissingAndDuplicateUpdates) {
  std::string dir = ::testing::TempDir() + "verify-negative-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::unordered_map<int64_t, nexmark::AuctionAggregate> oracle{{1000, {3, 600, 300}}, {1001, {1, 50, 50}}};
  {
    std::ofstream f(dir + "/part-0123456789abcdef0123456789abcdef-0-0-0");
    f << "1000,1,100,100\n1000,3,600,300\n1000,3,600,300\n1001,2,100,50\n";
  }
  auto report = cli::verify_per_auction_output(dir, oracle);
  ASSERT_TRUE(report.is_ok());
  EXPECT_EQ(report->missing, 2);     // 1000 lacks count 2; 1001 lacks count 1
  EXPECT_EQ(report->duplicates, 2);  // 1000 count 3 twice; 1001 count 2 beyond its n = 1
  EXPECT_GT(report->mismatches(), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice
