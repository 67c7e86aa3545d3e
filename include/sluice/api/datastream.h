// DataStream<T> and KeyedStream<K, T>: the program-building API (Flink's DataStream API).
//
// Each transformation adds a node to the environment's StreamGraph and returns a stream handle; nothing
// runs until StreamExecutionEnvironment::execute(). Handles are cheap values. Records flow by move between
// chained operators and are serialized (TypeSerializer<T>) across network exchanges, so every T that
// crosses an exchange (key_by, rebalance, broadcast, a parallelism change) needs a serializer; see
// core/serializer.h for how to make a user struct serializable.
//
// Partitioning between two operators: forward when both have the same parallelism and nothing else is
// asked (the operators are then chained into one task); rebalance when the parallelism differs; or as set by
// key_by / rebalance / broadcast / forward / rescale / shuffle / global / partition_custom (Partitioning in
// stream_graph.h, docs/datastream.md). Only forward edges chain; disable_chaining() and start_new_chain() keep an
// operator out of its neighbours' chains. Thread-safety: build a program from one thread.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/api/stream_graph.h"
#include "sluice/detail/operators/network_io.h"
#include "sluice/functions/functions.h"
#include "sluice/functions/watermark_strategy.h"
#include "sluice/metrics/counter.h"
#include "sluice/operators/builtin_operators.h"
#include "sluice/operators/timestamps_and_watermarks_operator.h"
#include "sluice/sink/sink.h"
#include "sluice/sink/two_phase_commit_sink.h"
#include "sluice/sink/write_ahead_sink.h"

namespace sluice {

template <class T>
TypeGlue make_type_glue() {
  TypeGlue g;
  g.type_name = TypeSerializer<T>::snapshot().to_string();
  g.type = std::type_index(typeid(T));
  g.make_broadcasting_output = [](std::vector<OutputBase*> outs) -> std::unique_ptr<OutputBase> {
    std::vector<Output<T>*> typed;
    for (auto* o : outs) typed.push_back(static_cast<Output<T>*>(o));
    return std::make_unique<BroadcastingOutput<T>>(std::move(typed));
  };
  g.make_writer_output = [](RecordWriter* w, std::unique_ptr<ChannelSelectorBase> sel,
                            const RecordTimestamp* ts) -> std::unique_ptr<OutputBase> {
    return std::make_unique<RecordWriterOutput<T>>(w, std::move(sel), ts);
  };
  g.make_deserializer = [](OutputBase* target, RecordTimestamp* ts) -> std::unique_ptr<RecordDeserializerBase> {
    return std::make_unique<RecordDeserializer<T>>(static_cast<Output<T>*>(target), ts);
  };
  g.make_discarding_output = []() -> std::unique_ptr<OutputBase> { return std::make_unique<DiscardingOutput<T>>(); };
  g.make_counting_output = [](OutputBase* next, Counter* counter,
                              std::atomic<int64_t>* watermark_ms) -> std::unique_ptr<OutputBase> {
    return std::make_unique<CountingOutput<T, Counter>>(static_cast<Output<T>*>(next), counter, watermark_ms);
  };
  g.make_standard_selector = [](Partitioning p) -> std::unique_ptr<ChannelSelectorBase> {
    switch (p) {
      case Partitioning::kRebalance: return std::make_unique<RebalancePartitioner<T>>();
      case Partitioning::kBroadcast: return std::make_unique<BroadcastPartitioner<T>>();
      case Partitioning::kRescale: return std::make_unique<RescalePartitioner<T>>();
      case Partitioning::kShuffle: return std::make_unique<ShufflePartitioner<T>>();
      case Partitioning::kGlobal: return std::make_unique<GlobalPartitioner<T>>();
      default: return std::make_unique<ForwardPartitioner<T>>();
    }
  };
  return g;
}

namespace detail {
// The element type of the Collector<OUT>& parameter of a flat_map callable (non-generic lambdas).
template <class M>
struct CollectorArg;
template <class C, class R, class A, class OUT>
struct CollectorArg<R (C::*)(A, Collector<OUT>&) const> {
  using type = OUT;
};
template <class C, class R, class A, class OUT>
struct CollectorArg<R (C::*)(A, Collector<OUT>&)> {
  using type = OUT;
};
template <class F>
using flat_map_output_t = typename CollectorArg<decltype(&F::operator())>::type;

// One upstream of a stream handle: a node's main or side output, plus the partitioning asked for.
struct StreamInput {
  int32_t node_id;
  std::string side_output_tag;
  Partitioning partitioning = Partitioning::kDefault;
  std::function<std::unique_ptr<ChannelSelectorBase>()> make_selector;
};
}  // namespace detail

template <class T>
class DataStreamSink;
template <class IN1, class IN2>
class ConnectedStreams;  // api/connected_streams.h
template <bool kIsJoin, class A, class B>
class TwoInputStreams;  // windowing/window_join.h

template <class T>
class DataStream {
 public:
  using element_type = T;

