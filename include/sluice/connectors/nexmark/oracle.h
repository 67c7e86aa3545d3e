// A straightforward single-threaded answer to the demo job's question (count, sum and max of bid prices per
// auction), for verifying what the engine computed over the same events.
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "sluice/connectors/nexmark/generator.h"

namespace sluice::nexmark {

struct AuctionAggregate {
  int64_t count = 0;  // bids
  int64_t sum = 0;    // sum of prices, cents
  int64_t max = 0;    // highest price, cents (prices are >= 100, so 0 only when count == 0)

  bool operator==(const AuctionAggregate&) const = default;
};

// Aggregates the bids among event numbers [0, num_events) of the single-generator stream of `config`, keyed
// by Bid::auction. Preconditions: config valid; 0 <= num_events, and num_events <= max_events if bounded.
std::unordered_map<int64_t, AuctionAggregate> compute_per_auction_oracle(const GeneratorConfig& config,
                                                                         int64_t num_events);

}  // namespace sluice::nexmark
