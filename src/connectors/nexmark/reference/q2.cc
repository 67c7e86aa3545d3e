// q2: selection. Bids whose auction id is a multiple of 123 (docs/nexmark.md).
#include <algorithm>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

bool q2_selects(const Bid& bid) { return bid.auction % kQ2AuctionModulus == 0; }

std::vector<Q2Row> reference_q2(const EventInput& input) {
  std::vector<Q2Row> rows;
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) {
    if (q2_selects(bid)) rows.push_back(Q2Row{bid.auction, bid.price});
  });
  std::sort(rows.begin(), rows.end());
  return rows;
}

MultisetDigest reference_digest_q2(const EventInput& input) {
  MultisetDigest digest;
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) {
    if (q2_selects(bid)) digest.add(Q2Row{bid.auction, bid.price});
  });
  return digest;
}

}  // namespace sluice::nexmark::reference