  DataStream(std::shared_ptr<StreamGraph> graph, std::vector<detail::StreamInput> inputs)
      : graph_(std::move(graph)), inputs_(std::move(inputs)) {}

  // ---- transformations -------------------------------------------------------------------------
  template <class F>
  auto map(F fn) const {
    using OUT = std::decay_t<std::invoke_result_t<F&, T&&>>;
    return one_input<OUT>("Map", [fn]() { return std::make_unique<StreamMap<T, OUT, F>>(fn); });
  }

  template <class F>
  DataStream<T> filter(F fn) const {
    return one_input<T>("Filter", [fn]() { return std::make_unique<StreamFilter<T, F>>(fn); });
  }

  // fn(const T&, Collector<OUT>&). OUT is deduced from a non-generic lambda, or given explicitly.
  template <class OUT = void, class F>
  auto flat_map(F fn) const {
    using O = std::conditional_t<std::is_void_v<OUT>, detail::flat_map_output_t<F>, OUT>;
    return one_input<O>("FlatMap", [fn]() { return std::make_unique<StreamFlatMap<T, O, F>>(fn); });
  }

  // F derives from ProcessFunction<T, OUT>.
  template <class F>
  auto process(F fn) const {
    using OUT = typename F::output_type;
    // Flink refuses keyed state outside a keyed stream at run time; here it fails to compile, naming the fix.
    static_assert(!requires { typename F::key_type; },
                  "process(): a KeyedProcessFunction (keyed state, timers) runs on a keyed stream: call "
                  "key_by(key_selector) first, then process() on the KeyedStream it returns");
    static_assert(std::is_base_of_v<ProcessFunction<T, OUT>, F>, "process() takes a ProcessFunction<T, OUT>");
    return one_input<OUT>("Process", [fn]() { return std::make_unique<ProcessOperator<T, OUT, F>>(fn); });
  }

  // Event time: timestamps from the strategy's assigner and watermarks from its generator, one per subtask
  // (api/watermark_strategy.h). Prefer a WatermarkStrategy on the source (from_source): per-split watermarks.
  DataStream<T> assign_timestamps_and_watermarks(WatermarkStrategy<T> strategy) const {
    auto s = one_input<T>("Timestamps/Watermarks", [strategy]() {
      return std::make_unique<TimestampsAndWatermarksOperator<T>>(strategy);
    });
    graph_->node(s.inputs().front().node_id).assigns_timestamps = true;
    return s;
  }

  // A custom operator (Flink's transform): `make_op` returns a std::unique_ptr to a
  // OneInputStreamOperator<T, OUT>, created once per subtask.
  template <class OUT, class Factory>
  DataStream<OUT> transform(std::string name, Factory make_op) const {
    return one_input<OUT>(std::move(name), std::move(make_op));
  }

  // Partitions by key: records with equal keys go to the same subtask (via the key's key group).
  template <class KS>
  auto key_by(KS key_selector) const;

