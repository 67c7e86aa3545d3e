// q4: two keyed stages.
// 1. Auctions and bids keyed by auction id: "q4-terms" (the auction's times, reserve and category),
//    "q4-max-price" (the highest valid price so far) and "q4-early" ((time, price) of bids that came before
//    their auction). At `expires` the winner's (category, price) goes downstream and the state is cleared; early
//    bids are dropped once the watermark passes them with the auction still unknown (as in q9).
// 2. Winning prices keyed by category: "q4-sum-count" in ValueState, emitted at the end-of-input timer.
#include "q4.h"

#include <utility>
#include <vector>

#include "query_common.h"
#include "sluice/functions/functions.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q4Row;

struct AuctionTerms {
  int64_t date_time = 0;
  int64_t expires = 0;
  int64_t reserve = 0;
  int64_t category = 0;
  SLUICE_FIELDS(AuctionTerms, date_time, expires, reserve, category)
};

struct TimedPrice {
  int64_t date_time = 0;
  int64_t price = 0;
  SLUICE_FIELDS(TimedPrice, date_time, price)
};

struct WinningPrice {
  int64_t category = 0;
  int64_t price = 0;
  SLUICE_FIELDS(WinningPrice, category, price)
};

struct SumCount {
  int64_t sum = 0;
  int64_t count = 0;
  SLUICE_FIELDS(SumCount, sum, count)
};

class WinningPrices final : public KeyedProcessFunction<int64_t, Event, WinningPrice> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    terms_ = &get_state(ValueStateDescriptor<AuctionTerms>("q4-terms"));
    max_price_ = &get_state(ValueStateDescriptor<int64_t>("q4-max-price"));
    early_ = &get_list_state(ListStateDescriptor<TimedPrice>("q4-early"));
  }

  void process_element(const Event& e, KeyedProcessContext<int64_t>& ctx, Collector<WinningPrice>&) override {
    if (e.is_bid()) {
      const Bid& bid = e.bid();
      if (std::optional<AuctionTerms> terms = terms_->value()) {
        consider(TimedPrice{bid.date_time, bid.price}, *terms);
      } else {
        early_->add(TimedPrice{bid.date_time, bid.price});
        ctx.timer_service().register_event_time_timer(bid.date_time);
      }
      return;
    }
    const Auction& a = e.auction();
    if (terms_->value()) return;  // a repeated auction id: the first occurrence counts
    const AuctionTerms terms{a.date_time, a.expires, a.reserve, a.category};
    terms_->update(terms);
    ctx.timer_service().register_event_time_timer(a.expires);
    std::vector<TimedPrice> early = early_->get();
    if (early.empty()) return;
    for (const TimedPrice& bid : early) consider(bid, terms);
    early_->clear();
  }

  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>&, Collector<WinningPrice>& out) override {
    if (std::optional<AuctionTerms> terms = terms_->value()) {
      if (ts != terms->expires) return;  // an early bid's timer
      if (std::optional<int64_t> price = max_price_->value()) out.collect(WinningPrice{terms->category, *price});
      terms_->clear();
      max_price_->clear();
      return;
    }
    std::vector<TimedPrice> early = early_->get();
    std::erase_if(early, [ts](const TimedPrice& b) { return b.date_time <= ts; });
    early_->update(std::move(early));
  }

 private:
  void consider(const TimedPrice& bid, const AuctionTerms& t) {
    if (bid.date_time < t.date_time || bid.date_time > t.expires || bid.price < t.reserve) return;
    const std::optional<int64_t> cur = max_price_->value();
    if (!cur || bid.price > *cur) max_price_->update(bid.price);
  }

  ValueState<AuctionTerms>* terms_ = nullptr;
  ValueState<int64_t>* max_price_ = nullptr;
  ListState<TimedPrice>* early_ = nullptr;
};

class CategoryAverage final : public KeyedProcessFunction<int64_t, WinningPrice, Q4Row> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    sum_count_ = &get_state(ValueStateDescriptor<SumCount>("q4-sum-count"));
  }
  void process_element(const WinningPrice& w, KeyedProcessContext<int64_t>& ctx, Collector<Q4Row>&) override {
    SumCount acc = sum_count_->value().value_or(SumCount{});
    if (acc.count == 0) ctx.timer_service().register_event_time_timer(kEndOfInputMs);
    acc.sum += w.price;
    acc.count += 1;
    sum_count_->update(acc);
  }
  void on_timer(int64_t, KeyedOnTimerContext<int64_t>& ctx, Collector<Q4Row>& out) override {
    if (std::optional<SumCount> acc = sum_count_->value()) {
      out.collect(Q4Row{ctx.current_key(), acc->sum / acc->count});
    }
  }

 private:
  ValueState<SumCount>* sum_count_ = nullptr;
};

}  // namespace

DataStream<Q4Row> q4(const DataStream<Event>& events) {
  DataStream<Event> sides = events.filter([](const Event& e) { return !e.is_person(); });
  sides.name("q4-auctions-and-bids").uid("q4-auctions-and-bids");
  DataStream<WinningPrice> winners =
      sides.key_by([](const Event& e) { return e.is_bid() ? e.bid().auction : e.auction().id; })
          .process(WinningPrices{});
  winners.name("q4-winning-prices").uid("q4-winning-prices");
  DataStream<Q4Row> rows =
      winners.key_by([](const WinningPrice& w) { return w.category; }).process(CategoryAverage{});
  rows.name("q4-category-average").uid("q4-category-average");
  return rows;
}

}  // namespace sluice::nexmark::queries
