// Two-input transformations (Flink's ConnectedStreams and KeyedStream#intervalJoin):
//
//   a.connect(b)                               ConnectedStreams<A, B>
//     .map(f1, f2) / .flat_map(f1, f2)         one operator, f1 for a's records, f2 for b's
//     .process(CoProcessFunction<A, B, OUT>)   no keyed state, no timers
//     .key_by(ka, kb)                          KeyedConnectedStreams: both sides hash-partitioned by key
//       .process(KeyedCoProcessFunction<K, A, B, OUT>)   keyed state and timers shared by both inputs per key
//   a.key_by(ka).interval_join(b.key_by(kb)).between(lower_ms, upper_ms)
//     [.lower_bound_exclusive()] [.upper_bound_exclusive()] [.side_output_left_late_data(tag)] [...right...]
//     .process(ProcessJoinFunction<A, B, OUT>)
//
// The two-input operator heads its own task; each input keeps its own partitioning (forward, rebalance, broadcast,
// key_by), and the two inputs may come from operators of different parallelism. Event time: the operator's
// watermark is the minimum of its two inputs' (an idle input holds nothing back); see
// operators/two_input_stream_operator.h, and docs/joins.md for the semantics of each operator. Thread-safety:
// build a program from one thread.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "sluice/api/datastream.h"
#include "sluice/functions/co_functions.h"
#include "sluice/operators/co_process_operators.h"
#include "sluice/operators/interval_join_operator.h"

namespace sluice {

namespace detail {

// Adds a two-input node fed by `first` (input 1) and `second` (input 2). `keyed`: it gets a key-group range.
// Factory returns a std::unique_ptr to a TwoInputStreamOperator<IN1, IN2, OUT>.
template <class OUT, class IN1, class IN2, class Factory>
DataStream<OUT> two_input(const DataStream<IN1>& first, const DataStream<IN2>& second, std::string kind,
                          Factory make_op, bool keyed) {
  using OpT = typename std::invoke_result_t<Factory&>::element_type;
  static_assert(std::is_base_of_v<TwoInputStreamOperator<IN1, IN2, OUT>, OpT>,
                "a two-input transformation needs a TwoInputStreamOperator<IN1, IN2, OUT>");
  const std::shared_ptr<StreamGraph>& graph = first.graph();
  if (graph != second.graph()) {
    throw std::logic_error("connect: both streams must come from the same StreamExecutionEnvironment");
  }
  StreamNode n;
  n.id = static_cast<int32_t>(graph->nodes.size());
  n.kind = StreamNode::Kind::kTwoInput;
  n.name = std::move(kind);
  n.keyed = keyed;
  n.create_operator = [make_op]() -> std::unique_ptr<StreamOperator> { return make_op(); };
  n.input_of = [](StreamOperator& op) -> OutputBase* { return &static_cast<OpT&>(op).input1(); };
  n.input2_of = [](StreamOperator& op) -> OutputBase* { return &static_cast<OpT&>(op).input2(); };
  n.set_output = [](StreamOperator& op, OutputBase* out) {
    static_cast<OpT&>(op).set_output(static_cast<Output<OUT>*>(out));
  };
  n.output_type = make_type_glue<OUT>();
  graph->nodes.push_back(std::move(n));
  const int32_t id = static_cast<int32_t>(graph->nodes.size()) - 1;
  first.add_edges_to(id, 1);
  second.add_edges_to(id, 2);
  return DataStream<OUT>(graph, {StreamInput{id, "", Partitioning::kDefault, nullptr}});
}

}  // namespace detail

// Two keyed streams connected (ConnectedStreams::key_by): records of both inputs with equal keys meet in the
// same subtask, with the same keyed state and timers.
template <class K, class IN1, class IN2, class KS1, class KS2>
class KeyedConnectedStreams {
 public:
  KeyedConnectedStreams(KeyedStream<K, IN1, KS1> first, KeyedStream<K, IN2, KS2> second)
      : first_(std::move(first)), second_(std::move(second)) {}