  // Round-robin redistribution to the next operator's subtasks.
  DataStream<T> rebalance() const { return with_partitioning(Partitioning::kRebalance); }
  // Every record to every subtask of the next operator.
  DataStream<T> broadcast() const { return with_partitioning(Partitioning::kBroadcast); }
  // Subtask i to subtask i; requires equal parallelism (checked when the job graph is built).
  DataStream<T> forward() const { return with_partitioning(Partitioning::kForward); }
  // Round robin over a subset of the next operator's subtasks (Flink's rescale): a pointwise exchange, producer i
  // of P feeding consumers [i*C/P, (i+1)*C/P) when P <= C, consumer j of C reading producers [j*P/C, (j+1)*P/C)
  // when P >= C (graph/edge_topology.h): 2 -> 4 gives 0 -> {0, 1}, 1 -> {2, 3}; 4 -> 2 gives {0, 1} -> 0,
  // {2, 3} -> 1. Fewer channels than rebalance; never chained, even at equal parallelism.
  DataStream<T> rescale() const { return with_partitioning(Partitioning::kRescale); }
  // A uniformly random subtask of the next operator per record (Flink's shuffle; reproducible: seeded per
  // producing subtask).
  DataStream<T> shuffle() const { return with_partitioning(Partitioning::kShuffle); }
  // Every record to subtask 0 of the next operator, whatever its parallelism (Flink's global; its other subtasks
  // get no records). `global` is no C++ keyword, so the name is Flink's.
  DataStream<T> global() const { return with_partitioning(Partitioning::kGlobal); }
  // Each record to subtask partitioner(key_selector(record), n) of the next operator's n subtasks (Flink's
  // partitionCustom with a Partitioner<K> and a KeySelector). KS: const T& -> K; P: (const K&, int32_t n) -> an
  // integer. An index outside [0, n) fails the job (InvalidArgument naming the operator and the index: a bad
  // program is not restarted). Restoring an unaligned checkpoint at another parallelism re-runs the partitioner
  // on the in-flight records, so it must be deterministic (docs/checkpoints.md).
  template <class P, class KS>
  DataStream<T> partition_custom(P partitioner, KS key_selector) const;

  // Merges streams of the same type (`union` is a C++ keyword).
  template <class... Streams>
  DataStream<T> union_(const Streams&... others) const {
    DataStream<T> result = *this;
    (result.inputs_.insert(result.inputs_.end(), others.inputs_.begin(), others.inputs_.end()), ...);
    return result;
  }

  // Connects two streams of possibly different types for a two-input operator (co_map, co_flat_map, co-process,
  // or keyed by key_by(ks1, ks2)): api/connected_streams.h, which defines it.
  template <class U>
  ConnectedStreams<T, U> connect(const DataStream<U>& other) const;

  // A window join / co-group with another stream (Flink's DataStream.join / coGroup; windowing/window_join.h,
  // which defines them): a.join(b).where(key of T).equal_to(key of U).window(assigner).apply(fn).
  template <class U>
  TwoInputStreams<true, T, U> join(const DataStream<U>& other) const;
  template <class U>
  TwoInputStreams<false, T, U> co_group(const DataStream<U>& other) const;

  // The records emitted to `tag` by this stream's process function.
  template <class X>
  DataStream<X> get_side_output(const OutputTag<X>& tag) const {
    detail::StreamInput in = single_input("get_side_output");
    in.side_output_tag = tag.id();
    return DataStream<X>(graph_, {in});
  }

