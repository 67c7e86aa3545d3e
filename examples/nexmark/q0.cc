#include "q0.h"

#include <utility>

namespace sluice::nexmark::queries {

DataStream<reference::Q0Row> q0(const DataStream<Event>& events) {
  auto bids = events.filter([](const Event& e) { return e.is_bid(); });
  bids.name("q0-bids").uid("q0-bids");
  auto rows = bids.map([](Event&& e) {
    Bid& b = e.mutable_bid();
    return reference::Q0Row{b.auction, b.bidder, b.price, std::move(b.channel), std::move(b.url), b.date_time,
                            std::move(b.extra)};
  });
  rows.name("q0-pass-through").uid("q0-pass-through");
  return rows;
}

}  // namespace sluice::nexmark::queries