  // F derives from KeyedCoProcessFunction<K, IN1, IN2, OUT>.
  template <class F>
  auto process(F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<KeyedCoProcessFunction<K, IN1, IN2, OUT>, F>,
                  "KeyedConnectedStreams::process takes a KeyedCoProcessFunction<K, IN1, IN2, OUT> with the "
                  "streams' key type");
    KS1 ks1 = first_.key_selector();
    KS2 ks2 = second_.key_selector();
    return detail::two_input<OUT>(
        first_.keyed_input(), second_.keyed_input(), "KeyedCoProcess",
        [ks1, ks2, fn]() {
          return std::make_unique<KeyedCoProcessOperator<K, IN1, IN2, OUT, KS1, KS2, F>>(ks1, ks2, fn);
        },
        true);
  }

  // A custom keyed two-input operator (its node gets the subtask's key-group range); `make_op` returns a
  // std::unique_ptr to a TwoInputStreamOperator<IN1, IN2, OUT>, typically an AbstractKeyedOperator, which sets
  // each record's key with set_record_key (in BATCH its inputs arrive sorted by key and that ends each key).
  template <class OUT, class Factory>
  DataStream<OUT> transform(std::string name, Factory make_op) const {
    return detail::two_input<OUT>(first_.keyed_input(), second_.keyed_input(), std::move(name), std::move(make_op),
                                  true);
  }

 private:
  KeyedStream<K, IN1, KS1> first_;
  KeyedStream<K, IN2, KS2> second_;
};

template <class IN1, class IN2>
class ConnectedStreams {
 public:
  ConnectedStreams(DataStream<IN1> first, DataStream<IN2> second)
      : first_(std::move(first)), second_(std::move(second)) {}

  const DataStream<IN1>& first_input() const { return first_; }
  const DataStream<IN2>& second_input() const { return second_; }

  // Partitions both inputs by key: KS1: const IN1& -> K and KS2: const IN2& -> K, the same K.
  template <class KS1, class KS2>
  auto key_by(KS1 ks1, KS2 ks2) const {
    using K = std::decay_t<std::invoke_result_t<KS1&, const IN1&>>;
    using K2 = std::decay_t<std::invoke_result_t<KS2&, const IN2&>>;
    static_assert(std::is_same_v<K, K2>, "ConnectedStreams::key_by: both key selectors must return the same key type");
    return KeyedConnectedStreams<K, IN1, IN2, KS1, KS2>(first_.key_by(std::move(ks1)), second_.key_by(std::move(ks2)));
  }

  // F1: IN1&& -> OUT and F2: IN2&& -> OUT (the same OUT).
  template <class F1, class F2>
  auto map(F1 f1, F2 f2) const {
    using OUT = std::decay_t<std::invoke_result_t<F1&, IN1&&>>;
    static_assert(std::is_same_v<OUT, std::decay_t<std::invoke_result_t<F2&, IN2&&>>>,
                  "ConnectedStreams::map: both functions must return the same type");
    return detail::two_input<OUT>(
        first_, second_, "CoMap", [f1, f2]() { return std::make_unique<CoStreamMap<IN1, IN2, OUT, F1, F2>>(f1, f2); },
        false);
  }

  // f1(const IN1&, Collector<OUT>&), f2(const IN2&, Collector<OUT>&); OUT deduced from f1 (a non-generic
  // lambda) or given explicitly.
  template <class OUT = void, class F1, class F2>
  auto flat_map(F1 f1, F2 f2) const {
    using O = std::conditional_t<std::is_void_v<OUT>, detail::flat_map_output_t<F1>, OUT>;
    return detail::two_input<O>(
        first_, second_, "CoFlatMap",
        [f1, f2]() { return std::make_unique<CoStreamFlatMap<IN1, IN2, O, F1, F2>>(f1, f2); }, false);
  }

  // F derives from CoProcessFunction<IN1, IN2, OUT>.
  template <class F>
  auto process(F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<CoProcessFunction<IN1, IN2, OUT>, F>,
                  "ConnectedStreams::process takes a CoProcessFunction<IN1, IN2, OUT> (key_by(ks1, ks2) first for "
                  "a KeyedCoProcessFunction)");
    return detail::two_input<OUT>(
        first_, second_, "CoProcess", [fn]() { return std::make_unique<CoProcessOperator<IN1, IN2, OUT, F>>(fn); },
        false);
  }

  // A custom two-input operator: `make_op` returns a std::unique_ptr to a TwoInputStreamOperator<IN1, IN2, OUT>.
  template <class OUT, class Factory>
  DataStream<OUT> transform(std::string name, Factory make_op) const {
    return detail::two_input<OUT>(first_, second_, std::move(name), std::move(make_op), false);
  }

 private:
  DataStream<IN1> first_;
  DataStream<IN2> second_;
};