  DataStreamSink<T> sink_to(std::shared_ptr<const Sink<T>> sink) const;
  // An exactly-once sink: commits on checkpoint completion (see sink/two_phase_commit_sink.h).
  template <class S>
    requires std::is_base_of_v<TwoPhaseCommittingSink<T, typename S::committable_type>, S>
  DataStreamSink<T> sink_to(S sink) const {
    using CommT = typename S::committable_type;
    std::shared_ptr<const TwoPhaseCommittingSink<T, CommT>> shared = std::make_shared<S>(std::move(sink));
    auto s = one_input<T>("Sink", [shared]() { return std::make_unique<TwoPhaseCommitSinkOperator<T, CommT>>(shared); });
    graph_->node(s.inputs().front().node_id).is_sink = true;
    graph_->node(s.inputs().front().node_id).commits_on_checkpoint_complete = true;
    graph_->node(s.inputs().front().node_id).submission_warnings = [shared](const SinkSubmissionContext& job) {
      return shared->submission_warnings(job);
    };
    graph_->node(s.inputs().front().node_id).exclusive_claims = [shared](const ClaimContext& ctx) {
      return shared->exclusive_claims(ctx);
    };
    return DataStreamSink<T>(graph_, s.inputs().front().node_id);
  }
  // A write-ahead-log sink: output held in state until its checkpoint completes (see sink/write_ahead_sink.h).
  template <class S>
    requires std::is_base_of_v<WriteAheadSink<T>, S>
  DataStreamSink<T> sink_to(S sink) const {
    std::shared_ptr<const WriteAheadSink<T>> shared = std::make_shared<S>(std::move(sink));
    auto s = one_input<T>("Sink", [shared]() { return std::make_unique<WriteAheadSinkOperator<T>>(shared); });
    graph_->node(s.inputs().front().node_id).is_sink = true;
    graph_->node(s.inputs().front().node_id).commits_on_checkpoint_complete = true;
    graph_->node(s.inputs().front().node_id).exclusive_claims = [shared](const ClaimContext& ctx) {
      return shared->exclusive_claims(ctx);
    };
    return DataStreamSink<T>(graph_, s.inputs().front().node_id);
  }
  template <class S>
    requires std::is_base_of_v<Sink<T>, S>
  DataStreamSink<T> sink_to(S sink) const {
    return sink_to(std::shared_ptr<const Sink<T>>(std::make_shared<S>(std::move(sink))));
  }

  // ---- properties of the operator that produced this stream -------------------------------------
  // A stable id that matches state across job versions (savepoints); set it on every stateful operator.
  DataStream<T>& uid(std::string id) {
    node("uid").uid = std::move(id);
    return *this;
  }
  DataStream<T>& name(std::string n) {
    node("name").name = std::move(n);
    return *this;
  }
  DataStream<T>& set_parallelism(int32_t p) {
    if (p < 1) throw std::invalid_argument("set_parallelism: expected a parallelism >= 1, got " + std::to_string(p));
    node("set_parallelism").parallelism = p;
    return *this;
  }
  // The operator chains neither to its predecessor nor to its successors: it runs in a task of its own (Flink's
  // disableChaining; ChainingStrategy::kNever).
  DataStream<T>& disable_chaining() {
    node("disable_chaining").chaining = ChainingStrategy::kNever;
    return *this;
  }
  // The operator starts a new chain: it does not chain to its predecessor, but its successors may chain to it
  // (Flink's startNewChain; ChainingStrategy::kHead).
  DataStream<T>& start_new_chain() {
    node("start_new_chain").chaining = ChainingStrategy::kHead;
    return *this;
  }

  // Internal (used by the API templates).
  const std::shared_ptr<StreamGraph>& graph() const { return graph_; }
  const std::vector<detail::StreamInput>& inputs() const { return inputs_; }

  // Adds a one-input node fed by this stream. `keyed`: the node gets a key-group range.
  template <class OUT, class Factory>
  DataStream<OUT> one_input(std::string kind, Factory make_op, bool keyed = false) const {
    using OpT = typename std::invoke_result_t<Factory&>::element_type;
    StreamNode n;
    n.id = static_cast<int32_t>(graph_->nodes.size());
    n.kind = StreamNode::Kind::kOneInput;
    n.name = std::move(kind);
    n.keyed = keyed;
    n.create_operator = [make_op]() -> std::unique_ptr<StreamOperator> { return make_op(); };
    n.input_of = [](StreamOperator& op) -> OutputBase* { return static_cast<Output<T>*>(static_cast<OpT*>(&op)); };
    n.set_output = [](StreamOperator& op, OutputBase* out) {
      static_cast<OpT&>(op).set_output(static_cast<Output<OUT>*>(out));
    };
    n.output_type = make_type_glue<OUT>();
    graph_->nodes.push_back(std::move(n));
    int32_t id = static_cast<int32_t>(graph_->nodes.size()) - 1;
    for (const auto& in : inputs_) add_edge(in, id);
    return DataStream<OUT>(graph_, {detail::StreamInput{id, "", Partitioning::kDefault, nullptr}});
  }
  // Feeds this stream into input `type_number` (1 or 2) of the two-input node `target` (connected_streams.h).
  void add_edges_to(int32_t target, int32_t type_number) const {
    for (const auto& in : inputs_) add_edge(in, target, type_number);
  }

