// q9: auctions and bids keyed by auction id. Per auction, in keyed state:
//   "q9-terms"    the auction's date_time, expires and reserve (read per bid: a few integers, no strings),
//   "q9-auction"  the whole auction (read once, for the row),
//   "q9-best-key" the leading bid's price, time and bidder (read per bid), "q9-best" the whole leading bid
//                 (read only on an exact tie of price, time and bidder, and for the row),
//   "q9-early"    bids that arrived before their auction.
// Timers: at `expires` the row is emitted and the auction's state cleared. An early bid registers a timer at its
// own time: once the watermark passes it while the auction is still unknown, that auction (whose date_time may
// not follow the bid's) can no longer make the bid valid, so it is dropped. Bids after an auction's expiry are
// dropped the same way, so the state stays bounded by the auctions in flight.
#include "q9.h"

#include <utility>
#include <vector>

#include "query_common.h"
#include "sluice/functions/functions.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q9Row;

struct AuctionTerms {
  int64_t date_time = 0;
  int64_t expires = 0;
  int64_t reserve = 0;
  SLUICE_FIELDS(AuctionTerms, date_time, expires, reserve)
};

struct BestKey {
  int64_t price = 0;
  int64_t date_time = 0;
  int64_t bidder = 0;
  SLUICE_FIELDS(BestKey, price, date_time, bidder)
};

class WinningBids final : public KeyedProcessFunction<int64_t, Event, Q9Row> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    terms_ = &get_state(ValueStateDescriptor<AuctionTerms>("q9-terms"));
    auction_ = &get_state(ValueStateDescriptor<Auction>("q9-auction"));
    best_key_ = &get_state(ValueStateDescriptor<BestKey>("q9-best-key"));
    best_ = &get_state(ValueStateDescriptor<Bid>("q9-best"));
    early_ = &get_list_state(ListStateDescriptor<Bid>("q9-early"));
  }

  void process_element(const Event& e, KeyedProcessContext<int64_t>& ctx, Collector<Q9Row>&) override {
    if (e.is_bid()) {
      const Bid& bid = e.bid();
      if (std::optional<AuctionTerms> terms = terms_->value()) {
        consider(bid, *terms);
      } else {
        early_->add(bid);
        ctx.timer_service().register_event_time_timer(bid.date_time);
      }
      return;
    }
    const Auction& a = e.auction();
    if (terms_->value()) return;  // a repeated auction id: the first occurrence counts
    const AuctionTerms terms{a.date_time, a.expires, a.reserve};
    terms_->update(terms);
    auction_->update(a);
    ctx.timer_service().register_event_time_timer(a.expires);
    std::vector<Bid> early = early_->get();
    if (early.empty()) return;
    for (const Bid& bid : early) consider(bid, terms);
    early_->clear();
  }

  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>&, Collector<Q9Row>& out) override {
    if (std::optional<AuctionTerms> terms = terms_->value()) {
      if (ts != terms->expires) return;  // an early bid's timer; the bid was folded in when the auction came
      if (best_key_->value()) emit(out);
      terms_->clear();
      auction_->clear();
      best_key_->clear();
      best_->clear();
      return;
    }
    // No auction (yet, or any more): early bids at or before the watermark can no longer win.
    std::vector<Bid> early = early_->get();
    std::erase_if(early, [ts](const Bid& b) { return b.date_time <= ts; });
    early_->update(std::move(early));
  }

 private:
  void consider(const Bid& bid, const AuctionTerms& t) {
    if (bid.date_time < t.date_time || bid.date_time > t.expires || bid.price < t.reserve) return;
    const std::optional<BestKey> cur = best_key_->value();
    bool better = !cur || bid.price > cur->price || (bid.price == cur->price && bid.date_time < cur->date_time);
    if (!better && bid.price == cur->price && bid.date_time == cur->date_time) {
      // Exact tie on price and time: the canonically smaller bid (auction, bidder, price, time, strings) wins.
      better = bid.bidder != cur->bidder ? bid.bidder < cur->bidder : canonical_compare(bid, *best_->value()) < 0;
    }
    if (!better) return;
    best_key_->update(BestKey{bid.price, bid.date_time, bid.bidder});
    best_->update(bid);
  }

  void emit(Collector<Q9Row>& out) {
    Auction a = std::move(*auction_->value());
    Bid b = std::move(*best_->value());
    out.collect(Q9Row{a.id, std::move(a.item_name), std::move(a.description), a.initial_bid, a.reserve, a.date_time,
                      a.expires, a.seller, a.category, std::move(a.extra), b.auction, b.bidder, b.price, b.date_time,
                      std::move(b.extra)});
  }

  ValueState<AuctionTerms>* terms_ = nullptr;
  ValueState<Auction>* auction_ = nullptr;
  ValueState<BestKey>* best_key_ = nullptr;
  ValueState<Bid>* best_ = nullptr;
  ListState<Bid>* early_ = nullptr;
};

}  // namespace

DataStream<Q9Row> q9(const DataStream<Event>& events) {
  DataStream<Event> sides = events.filter([](const Event& e) { return !e.is_person(); });
  sides.name("q9-auctions-and-bids").uid("q9-auctions-and-bids");
  DataStream<Q9Row> rows =
      sides.key_by([](const Event& e) { return e.is_bid() ? e.bid().auction : e.auction().id; })
          .process(WinningBids{});
  rows.name("q9-winning-bids").uid("q9-winning-bids");
  return rows;
}

}  // namespace sluice::nexmark::queries
