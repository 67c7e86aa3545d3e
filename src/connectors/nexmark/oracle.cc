#include "sluice/connectors/nexmark/oracle.h"

#include <algorithm>

namespace sluice::nexmark {

std::unordered_map<int64_t, AuctionAggregate> compute_per_auction_oracle(const GeneratorConfig& config,
                                                                         int64_t num_events) {
  const Generator generator(config);
  std::unordered_map<int64_t, AuctionAggregate> result;
  Event event;
  for (int64_t n = 0; n < num_events; ++n) {
    if (generator.event_kind(n) != EventKind::kBid) continue;  // skip generating people and auctions
    generator.fill(n, event);
    const Bid& bid = event.bid();
    AuctionAggregate& agg = result[bid.auction];
    ++agg.count;
    agg.sum += bid.price;
    agg.max = std::max(agg.max, bid.price);
  }
  return result;
}

}  // namespace sluice::nexmark
