// User-function interfaces (Flink's DataStream function types).
//
// map / filter / flat_map / key_by take any callable (lambdas are the common case; they are inlined into
// the operator, no std::function). A callable that also derives from RichFunction gets open(ctx) before
// the first record and close() after the last. ProcessFunction and KeyedProcessFunction are classes to
// derive from. A user function that throws fails its task: the job fails with the exception's text, the
// operator's name and the subtask index. Thread-safety: each parallel subtask owns its own copy of the
// function object (functions are copied when the job is deployed), so a function needs no locks.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "sluice/core/ids.h"
#include "sluice/functions/output.h"
#include "sluice/functions/runtime_context.h"
#include "sluice/functions/timer_service.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/operator_state_store.h"

namespace sluice {

// Lifecycle hooks for functions that need setup (state handles, metrics, connections).
class RichFunction {
 public:
  virtual ~RichFunction() = default;
  virtual void open(RuntimeContext& ctx) { ctx_ = &ctx; }
  virtual void close() {}
  RuntimeContext& runtime_context() const {
    if (ctx_ == nullptr) throw std::logic_error("runtime_context() called before open(): call RichFunction::open");
    return *ctx_;
  }

 protected:
  RuntimeContext* ctx_ = nullptr;
};

// ---- checkpointing hooks for user functions (Flink's CheckpointedFunction and CheckpointListener) ----

struct FunctionSnapshotContext {
  CheckpointId checkpoint_id{0};
  int64_t checkpoint_timestamp_ms = 0;
};

class FunctionInitializationContext {
 public:
  FunctionInitializationContext(bool restored, OperatorStateStore* store) : restored_(restored), store_(store) {}
  // True when the job was restored from a checkpoint (the states below then hold restored contents).
  bool is_restored() const { return restored_; }
  OperatorStateStore& operator_state_store() const { return *store_; }

 private:
  bool restored_;
  OperatorStateStore* store_;
};

// A function with its own (operator) state: initialize_state() before open(), on every start and restore;
// snapshot_state() at each checkpoint barrier, on the task thread - write what must survive into the state
// objects obtained in initialize_state().
class CheckpointedFunction {
 public:
  virtual ~CheckpointedFunction() = default;
  virtual void initialize_state(FunctionInitializationContext& ctx) = 0;
  virtual void snapshot_state(const FunctionSnapshotContext& ctx) = 0;
};

// Told when a checkpoint completed (every task acknowledged and its metadata is durable) or was aborted.
// Best-effort, as in Flink: a notification can be missed (a failure in between); a function that commits on
// notify must commit everything pending up to the id it is given.
class CheckpointListener {
 public:
  virtual ~CheckpointListener() = default;
  virtual void notify_checkpoint_complete(CheckpointId checkpoint_id) = 0;
  virtual void notify_checkpoint_aborted(CheckpointId) {}
};

// Emits zero or more records (flat_map, process).
template <class T>
class Collector {
 public:
  explicit Collector(Output<T>* out) : out_(out) {}
  void collect(T record) { out_->collect(std::move(record)); }
  void set_output(Output<T>* out) { out_ = out; }

 private:
  Output<T>* out_;
};

// Names a side output of element type T. Two tags are the same side output when their ids are equal.
template <class T>
class OutputTag {
 public:
  explicit OutputTag(std::string id) : id_(std::move(id)) {}
  const std::string& id() const { return id_; }
  using element_type = T;

 private:
  std::string id_;
};

// The context passed with each element to a (keyed) process function.
class ProcessContext {
 public:
  explicit ProcessContext(const SideOutputs* side) : side_(side) {}
  // Emits `value` to the side output `tag` (dropped if the job does not consume that side output).
  template <class X>
  void output(const OutputTag<X>& tag, X value) const {
    side_->emit(tag.id(), std::move(value));
  }
  // The event-time timestamp of the element being processed (ms), or nullopt when it has none (no timestamp
  // assigner upstream). A record emitted through the collector keeps this timestamp.
  std::optional<int64_t> timestamp() const {
    if (timestamp_ == nullptr || !timestamp_->has_timestamp) return std::nullopt;
    return timestamp_->timestamp_ms;
  }
  // Set by the operator (the task's shared record timestamp).
  void set_record_timestamp(const RecordTimestamp* ts) { timestamp_ = ts; }

