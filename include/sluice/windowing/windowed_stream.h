// WindowedStream: keyed_stream.window(assigner) and what follows (Flink's WindowedStream).
//
//   auto counts = bids.key_by([](const Bid& b) { return b.auction; })
//                     .window(TumblingEventTimeWindows::of(10'000))
//                     .allowed_lateness(5'000)
//                     .side_output_late_data(late_tag)
//                     .aggregate(CountBids{});
//   auto late = counts.get_side_output(late_tag);
//
// window(assigner) picks the assigner's default trigger (event time, processing time, or never for
// GlobalWindows); trigger(t) replaces it (builtin_triggers.h, or a user class deriving from Trigger<K, T, W>).
// allowed_lateness(ms) applies to event-time windows only (>= 0, default 0). side_output_late_data(tag) sends
// late elements to `tag` instead of counting them in numLateRecordsDropped. The window function ends the chain
// and returns the DataStream of its results:
//   reduce(R)            R: (const T&, const T&) -> T                      -> DataStream<T>
//   reduce(R, F)         F: ProcessWindowFunction<T, OUT, K, W>           -> DataStream<OUT>
//   aggregate(A)         A: AggregateFunction<T, ACC, RES>                 -> DataStream<RES>
//   aggregate(A, F)      F: ProcessWindowFunction<RES, OUT, K, W>         -> DataStream<OUT>
//   process(F)           F: ProcessWindowFunction<T, OUT, K, W>           -> DataStream<OUT> (keeps every element)
// reduce and aggregate on sliding event-time windows (slide < size) with the default trigger share partial results
// across panes (SlicingWindowOperator); every other combination keeps one accumulator per window (WindowOperator).
// Errors: invalid arguments throw std::invalid_argument while the program is built. Thread-safety: build a program
// from one thread.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "sluice/api/datastream.h"
#include "sluice/windowing/builtin_triggers.h"
#include "sluice/windowing/slicing_window_operator.h"
#include "sluice/windowing/window_assigners.h"
#include "sluice/windowing/window_function.h"
#include "sluice/windowing/window_operator.h"

namespace sluice {

template <class K, class T, class KS, class Assigner, class Trig>
class WindowedStream {
 public:
  using W = typename Assigner::window_type;

  WindowedStream(DataStream<T> input, KS key_selector, Assigner assigner, Trig trigger, WindowOperatorConfig config)
      : input_(std::move(input)),
        ks_(std::move(key_selector)),
        assigner_(std::move(assigner)),
        trigger_(std::move(trigger)),
        config_(std::move(config)) {}

  template <class Trig2>
  WindowedStream<K, T, KS, Assigner, Trig2> trigger(Trig2 t) const {
    if (Assigner::kIsMerging && !t.can_merge()) {
      throw std::invalid_argument("trigger(): session (merging) windows need a trigger whose can_merge() is true");
    }
    return WindowedStream<K, T, KS, Assigner, Trig2>(input_, ks_, assigner_, std::move(t), config_);
  }
  WindowedStream allowed_lateness(int64_t lateness_ms) const {
    if (lateness_ms < 0) {
      throw std::invalid_argument("allowed_lateness: expected >= 0 ms, got " + std::to_string(lateness_ms));
    }
    WindowedStream s = *this;
    s.config_.allowed_lateness_ms = Assigner::kIsEventTime ? lateness_ms : 0;
    return s;
  }
  WindowedStream side_output_late_data(const OutputTag<T>& tag) const {
    if (tag.id().empty()) throw std::invalid_argument("side_output_late_data: the tag's id is empty");
    WindowedStream s = *this;
    s.config_.late_data_tag = tag.id();
    return s;
  }

