// Winning bids: a bid may win its auction if auction.date_time <= bid.date_time <= auction.expires and (by
// default) bid.price >= auction.reserve; the winner has the highest price, then the earliest time, then is the
// canonically smallest bid. Two passes, so bids that precede their auction in the stream count too: first
// every auction (compactly), then every bid.
#include "winning_bids.h"

#include <unordered_map>

#include "common.h"

namespace sluice::nexmark::reference::detail {

namespace {
struct AuctionState {
  int64_t event = 0;
  int64_t date_time = 0;
  int64_t expires = 0;
  int64_t reserve = 0;
  int64_t category = 0;
  int64_t best_event = -1;  // -1: no bid may win yet
  int64_t best_price = 0;
  int64_t best_time = 0;
};
}  // namespace

std::vector<WinningBid> find_winning_bids(const EventInput& input, ReserveRule rule) {
  std::unordered_map<int64_t, AuctionState> auctions;
  for_each_of_kind(input, EventKind::kAuction, [&](int64_t n, const Event& e) {
    const Auction& a = e.auction();
    auctions.emplace(a.id, AuctionState{n, a.date_time, a.expires, a.reserve, a.category});
  });

  EventReader reader(input);
  for_each_bid(input, [&](int64_t n, const Bid& bid) {
    const auto it = auctions.find(bid.auction);
    if (it == auctions.end()) return;
    AuctionState& s = it->second;
    if (bid.date_time < s.date_time || bid.date_time > s.expires) return;
    if (rule == ReserveRule::kPriceAtLeastReserve && bid.price < s.reserve) return;
    bool better = s.best_event < 0 || bid.price > s.best_price ||
                  (bid.price == s.best_price && bid.date_time < s.best_time);
    if (!better && bid.price == s.best_price && bid.date_time == s.best_time) {
      // An exact tie on price and time: the canonically smaller bid wins (re-read the kept one).
      better = canonical_compare(bid, reader.first(s.best_event).bid()) < 0;
    }
    if (better) {
      s.best_event = n;
      s.best_price = bid.price;
      s.best_time = bid.date_time;
    }
  });

  std::vector<WinningBid> winners;
  for (const auto& [id, s] : auctions) {
    if (s.best_event >= 0) winners.push_back(WinningBid{s.event, s.best_event, s.category, s.best_price});
  }
  return winners;
}

}  // namespace sluice::nexmark::reference::detail
