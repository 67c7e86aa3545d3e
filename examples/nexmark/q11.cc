// q11: bids reduced to their bidder (the record keeps its timestamp), keyed by bidder, EventTimeSessionWindows
// of 10 s with an incremental count (one int64 accumulator per session, merged when sessions merge) and a
// process window function that adds the session's bounds.
#include "q11.h"

#include <vector>

#include "query_common.h"
#include "sluice/connectors/nexmark/reference/reference.h"
#include "sluice/windowing/windowed_stream.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q11Row;

class SessionRow final : public ProcessWindowFunction<int64_t, Q11Row, int64_t, TimeWindow> {
 public:
  void process(const int64_t& bidder, Context& ctx, const std::vector<int64_t>& counts,
               Collector<Q11Row>& out) override {
    out.collect(Q11Row{bidder, counts.front(), ctx.window().start_ms, ctx.window().end_ms});
  }
};

}  // namespace

DataStream<Q11Row> q11(const DataStream<Event>& events) {
  DataStream<int64_t> bidders = events.flat_map([](const Event& e, Collector<int64_t>& out) {
    if (e.is_bid()) out.collect(e.bid().bidder);
  });
  bidders.name("q11-bidders").uid("q11-bidders");
  DataStream<Q11Row> rows = bidders.key_by([](const int64_t& bidder) { return bidder; })
                                .window(EventTimeSessionWindows::with_gap(reference::kSessionGapMs))
                                .aggregate(CountBids{}, SessionRow{});
  rows.name("q11-sessions").uid("q11-sessions");
  return rows;
}

}  // namespace sluice::nexmark::queries
