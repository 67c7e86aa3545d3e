// q18: bids keyed by (bidder, auction). Per key: "q18-last-key" (time and price of the kept bid, read per bid)
// and "q18-last" (the whole kept bid, read only on an exact tie of time and price, and for the row).
#include "q18.h"

#include <utility>

#include "query_common.h"
#include "sluice/functions/functions.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q18Row;

struct LastKey {
  int64_t date_time = 0;
  int64_t price = 0;
  SLUICE_FIELDS(LastKey, date_time, price)
};

using BidderAuction = std::pair<int64_t, int64_t>;

class LastBid final : public KeyedProcessFunction<BidderAuction, Bid, Q18Row> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    last_key_ = &get_state(ValueStateDescriptor<LastKey>("q18-last-key"));
    last_ = &get_state(ValueStateDescriptor<Bid>("q18-last"));
  }
  void process_element(const Bid& bid, KeyedProcessContext<BidderAuction>& ctx, Collector<Q18Row>&) override {
    const std::optional<LastKey> cur = last_key_->value();
    bool later = !cur || bid.date_time > cur->date_time || (bid.date_time == cur->date_time && bid.price > cur->price);
    if (!later && bid.date_time == cur->date_time && bid.price == cur->price) {
      later = canonical_compare(bid, *last_->value()) < 0;
    }
    if (!later) return;
    if (!cur) ctx.timer_service().register_event_time_timer(kEndOfInputMs);
    last_key_->update(LastKey{bid.date_time, bid.price});
    last_->update(bid);
  }
  void on_timer(int64_t, KeyedOnTimerContext<BidderAuction>&, Collector<Q18Row>& out) override {
    if (std::optional<Bid> b = last_->value()) {
      out.collect(Q18Row{b->auction, b->bidder, b->price, std::move(b->channel), std::move(b->url), b->date_time,
                         std::move(b->extra)});
    }
  }

 private:
  ValueState<LastKey>* last_key_ = nullptr;
  ValueState<Bid>* last_ = nullptr;
};

}  // namespace

DataStream<Q18Row> q18(const DataStream<Event>& events) {
  DataStream<Bid> bids = events.flat_map([](const Event& e, Collector<Bid>& out) {
    if (e.is_bid()) out.collect(e.bid());
  });
  bids.name("q18-bids").uid("q18-bids");
  DataStream<Q18Row> rows =
      bids.key_by([](const Bid& b) { return BidderAuction{b.bidder, b.auction}; }).process(LastBid{});
  rows.name("q18-last-bid").uid("q18-last-bid");
  return rows;
}

}  // namespace sluice::nexmark::queries
