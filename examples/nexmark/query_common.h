// Helpers shared by the Nexmark query files: the canonical bid order of docs/nexmark.md and the time at which
// end-of-input timers fire.
//
// Updating queries (q4's averages, q17, q18, q19) emit their final state once, from an event-time timer at
// kEndOfInputMs: the final watermark (+infinity) of a bounded input fires it (docs/nexmark.md, "Updating
// queries"). On an unbounded input they emit nothing. Thread-safety: pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <tuple>

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/functions/output.h"
#include "sluice/state/aggregate_function.h"

namespace sluice::nexmark::queries {

// Counts the elements of a window (q5, q11, q12): an incremental aggregate, one int64_t of state per window.
struct CountBids final : AggregateFunction<int64_t, int64_t, int64_t> {
  int64_t create_accumulator() const override { return 0; }
  void add(const int64_t&, int64_t& acc) const override { ++acc; }
  int64_t get_result(const int64_t& acc) const override { return acc; }
  void merge(int64_t& target, const int64_t& other) const override { target += other; }
};

// An event-time timer here fires only with the final watermark of a bounded input.
inline constexpr int64_t kEndOfInputMs = kMaxWatermark;

// The canonical order of bids: (auction, bidder, price, date_time, channel, url, extra), integers numerically,
// strings bytewise (docs/nexmark.md, "Bid order for tie-breaks").
inline std::strong_ordering canonical_compare(const Bid& a, const Bid& b) {
  return std::tie(a.auction, a.bidder, a.price, a.date_time, a.channel, a.url, a.extra) <=>
         std::tie(b.auction, b.bidder, b.price, b.date_time, b.channel, b.url, b.extra);
}

// All of a bid's fields as a q0 / q18 row.
inline reference::Q0Row bid_row(const Bid& b) {
  return reference::Q0Row{b.auction, b.bidder, b.price, b.channel, b.url, b.date_time, b.extra};
}

}  // namespace sluice::nexmark::queries
