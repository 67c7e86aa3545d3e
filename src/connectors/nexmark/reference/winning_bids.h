// The winning bid of each auction, shared by q4 and q9 (internal; docs/nexmark.md, "q9").
#pragma once

#include <cstdint>
#include <vector>

#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference::detail {

struct WinningBid {
  int64_t auction_event = 0;  // event number of the auction
  int64_t bid_event = 0;      // event number of the winning bid
  int64_t category = 0;
  int64_t price = 0;
};

// One entry per auction that has a bid that may win, in no particular order.
std::vector<WinningBid> find_winning_bids(const EventInput& input, ReserveRule rule);

}  // namespace sluice::nexmark::reference::detail
