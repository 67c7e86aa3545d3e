// q12: bids reduced to their bidder, keyed by bidder, TumblingProcessingTimeWindows with an incremental count and
// a process window function that adds the window's bounds. The trigger is the processing-time trigger plus an
// event-time timer at the end of input: the built-in one drops windows not yet due when a bounded input ends (as
// Flink does), which would leave the tail's bids uncounted.
#include "q12.h"

#include <vector>

#include "query_common.h"
#include "sluice/windowing/windowed_stream.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q12Row;

class WindowRow final : public ProcessWindowFunction<int64_t, Q12Row, int64_t, TimeWindow> {
 public:
  void process(const int64_t& bidder, Context& ctx, const std::vector<int64_t>& counts,
               Collector<Q12Row>& out) override {
    out.collect(Q12Row{bidder, counts.front(), ctx.window().start_ms, ctx.window().end_ms});
  }
};

// Fires (and purges) when the clock passes the window's end, or at the final watermark of a bounded input,
// whichever comes first. Built-in style (templates, no virtual calls).
class ProcessingTimeOrEndOfInputTrigger {
 public:
  template <class T, class K, class W>
  TriggerResult on_element(const T&, int64_t, const W& window, TriggerContext<K, W>& ctx) {
    ctx.register_processing_time_timer(window.max_timestamp());
    ctx.register_event_time_timer(kEndOfInputMs);
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_event_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kFireAndPurge;
  }
  template <class K, class W>
  TriggerResult on_processing_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kFireAndPurge;
  }
  bool can_merge() const { return false; }
  template <class K, class W>
  void clear(const W& window, TriggerContext<K, W>& ctx) {
    ctx.delete_processing_time_timer(window.max_timestamp());
    ctx.delete_event_time_timer(kEndOfInputMs);
  }
};

}  // namespace

DataStream<Q12Row> q12(const DataStream<Event>& events) { return q12(events, Q12Options{}); }

DataStream<Q12Row> q12(const DataStream<Event>& events, const Q12Options& options) {
  DataStream<int64_t> bidders = events.flat_map([](const Event& e, Collector<int64_t>& out) {
    if (e.is_bid()) out.collect(e.bid().bidder);
  });
  bidders.name("q12-bidders").uid("q12-bidders");
  DataStream<Q12Row> rows = bidders.key_by([](const int64_t& bidder) { return bidder; })
                                .window(TumblingProcessingTimeWindows::of(options.window_size_ms))
                                .trigger(ProcessingTimeOrEndOfInputTrigger{})
                                .aggregate(CountBids{}, WindowRow{});
  rows.name("q12-windows").uid("q12-windows");
  return rows;
}

}  // namespace sluice::nexmark::queries
