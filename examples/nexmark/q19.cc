// q19: bids keyed by auction. Per auction: "q19-top" (ValueState of a fixed array of up to 10 (price, time,
// bidder, slot) in rank order: read per bid, no allocation) and "q19-bids" (MapState slot -> the whole bid:
// written when a bid enters the top 10, overwriting the slot of the bid it pushes out; read on exact ties of
// price, time and bidder, and for the rows).
#include "q19.h"

#include <array>
#include <utility>

#include "query_common.h"
#include "sluice/connectors/nexmark/reference/reference.h"
#include "sluice/functions/functions.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q19Row;
constexpr int64_t kTopN = reference::kQ19TopN;

struct Ranked {
  int64_t price = 0;
  int64_t date_time = 0;
  int64_t bidder = 0;
  int64_t slot = 0;  // key of the whole bid in "q19-bids"
  SLUICE_FIELDS(Ranked, price, date_time, bidder, slot)
};

struct TopBids {
  std::array<Ranked, kTopN> ranked{};
  int64_t size = 0;
  SLUICE_FIELDS(TopBids, ranked, size)
};

class TopBidsPerAuction final : public KeyedProcessFunction<int64_t, Bid, Q19Row> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    top_ = &get_state(ValueStateDescriptor<TopBids>("q19-top"));
    bids_ = &get_map_state(MapStateDescriptor<int64_t, Bid>("q19-bids"));
  }

  void process_element(const Bid& bid, KeyedProcessContext<int64_t>& ctx, Collector<Q19Row>&) override {
    TopBids top = top_->value().value_or(TopBids{});
    int64_t pos = 0;
    while (pos < top.size && !ranks_before(bid, top.ranked[static_cast<size_t>(pos)])) ++pos;
    if (pos == kTopN) return;
    if (top.size == 0) ctx.timer_service().register_event_time_timer(kEndOfInputMs);
    // Slots 0 .. size-1 are in use while the list fills; once full, the new bid takes the slot of the last one.
    const int64_t slot = top.size < kTopN ? top.size : top.ranked[kTopN - 1].slot;
    if (top.size < kTopN) ++top.size;
    for (int64_t i = top.size - 1; i > pos; --i) top.ranked[static_cast<size_t>(i)] = top.ranked[static_cast<size_t>(i - 1)];
    top.ranked[static_cast<size_t>(pos)] = Ranked{bid.price, bid.date_time, bid.bidder, slot};
    top_->update(top);
    bids_->put(slot, bid);
  }

  void on_timer(int64_t, KeyedOnTimerContext<int64_t>&, Collector<Q19Row>& out) override {
    const std::optional<TopBids> top = top_->value();
    if (!top) return;
    for (int64_t i = 0; i < top->size; ++i) {
      Bid b = std::move(*bids_->get(top->ranked[static_cast<size_t>(i)].slot));
      out.collect(Q19Row{b.auction, b.bidder, b.price, std::move(b.channel), std::move(b.url), b.date_time,
                         std::move(b.extra), i + 1});
    }
  }

 private:
  // Price descending, then time ascending, then the canonical order (bidder, then the strings: the auction is
  // the key and price and time are equal by then). An equal bid does not rank before.
  bool ranks_before(const Bid& bid, const Ranked& r) const {
    if (bid.price != r.price) return bid.price > r.price;
    if (bid.date_time != r.date_time) return bid.date_time < r.date_time;
    if (bid.bidder != r.bidder) return bid.bidder < r.bidder;
    return canonical_compare(bid, *bids_->get(r.slot)) < 0;
  }

  ValueState<TopBids>* top_ = nullptr;
  MapState<int64_t, Bid>* bids_ = nullptr;
};

}  // namespace

DataStream<Q19Row> q19(const DataStream<Event>& events) {
  DataStream<Bid> bids = events.flat_map([](const Event& e, Collector<Bid>& out) {
    if (e.is_bid()) out.collect(e.bid());
  });
  bids.name("q19-bids").uid("q19-bids");
  DataStream<Q19Row> rows = bids.key_by([](const Bid& b) { return b.auction; }).process(TopBidsPerAuction{});
  rows.name("q19-top-bids").uid("q19-top-bids");
  return rows;
}

}  // namespace sluice::nexmark::queries
