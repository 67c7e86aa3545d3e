// q1: currency conversion. price_milli = price * 908, i.e. 0.908 * price exactly in thousandths
// (docs/nexmark.md).
#include <algorithm>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

Q1Row q1_row(const Bid& bid) {
  return Q1Row{bid.auction, bid.bidder, bid.price * kQ1RateMilli, bid.date_time, bid.extra};
}

std::vector<Q1Row> reference_q1(const EventInput& input) {
  std::vector<Q1Row> rows;
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) { rows.push_back(q1_row(bid)); });
  std::sort(rows.begin(), rows.end());
  return rows;
}

MultisetDigest reference_digest_q1(const EventInput& input) {
  MultisetDigest digest;
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) { digest.add(q1_row(bid)); });
  return digest;
}

}  // namespace sluice::nexmark::reference
