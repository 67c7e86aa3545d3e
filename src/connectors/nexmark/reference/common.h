// Helpers shared by the reference queries (internal): window arithmetic, the canonical bid order used for
// tie-breaks, and re-reading kept bids by event number.
#pragma once

#include <compare>
#include <cstdint>
#include <tuple>

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/event_input.h"

namespace sluice::nexmark::reference::detail {

// Floor modulo: the result is in [0, m) also for negative t (hand-built inputs may use any time).
constexpr int64_t floor_mod(int64_t t, int64_t m) {
  const int64_t r = t % m;
  return r < 0 ? r + m : r;
}

// Start of the epoch-aligned window of `size_ms` (or of the slide `size_ms`) that contains t.
constexpr int64_t aligned_start(int64_t t, int64_t size_ms) { return t - floor_mod(t, size_ms); }

// The canonical bid order of docs/nexmark.md: (auction, bidder, price, date_time, channel, url, extra).
inline std::strong_ordering canonical_compare(const Bid& a, const Bid& b) {
  return std::tie(a.auction, a.bidder, a.price, a.date_time, a.channel, a.url, a.extra) <=>
         std::tie(b.auction, b.bidder, b.price, b.date_time, b.channel, b.url, b.extra);
}

// Reads kept events back by event number, with two scratch events so that two bids can be compared.
class EventReader {
 public:
  explicit EventReader(const EventInput& input) : input_(input) {}
  const Event& first(int64_t n) { return input_.at(n, scratch_a_); }
  const Event& second(int64_t n) { return input_.at(n, scratch_b_); }

  // canonical_compare of the bids with event numbers a and b.
  std::strong_ordering compare_bids(int64_t a, int64_t b) {
    return canonical_compare(first(a).bid(), second(b).bid());
  }

 private:
  const EventInput& input_;
  Event scratch_a_;
  Event scratch_b_;
};

// Calls fn(event_number, const Event&) for every event of this kind, skipping the other kinds without
// generating them.
template <class Fn>
void for_each_of_kind(const EventInput& input, EventKind kind, Fn&& fn) {
  Event scratch;
  for (int64_t n = 0; n < input.size(); ++n) {
    if (input.kind(n) != kind) continue;
    fn(n, input.at(n, scratch));
  }
}

// fn(event_number, const Bid&) for every bid.
template <class Fn>
void for_each_bid(const EventInput& input, Fn&& fn) {
  for_each_of_kind(input, EventKind::kBid, [&](int64_t n, const Event& e) { fn(n, e.bid()); });
}

}  // namespace sluice::nexmark::reference::detail
