// q17: bids reduced to (auction, day number, price), keyed by (auction, day), with the statistics in one
// ValueState of integers per key ("q17-stats"); the day's string is formatted only for the final row.
#include "q17.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "query_common.h"
#include "sluice/functions/functions.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q17Row;

constexpr int64_t kDayMs = 86'400'000;
constexpr int64_t kRank2MinPrice = 10'000;     // rank1: price < 10,000
constexpr int64_t kRank3MinPrice = 1'000'000;  // rank3: price >= 1,000,000

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

struct DayBid {
  int64_t auction = 0;
  int64_t day = 0;  // days since the epoch, UTC
  int64_t price = 0;
  SLUICE_FIELDS(DayBid, auction, day, price)
};

struct DayStats {
  int64_t total = 0;
  int64_t rank1 = 0;
  int64_t rank2 = 0;
  int64_t rank3 = 0;
  int64_t min_price = 0;
  int64_t max_price = 0;
  int64_t sum = 0;
  SLUICE_FIELDS(DayStats, total, rank1, rank2, rank3, min_price, max_price, sum)
};

using AuctionDay = std::pair<int64_t, int64_t>;

class AuctionDayStats final : public KeyedProcessFunction<AuctionDay, DayBid, Q17Row> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    stats_ = &get_state(ValueStateDescriptor<DayStats>("q17-stats"));
  }
  void process_element(const DayBid& b, KeyedProcessContext<AuctionDay>& ctx, Collector<Q17Row>&) override {
    DayStats s = stats_->value().value_or(DayStats{});
    if (s.total == 0) {
      ctx.timer_service().register_event_time_timer(kEndOfInputMs);
      s.min_price = b.price;
      s.max_price = b.price;
    }
    s.total += 1;
    s.rank1 += b.price < kRank2MinPrice ? 1 : 0;
    s.rank2 += b.price >= kRank2MinPrice && b.price < kRank3MinPrice ? 1 : 0;
    s.rank3 += b.price >= kRank3MinPrice ? 1 : 0;
    s.min_price = std::min(s.min_price, b.price);
    s.max_price = std::max(s.max_price, b.price);
    s.sum += b.price;
    stats_->update(s);
  }
  void on_timer(int64_t, KeyedOnTimerContext<AuctionDay>& ctx, Collector<Q17Row>& out) override {
    std::optional<DayStats> s = stats_->value();
    if (!s) return;
    const auto& [auction, day] = ctx.current_key();
    out.collect(Q17Row{auction, utc_day_of(day), s->total, s->rank1, s->rank2, s->rank3, s->min_price, s->max_price,
                       s->sum / s->total, s->sum});
  }

 private:
  ValueState<DayStats>* stats_ = nullptr;
};

}  // namespace

std::string utc_day_of(int64_t day_number) {
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{day_number}}};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return buf;
}

DataStream<Q17Row> q17(const DataStream<Event>& events) {
  DataStream<DayBid> bids = events.flat_map([](const Event& e, Collector<DayBid>& out) {
    if (!e.is_bid()) return;
    const Bid& b = e.bid();
    out.collect(DayBid{b.auction, floor_div(b.date_time, kDayMs), b.price});
  });
  bids.name("q17-bids").uid("q17-bids");
  DataStream<Q17Row> rows =
      bids.key_by([](const DayBid& b) { return AuctionDay{b.auction, b.day}; }).process(AuctionDayStats{});
  rows.name("q17-auction-day-stats").uid("q17-auction-day-stats");
  return rows;
}

}  // namespace sluice::nexmark::queries
