// The demo's order-independent output check (issue "Foundation", The main job): for every auction, the
// update records carry counts 1..n exactly once each, and the final count, sum and max equal an independent
// single-threaded pass over the same generated events.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sluice/connectors/nexmark/oracle.h"
#include "sluice/core/status.h"

namespace sluice::cli {

struct VerifyReport {
  int64_t auctions = 0;        // auctions in the oracle
  int64_t records = 0;         // update lines read
  int64_t missing = 0;         // count values 1..n that never appear
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

// Reads every part file under `output_dir` and compares with `oracle`.
Result<VerifyReport> verify_per_auction_output(
    const std::string& output_dir, const std::unordered_map<int64_t, nexmark::AuctionAggregate>& oracle);

}  // namespace sluice::cli
