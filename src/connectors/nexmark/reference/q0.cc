// q0: pass-through. Every bid, all of its fields (docs/nexmark.md).
#include <algorithm>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

Q0Row q0_row(const Bid& bid) {
  return Q0Row{bid.auction, bid.bidder, bid.price, bid.channel, bid.url, bid.date_time, bid.extra};
}

std::vector<Q0Row> reference_q0(const EventInput& input) {
  std::vector<Q0Row> rows;
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) { rows.push_back(q0_row(bid)); });
  std::sort(rows.begin(), rows.end());
  return rows;
}

MultisetDigest reference_digest_q0(const EventInput& input) {
  MultisetDigest digest;
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) { digest.add(q0_row(bid)); });
  return digest;
}

}  // namespace sluice::nexmark::reference
