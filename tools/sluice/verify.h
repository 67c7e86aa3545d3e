// The demo's order-independent output check (README.md, "The main job"): for every auction, the
// update records carry counts 1..n exactly once each, and the final count, sum and max equal an independent
// single-threaded pass over the same generated events.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sluice/connectors/nexmark/oracle.h"
#include "sluice/core/status.h"

namespace sluice::fs {
class FileSystemRegistry;
}  // namespace sluice::fs

namespace sluice::cli {

// The prices of every bid per auction, in any order: the identity of the bids behind an auction's updates
// (update c adds one bid's price to the sum: sum_c - sum_(c-1)). Bids of one auction at the same price are
// interchangeable, as their updates are. The committed updates of an auction form one chain 1, 2, ... even
// after restores (a restore continues from the checkpoint's state, whose updates were committed with it), so the
// steps are the bids the final state counted.
using AuctionBidPrices = std::unordered_map<int64_t, std::vector<int64_t>>;

// The bid prices of events [0, num_events) of `config`'s stream, as compute_per_auction_oracle reads them.
AuctionBidPrices compute_auction_bid_prices(const nexmark::GeneratorConfig& config, int64_t num_events);

struct VerifyReport {
  int64_t auctions = 0;        // auctions in the oracle
  int64_t records = 0;         // update lines read
  // Count values 1..n that never appear; with bid prices given, for an auction whose counts have no gap: the
  // bids (by price) that no update added, however many other bids were counted twice - so a lost bid is
  // missing even when a duplicate brings the count back to n.
  int64_t missing = 0;
  int64_t duplicates = 0;      // count values seen more than once, plus counts beyond the oracle's n
  int64_t wrong_finals = 0;    // auctions whose final count/sum/max differ from the oracle
  int64_t malformed = 0;       // lines that do not parse as auction,count,sum,max
  std::vector<std::string> first_mismatches;  // up to 10, human-readable
  int64_t mismatches() const { return missing + duplicates + wrong_finals + malformed; }
  // The exactly-once check: nothing missing, nothing twice, every final right.
  bool exactly_once() const { return mismatches() == 0; }
  // The at-least-once check (execution.checkpointing.mode AT_LEAST_ONCE): no losses. Duplicates are allowed,
  // and so are wrong finals: a record replayed after a restore is counted again by the restored state, so an
  // auction's last updates go beyond the oracle's count and its sum and max at that count may differ.
  bool at_least_once() const { return missing == 0 && malformed == 0; }
};

// Reads every part file directly in `output_dir` and compares with `oracle`; with `bid_prices` (same stream) it
// also checks each auction's updates bid by bid (VerifyReport::missing). `output_dir` is any path or URI
// `file_systems` serves (null: the local disk only). kNotFound when the directory does not exist; a file that
// cannot be read is an error naming it. Each part file is read whole into memory (at most the sink's part size).
Result<VerifyReport> verify_per_auction_output(
    const std::string& output_dir, const std::unordered_map<int64_t, nexmark::AuctionAggregate>& oracle,
    const AuctionBidPrices* bid_prices = nullptr, const fs::FileSystemRegistry* file_systems = nullptr);

}  // namespace sluice::cli
