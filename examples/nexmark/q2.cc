#include "q2.h"

namespace sluice::nexmark::queries {

namespace {
constexpr int64_t kAuctionModulus = 123;
}  // namespace

DataStream<reference::Q2Row> q2(const DataStream<Event>& events) {
  auto selected = events.filter([](const Event& e) { return e.is_bid() && e.bid().auction % kAuctionModulus == 0; });
  selected.name("q2-select").uid("q2-select");
  auto rows = selected.map([](Event&& e) { return reference::Q2Row{e.bid().auction, e.bid().price}; });
  rows.name("q2-project").uid("q2-project");
  return rows;
}

}  // namespace sluice::nexmark::queries
