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
    return build<T>(ReducingWindowContents<T, T, R, detail::PassThroughWindowFunction>(std::move(reducer), {}));
  }
  template <class R, class F>
  auto reduce(R reducer, F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<ProcessWindowFunction<T, OUT, K, W>, F>,
                  "reduce(R, F): F must derive from ProcessWindowFunction<T, OUT, K, W>");
    return build<OUT>(ReducingWindowContents<T, OUT, R, F>(std::move(reducer), std::move(fn)));
  }
  template <class A>
  auto aggregate(A agg) const {
    using ACC = typename A::accumulator_type;
    using RES = typename A::output_type;
    static_assert(std::is_base_of_v<AggregateFunction<T, ACC, RES>, A>,
                  "aggregate(A): A must derive from AggregateFunction<T, ACC, RES>");
    return build<RES>(AggregatingWindowContents<T, ACC, RES, RES, detail::PassThroughWindowFunction>(
        std::make_shared<const A>(std::move(agg)), {}));
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
    return build<OUT>(
        AggregatingWindowContents<T, ACC, RES, OUT, F>(std::make_shared<const A>(std::move(agg)), std::move(fn)));
  }
  template <class F>
  auto process(F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<ProcessWindowFunction<T, OUT, K, W>, F>,
                  "process(F): F must derive from ProcessWindowFunction<T, OUT, K, W>");
    return build<OUT>(ListWindowContents<T, OUT, F>(std::move(fn)));
  }

 private:
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