 private:
  const SideOutputs* side_;
  const RecordTimestamp* timestamp_ = nullptr;
};

template <class IN, class OUT>
class ProcessFunction : public RichFunction {
 public:
  using input_type = IN;
  using output_type = OUT;
  virtual void process_element(const IN& value, ProcessContext& ctx, Collector<OUT>& out) = 0;
};

template <class K>
class KeyedProcessContext : public ProcessContext {
 public:
  KeyedProcessContext(const SideOutputs* side, const KeyedStateBackend<K>* backend, TimerService* timers = nullptr)
      : ProcessContext(side), backend_(backend), timers_(timers) {}
  // The key of the element being processed (in on_timer: the timer's key).
  const K& current_key() const { return backend_->current_key(); }
  // Timers of the current key (api/timer_service.h). Throws std::logic_error outside a keyed process operator.
  TimerService& timer_service() const {
    if (timers_ == nullptr) throw std::logic_error("timer_service(): no timer service (not in a keyed process operator)");
    return *timers_;
  }

 private:
  const KeyedStateBackend<K>* backend_;
  TimerService* timers_;
};

// The context of KeyedProcessFunction::on_timer: also which time domain fired the timer.
template <class K>
class KeyedOnTimerContext : public KeyedProcessContext<K> {
 public:
  using KeyedProcessContext<K>::KeyedProcessContext;
  TimeDomain time_domain() const { return domain_; }
  void set_time_domain(TimeDomain d) { domain_ = d; }

 private:
  TimeDomain domain_ = TimeDomain::kProcessingTime;
};

// A rich function of a keyed operator (KeyedProcessFunction, KeyedCoProcessFunction): per-key state of the
// current key through the get_*_state helpers, usable from open() on.
template <class K>
class KeyedRichFunction : public RichFunction {
 protected:
  template <class T>
  ValueState<T>& get_state(const ValueStateDescriptor<T>& d) {
    return backend().get_state(d);
  }
  template <class T>
  ListState<T>& get_list_state(const ListStateDescriptor<T>& d) {
    return backend().get_list_state(d);
  }
  template <class UK, class UV>
  MapState<UK, UV>& get_map_state(const MapStateDescriptor<UK, UV>& d) {
    return backend().get_map_state(d);
  }
  template <class T>
  ReducingState<T>& get_reducing_state(const ReducingStateDescriptor<T>& d) {
    return backend().get_reducing_state(d);
  }
  template <class IN2, class ACC, class OUT2>
  AggregatingState<IN2, OUT2>& get_aggregating_state(const AggregatingStateDescriptor<IN2, ACC, OUT2>& d) {
    return backend().get_aggregating_state(d);
  }

 private:
  KeyedStateBackend<K>& backend() { return runtime_context().template keyed_state_backend<KeyedStateBackend<K>>(); }
};

// A process function on a keyed stream: per-key state through the get_*_state helpers, usable in open().
template <class K, class IN, class OUT>
class KeyedProcessFunction : public KeyedRichFunction<K> {
 public:
  using key_type = K;
  using input_type = IN;
  using output_type = OUT;
  virtual void process_element(const IN& value, KeyedProcessContext<K>& ctx, Collector<OUT>& out) = 0;
  // A timer registered through ctx.timer_service() fired (Flink's onTimer): `timestamp_ms` is the timer's time,
  // ctx.current_key() its key, ctx.time_domain() its domain. Runs on the task thread between records, like
  // process_element; it may use state, emit, and register or delete timers. Default: nothing.
  virtual void on_timer(int64_t /*timestamp_ms*/, KeyedOnTimerContext<K>& /*ctx*/, Collector<OUT>& /*out*/) {}
};

}  // namespace sluice
