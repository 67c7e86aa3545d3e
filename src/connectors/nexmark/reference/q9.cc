// q9: each auction with its winning bid (see winning_bids.cc; docs/nexmark.md).
#include <algorithm>

#include "common.h"
#include "winning_bids.h"

namespace sluice::nexmark::reference {

std::vector<Q9Row> reference_q9(const EventInput& input, ReserveRule rule) {
  std::vector<Q9Row> rows;
  detail::EventReader reader(input);
  for (const detail::WinningBid& w : detail::find_winning_bids(input, rule)) {
    const Auction& a = reader.first(w.auction_event).auction();
    const Bid& b = reader.second(w.bid_event).bid();
    rows.push_back(Q9Row{a.id, a.item_name, a.description, a.initial_bid, a.reserve, a.date_time, a.expires,
                         a.seller, a.category, a.extra, b.auction, b.bidder, b.price, b.date_time, b.extra});
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace sluice::nexmark::reference
