#include "q1.h"

#include <utility>

namespace sluice::nexmark::queries {

namespace {
constexpr int64_t kEuroRateMilli = 908;  // 0.908 (the suite's fixed dollar-to-euro rate) in thousandths
}  // namespace

DataStream<reference::Q1Row> q1(const DataStream<Event>& events) {
  auto bids = events.filter([](const Event& e) { return e.is_bid(); });
  bids.name("q1-bids").uid("q1-bids");
  auto rows = bids.map([](Event&& e) {
    Bid& b = e.mutable_bid();
    return reference::Q1Row{b.auction, b.bidder, b.price * kEuroRateMilli, b.date_time, std::move(b.extra)};
  });
  rows.name("q1-currency").uid("q1-currency");
  return rows;
}

}  // namespace sluice::nexmark::queries
