#include "q7.h"

#include <utility>
#include <vector>

namespace sluice::nexmark::queries {

namespace {

constexpr int64_t kWindowMs = 10'000;
// Step 1 is keyed by a shard of the auction id rather than the auction: the highest bids of a shard are as good a
// partial result, and a fixed number of keys per window keeps the window state and its timers small (keyed by
// auction, every auction of a window had an accumulator and a timer: most of the query's time).
constexpr int64_t kShards = 64;

using reference::Q7Row;

// The highest price seen and every bid at it.
struct HighestBids {
  int64_t window_start_ms = 0;
  int64_t price = -1;
  std::vector<Q7Row> bids;
  SLUICE_FIELDS(HighestBids, window_start_ms, price, bids)
};

inline int64_t window_start_of(int64_t t) { return t - ((t % kWindowMs) + kWindowMs) % kWindowMs; }

// Step 1: the bids at the highest price of one shard and window.
struct AddBid final : AggregateFunction<Q7Row, HighestBids, HighestBids> {
  HighestBids create_accumulator() const override { return {}; }
  void add(const Q7Row& bid, HighestBids& acc) const override {
    if (bid.price < acc.price) return;
    if (bid.price > acc.price) {
      acc.price = bid.price;
      acc.window_start_ms = window_start_of(bid.date_time);
      acc.bids.clear();
    }
    acc.bids.push_back(bid);
  }
  HighestBids get_result(const HighestBids& acc) const override { return acc; }
  void merge(HighestBids& acc, const HighestBids& other) const override {
    for (const Q7Row& b : other.bids) add(b, acc);
  }
};

// Step 2: the same over the partial results of one window.
struct MergeHighest final : AggregateFunction<HighestBids, HighestBids, HighestBids> {
  HighestBids create_accumulator() const override { return {}; }
  void add(const HighestBids& in, HighestBids& acc) const override { merge(acc, in); }
  HighestBids get_result(const HighestBids& acc) const override { return acc; }
  void merge(HighestBids& acc, const HighestBids& in) const override {
    if (in.price < acc.price) return;
    if (in.price > acc.price) {
      acc.price = in.price;
      acc.window_start_ms = in.window_start_ms;
      acc.bids.clear();
    }
    acc.bids.insert(acc.bids.end(), in.bids.begin(), in.bids.end());
  }
};

}  // namespace

DataStream<reference::Q7Row> q7(const DataStream<Event>& events) {
  auto only_bids = events.filter([](const Event& e) { return e.is_bid(); });
  only_bids.name("q7-only-bids").uid("q7-only-bids");
  auto bids = only_bids.map([](Event&& e) {
    Bid& b = e.mutable_bid();
    return Q7Row{b.auction, b.bidder, b.price, b.date_time, std::move(b.extra)};
  });
  bids.name("q7-bids").uid("q7-bids");
  auto per_shard = bids.key_by([](const Q7Row& b) { return b.auction % kShards; })
                         .window(TumblingEventTimeWindows::of(kWindowMs))
                         .aggregate(AddBid{});
  per_shard.name("q7-max-per-shard").uid("q7-max-per-shard");
  auto per_window = per_shard.key_by([](const HighestBids& h) { return h.window_start_ms; })
                        .window(TumblingEventTimeWindows::of(kWindowMs))
                        .aggregate(MergeHighest{});
  per_window.name("q7-max-per-window").uid("q7-max-per-window");
  auto rows = per_window.flat_map([](const HighestBids& h, Collector<Q7Row>& out) {
    for (const Q7Row& r : h.bids) out.collect(Q7Row(r));
  });
  rows.name("q7-rows").uid("q7-rows");
  return rows;
}

}  // namespace sluice::nexmark::queries