  template <class R>
  DataStream<T> reduce(R reducer) const {
    using F = detail::PassThroughWindowFunction;
    return build_incremental<T>(ReducingWindowContents<T, T, R, F>(reducer, {}), ReducingPanes<T, T, R, F>(reducer, {}));
  }
  template <class R, class F>
  auto reduce(R reducer, F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<ProcessWindowFunction<T, OUT, K, W>, F>,
                  "reduce(R, F): F must derive from ProcessWindowFunction<T, OUT, K, W>");
    return build_incremental<OUT>(ReducingWindowContents<T, OUT, R, F>(reducer, fn), ReducingPanes<T, OUT, R, F>(reducer, fn));
  }
  template <class A>
  auto aggregate(A agg) const {
    using ACC = typename A::accumulator_type;
    using RES = typename A::output_type;
    using F = detail::PassThroughWindowFunction;
    static_assert(std::is_base_of_v<AggregateFunction<T, ACC, RES>, A>,
                  "aggregate(A): A must derive from AggregateFunction<T, ACC, RES>");
    auto shared = std::make_shared<const A>(std::move(agg));
    return build_incremental<RES>(AggregatingWindowContents<T, ACC, RES, RES, F>(shared, {}),
                                  AggregatingPanes<T, ACC, RES, RES, F>(shared, {}));
  }
  template <class A, class F>
  auto aggregate(A agg, F fn) const {
    using ACC = typename A::accumulator_type;
    using RES = typename A::output_type;
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<AggregateFunction<T, ACC, RES>, A>,
                  "aggregate(A, F): A must derive from AggregateFunction<T, ACC, RES>");
    static_assert(std::is_base_of_v<ProcessWindowFunction<RES, OUT, K, W>, F>,
                  "aggregate(A, F): F must derive from ProcessWindowFunction<RES, OUT, K, W>");
    auto shared = std::make_shared<const A>(std::move(agg));
    return build_incremental<OUT>(AggregatingWindowContents<T, ACC, RES, OUT, F>(shared, fn),
                                  AggregatingPanes<T, ACC, RES, OUT, F>(shared, fn));
  }
  template <class F>
  auto process(F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<ProcessWindowFunction<T, OUT, K, W>, F>,
                  "process(F): F must derive from ProcessWindowFunction<T, OUT, K, W>");
    return build<OUT>(ListWindowContents<T, OUT, F>(std::move(fn)));
  }

 private:
  // Sliding event-time windows (slide < size) with the event-time trigger share partial results across panes
  // (slicing_window_operator.h); everything else keeps one accumulator per window.
  template <class OUT, class Contents, class Panes>
  DataStream<OUT> build_incremental(Contents contents, Panes panes) const {
    (void)panes;  // unused on the per-window path
    if constexpr (std::is_same_v<Assigner, SlidingEventTimeWindows> && std::is_same_v<Trig, EventTimeTrigger>) {
      if (assigner_.slide_ms() < assigner_.size_ms()) {
        using Op = SlicingWindowOperator<K, T, OUT, KS, Panes>;
        return input_.template one_input<OUT>(
            "Window",
            [ks = ks_, a = assigner_, p = std::move(panes), cfg = config_]() { return std::make_unique<Op>(ks, a, p, cfg); },
            true);
      }
    }
    return build<OUT>(std::move(contents));
  }

  template <class OUT, class Contents>
  DataStream<OUT> build(Contents contents) const {
    using Op = WindowOperator<K, T, OUT, KS, Assigner, Trig, Contents>;
    return input_.template one_input<OUT>(
        "Window",
        [ks = ks_, a = assigner_, t = trigger_, c = std::move(contents), cfg = config_]() {
          return std::make_unique<Op>(ks, a, t, c, cfg);
        },
        true);
  }

  DataStream<T> input_;
  KS ks_;
  Assigner assigner_;
  Trig trigger_;
  WindowOperatorConfig config_;
};

// KeyedStream::window (declared in api/datastream.h).
template <class K, class T, class KS>
template <class Assigner>
auto KeyedStream<K, T, KS>::window(Assigner assigner) const {
  auto trigger = assigner.default_trigger();
  return WindowedStream<K, T, KS, Assigner, decltype(trigger)>(input_, ks_, std::move(assigner), std::move(trigger),
                                                              WindowOperatorConfig{});
}

}  // namespace sluice