 private:
  template <class U>
  friend class DataStream;

  void add_edge(const detail::StreamInput& in, int32_t target, int32_t type_number = 0) const {
    StreamEdge e;
    e.type_number = type_number;
    e.source_id = in.node_id;
    e.target_id = target;
    e.partitioning = in.partitioning;
    e.side_output_tag = in.side_output_tag;
    e.type = make_type_glue<T>();
    e.make_selector = in.make_selector;
    graph_->edges.push_back(std::move(e));
  }
  DataStream<T> with_partitioning(Partitioning p) const {
    DataStream<T> s = *this;
    for (auto& in : s.inputs_) {
      in.partitioning = p;
      in.make_selector = nullptr;
    }
    return s;
  }
  detail::StreamInput single_input(const char* what) const {
    if (inputs_.size() != 1) {
      throw std::logic_error(std::string(what) + ": applies to the output of one operator, not to a union");
    }
    return inputs_.front();
  }
  StreamNode& node(const char* what) { return graph_->node(single_input(what).node_id); }

  std::shared_ptr<StreamGraph> graph_;
  std::vector<detail::StreamInput> inputs_;
};

// The end of a pipeline; carries the sink node's properties.
template <class T>
class DataStreamSink {
 public:
  DataStreamSink(std::shared_ptr<StreamGraph> g, int32_t id) : graph_(std::move(g)), id_(id) {}
  DataStreamSink& uid(std::string id) {
    graph_->node(id_).uid = std::move(id);
    return *this;
  }
  DataStreamSink& name(std::string n) {
    graph_->node(id_).name = std::move(n);
    return *this;
  }
  DataStreamSink& set_parallelism(int32_t p) {
    if (p < 1) throw std::invalid_argument("set_parallelism: expected a parallelism >= 1, got " + std::to_string(p));
    graph_->node(id_).parallelism = p;
    return *this;
  }
  // The sink does not chain to its predecessor (Flink's DataStreamSink.disableChaining).
  DataStreamSink& disable_chaining() {
    graph_->node(id_).chaining = ChainingStrategy::kNever;
    return *this;
  }

 private:
  std::shared_ptr<StreamGraph> graph_;
  int32_t id_;
};

template <class T>
DataStreamSink<T> DataStream<T>::sink_to(std::shared_ptr<const Sink<T>> sink) const {
  auto s = one_input<T>("Sink", [sink]() { return std::make_unique<SinkWriterOperator<T>>(sink); });
  graph_->node(s.inputs().front().node_id).is_sink = true;
  graph_->node(s.inputs().front().node_id).exclusive_claims = [sink](const ClaimContext& ctx) {
    return sink->exclusive_claims(ctx);
  };
  return DataStreamSink<T>(graph_, s.inputs().front().node_id);
}

// A stream partitioned by key K. KS: const T& -> K. Keyed state lives here, per key.
template <class K, class T, class KS = std::function<K(const T&)>>
class KeyedStream {
 public:
  KeyedStream(DataStream<T> input, KS key_selector) : input_(std::move(input)), ks_(std::move(key_selector)) {}

  // F derives from KeyedProcessFunction<K, T, OUT>.
  template <class F>
  auto process(F fn) const {
    using OUT = typename F::output_type;
    static_assert(std::is_base_of_v<KeyedProcessFunction<K, T, OUT>, F>,
                  "KeyedStream::process takes a KeyedProcessFunction<K, T, OUT> with the stream's key type");
    KS ks = ks_;
    return input_.template one_input<OUT>(
        "KeyedProcess", [ks, fn]() { return std::make_unique<KeyedProcessOperator<K, T, OUT, KS, F>>(ks, fn); },
        true);
  }

  // An interval join with another keyed stream of the same key type (api/connected_streams.h, which defines it):
  // interval_join(other).between(lower_ms, upper_ms).process(ProcessJoinFunction<T, T2, OUT>).
  template <class T2, class KS2>
  auto interval_join(const KeyedStream<K, T2, KS2>& other) const;

