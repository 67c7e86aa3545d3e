#include "q5.h"

#include <vector>

#include "query_common.h"

namespace sluice::nexmark::queries {

namespace {

constexpr int64_t kWindowMs = 10'000;
constexpr int64_t kSlideMs = 2'000;

using reference::Q5Row;

// The count with its auction and window.
struct WithWindow final : ProcessWindowFunction<int64_t, Q5Row, int64_t, TimeWindow> {
  void process(const int64_t& auction, Context& ctx, const std::vector<int64_t>& counts, Collector<Q5Row>& out) override {
    out.collect(Q5Row{ctx.window().start_ms, ctx.window().end_ms, auction, counts.front()});
  }
};

// The rows of one window at its maximum count: every auction that reaches it.
struct HottestAcc {
  int64_t num = 0;
  std::vector<Q5Row> rows;
  SLUICE_FIELDS(HottestAcc, num, rows)
};
struct KeepHottest final : AggregateFunction<Q5Row, HottestAcc, std::vector<Q5Row>> {
  HottestAcc create_accumulator() const override { return {}; }
  void add(const Q5Row& row, HottestAcc& acc) const override {
    if (row.num > acc.num) {
      acc.num = row.num;
      acc.rows.clear();
    }
    if (row.num == acc.num) acc.rows.push_back(row);
  }
  std::vector<Q5Row> get_result(const HottestAcc& acc) const override { return acc.rows; }
  void merge(HottestAcc& target, const HottestAcc& other) const override {
    for (const Q5Row& r : other.rows) add(r, target);
  }
};

}  // namespace

DataStream<reference::Q5Row> q5(const DataStream<Event>& events) {
  auto auctions = events.flat_map([](const Event& e, Collector<int64_t>& out) {
    if (e.is_bid()) out.collect(e.bid().auction);
  });
  auctions.name("q5-bid-auctions").uid("q5-bid-auctions");
  auto counts = auctions.key_by([](const int64_t& auction) { return auction; })
                    .window(SlidingEventTimeWindows::of(kWindowMs, kSlideMs))
                    .aggregate(CountBids{}, WithWindow{});
  counts.name("q5-count-per-window").uid("q5-count-per-window");
  auto hottest = counts.key_by([](const Q5Row& r) { return r.window_start_ms; })
                     .window(TumblingEventTimeWindows::of(kSlideMs))
                     .aggregate(KeepHottest{});
  hottest.name("q5-max-per-window").uid("q5-max-per-window");
  auto rows = hottest.flat_map([](const std::vector<Q5Row>& rs, Collector<Q5Row>& out) {
    for (const Q5Row& r : rs) out.collect(Q5Row(r));
  });
  rows.name("q5-rows").uid("q5-rows");
  return rows;
}

}  // namespace sluice::nexmark::queries