template <class T>
template <class U>
ConnectedStreams<T, U> DataStream<T>::connect(const DataStream<U>& other) const {
  return ConnectedStreams<T, U>(*this, other);
}

// An interval join with its bounds set (IntervalJoin::between); finish with process().
template <class K, class IN1, class IN2, class KS1, class KS2>
class IntervalJoined {
 public:
  IntervalJoined(KeyedStream<K, IN1, KS1> left, KeyedStream<K, IN2, KS2> right, IntervalJoinConfig config)
      : left_(std::move(left)), right_(std::move(right)), config_(std::move(config)) {}

  // b.ts > a.ts + lower_ms instead of >=.
  IntervalJoined& lower_bound_exclusive() {
    config_.lower_exclusive = true;
    return *this;
  }
  // b.ts < a.ts + upper_ms instead of <=.
  IntervalJoined& upper_bound_exclusive() {
    config_.upper_exclusive = true;
    return *this;
  }
  // Late records of each side (timestamp < the operator's watermark) go to `tag` instead of being counted as
  // dropped (numLateRecordsDropped).
  IntervalJoined& side_output_left_late_data(const OutputTag<IN1>& tag) {
    config_.left_late_data_tag = tag.id();
    return *this;
  }
  IntervalJoined& side_output_right_late_data(const OutputTag<IN2>& tag) {
    config_.right_late_data_tag = tag.id();
    return *this;
  }

  // F derives from ProcessJoinFunction<IN1, IN2, OUT>. Throws std::invalid_argument for empty bounds.
  template <class F>
  auto process(F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<ProcessJoinFunction<IN1, IN2, OUT>, F>,
                  "interval join process() takes a ProcessJoinFunction<IN1, IN2, OUT>");
    (void)config_.inclusive_bounds();  // fail while building the program, not in the task
    KS1 ks1 = left_.key_selector();
    KS2 ks2 = right_.key_selector();
    IntervalJoinConfig config = config_;
    return detail::two_input<OUT>(
        left_.keyed_input(), right_.keyed_input(), "IntervalJoin",
        [ks1, ks2, fn, config]() {
          return std::make_unique<IntervalJoinOperator<K, IN1, IN2, OUT, KS1, KS2, F>>(ks1, ks2, fn, config);
        },
        true);
  }

 private:
  KeyedStream<K, IN1, KS1> left_;
  KeyedStream<K, IN2, KS2> right_;
  IntervalJoinConfig config_;
};

template <class K, class IN1, class IN2, class KS1, class KS2>
class IntervalJoin {
 public:
  IntervalJoin(KeyedStream<K, IN1, KS1> left, KeyedStream<K, IN2, KS2> right)
      : left_(std::move(left)), right_(std::move(right)) {}
  // Joins b with a when a.ts + lower_ms <= b.ts <= a.ts + upper_ms (ms; either may be negative).
  IntervalJoined<K, IN1, IN2, KS1, KS2> between(int64_t lower_ms, int64_t upper_ms) const {
    IntervalJoinConfig c;
    c.lower_ms = lower_ms;
    c.upper_ms = upper_ms;
    return IntervalJoined<K, IN1, IN2, KS1, KS2>(left_, right_, c);
  }

 private:
  KeyedStream<K, IN1, KS1> left_;
  KeyedStream<K, IN2, KS2> right_;
};

template <class K, class T, class KS>
template <class T2, class KS2>
auto KeyedStream<K, T, KS>::connect(const KeyedStream<K, T2, KS2>& other) const {
  return KeyedConnectedStreams<K, T, T2, KS, KS2>(*this, other);
}

template <class K, class T, class KS>
template <class T2, class KS2>
auto KeyedStream<K, T, KS>::interval_join(const KeyedStream<K, T2, KS2>& other) const {
  return IntervalJoin<K, T, T2, KS, KS2>(*this, other);
}

}  // namespace sluice