  // Two keyed streams of the same key type connected (Flink's KeyedStream.connect; api/connected_streams.h, which
  // defines it): the same as input().connect(other input).key_by(selectors), for process(KeyedCoProcessFunction).
  template <class T2, class KS2>
  auto connect(const KeyedStream<K, T2, KS2>& other) const;

  // The partitioned input and the key selector (connected_streams.h).
  const DataStream<T>& keyed_input() const { return input_; }
  const KS& key_selector() const { return ks_; }

  // Windows of each key (windowing/windowed_stream.h, which defines it): tumbling, sliding, session or global,
  // with a trigger, allowed lateness, a late-data side output and a window function.
  template <class Assigner>
  auto window(Assigner assigner) const;

  // A custom operator on the keyed stream (its node gets the subtask's key-group range).
  template <class OUT, class Factory>
  DataStream<OUT> transform(std::string name, Factory make_op) const {
    return input_.template one_input<OUT>(std::move(name), std::move(make_op), true);
  }

  // Rolling reduce: emits the running result per key after each record. R: (const T&, const T&) -> T.
  template <class R>
  DataStream<T> reduce(R reducer) const {
    KS ks = ks_;
    return input_.template one_input<T>(
        "Reduce", [ks, reducer]() { return std::make_unique<StreamGroupedReduce<K, T, KS, R>>(ks, reducer); },
        true);
  }

  // Rolling sum / min / max of an arithmetic stream.
  DataStream<T> sum() const { return reduce([](const T& a, const T& b) { return static_cast<T>(a + b); }); }
  DataStream<T> min() const { return reduce([](const T& a, const T& b) { return b < a ? b : a; }); }
  DataStream<T> max() const { return reduce([](const T& a, const T& b) { return a < b ? b : a; }); }

  // Rolling sum / min / max of one field of a struct: the other fields keep the first record's values,
  // as Flink's sum(field) / min(field) / max(field).
  template <class M, class U = T>
    requires std::is_class_v<U>
  DataStream<T> sum(M U::*field) const {
    return reduce([field](const T& a, const T& b) {
      T r = a;
      r.*field = a.*field + b.*field;
      return r;
    });
  }
  template <class M, class U = T>
    requires std::is_class_v<U>
  DataStream<T> min(M U::*field) const {
    return reduce([field](const T& a, const T& b) {
      T r = a;
      if (b.*field < a.*field) r.*field = b.*field;
      return r;
    });
  }
  template <class M, class U = T>
    requires std::is_class_v<U>
  DataStream<T> max(M U::*field) const {
    return reduce([field](const T& a, const T& b) {
      T r = a;
      if (a.*field < b.*field) r.*field = b.*field;
      return r;
    });
  }

 private:
  DataStream<T> input_;
  KS ks_;
};

template <class T>
template <class P, class KS>
DataStream<T> DataStream<T>::partition_custom(P partitioner, KS key_selector) const {
  using K = std::decay_t<std::invoke_result_t<KS&, const T&>>;
  static_assert(std::is_convertible_v<std::invoke_result_t<P&, const K&, int32_t>, int64_t>,
                "partition_custom: the partitioner is called as partitioner(const K& key, int32_t num_partitions) "
                "and returns the partition index");
  DataStream<T> s = *this;
  for (auto& in : s.inputs_) {
    in.partitioning = Partitioning::kCustom;
    in.make_selector = [partitioner, key_selector]() -> std::unique_ptr<ChannelSelectorBase> {
      return std::make_unique<CustomPartitionerWrapper<T, P, KS>>(partitioner, key_selector);
    };
  }
  return s;
}

template <class T>
template <class KS>
auto DataStream<T>::key_by(KS key_selector) const {
  using K = std::decay_t<std::invoke_result_t<KS&, const T&>>;
  DataStream<T> s = *this;
  for (auto& in : s.inputs_) {
    in.partitioning = Partitioning::kHash;
    in.make_selector = [key_selector]() -> std::unique_ptr<ChannelSelectorBase> {
      return std::make_unique<KeyGroupStreamPartitioner<T, K, KS>>(key_selector);
    };
  }
  return KeyedStream<K, T, KS>(std::move(s), std::move(key_selector));
}

}  // namespace sluice
