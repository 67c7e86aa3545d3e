// The operators behind DataStream's transformations: map, filter, flat_map, process, keyed process,
// keyed reduce. Each inlines its user function (a template parameter), so a chain of them costs one
// virtual call per operator per record. See stream_operator.h for the lifecycle and failure rules.
#pragma once

#include <type_traits>
#include <limits>
#include <utility>
#include <memory>
#include <vector>
#include <string>
#include <optional>
#include <map>
#include <functional>

#include "sluice/functions/functions.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/operators/internal_timer_service.h"
#include "sluice/operators/processing_time_service.h"
#include "sluice/operators/stream_operator.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/keyed_state_snapshot.h"

namespace sluice {

// Calls the checkpointing hooks of a function that implements them.
template <class F>
void initialize_if_checkpointed(F& fn, bool restored, OperatorStateStore& store) {
  if constexpr (std::is_base_of_v<CheckpointedFunction, F>) {
    FunctionInitializationContext ctx(restored, &store);
    fn.initialize_state(ctx);
  }
}
template <class F>
void snapshot_if_checkpointed(F& fn, CheckpointId id, int64_t ts) {
  if constexpr (std::is_base_of_v<CheckpointedFunction, F>) fn.snapshot_state(FunctionSnapshotContext{id, ts});
}
template <class F>
void notify_complete_if_listener(F& fn, CheckpointId id) {
  if constexpr (std::is_base_of_v<CheckpointListener, F>) fn.notify_checkpoint_complete(id);
}
template <class F>
void notify_aborted_if_listener(F& fn, CheckpointId id) {
  if constexpr (std::is_base_of_v<CheckpointListener, F>) fn.notify_checkpoint_aborted(id);
}

template <class F>
void open_if_rich(F& fn, RuntimeContext& ctx) {
  if constexpr (std::is_base_of_v<RichFunction, F>) fn.open(ctx);
}
template <class F>
void close_if_rich(F& fn) {
  if constexpr (std::is_base_of_v<RichFunction, F>) fn.close();
}

// Common part: owns the user function and runs its lifecycle hooks.
template <class IN, class OUT, class F>
class UdfOperator : public OneInputStreamOperator<IN, OUT> {
 public:
  explicit UdfOperator(F fn) : fn_(std::move(fn)) {}
  void initialize_state(const OperatorRestoreState* restored) override {
    OneInputStreamOperator<IN, OUT>::initialize_state(restored);
    call_user(this->info(), [&] { initialize_if_checkpointed(fn_, restored != nullptr, this->operator_state_); });
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    call_user(this->info(), [&] { snapshot_if_checkpointed(fn_, id, ts); });
    return OneInputStreamOperator<IN, OUT>::snapshot_state(id, ts);
  }
  void notify_checkpoint_complete(CheckpointId id) override {
    call_user(this->info(), [&] { notify_complete_if_listener(fn_, id); });
  }
  void notify_checkpoint_aborted(CheckpointId id) override {
    call_user(this->info(), [&] { notify_aborted_if_listener(fn_, id); });
  }
  void open() override {
    call_user(this->info(), [&] { open_if_rich(fn_, this->runtime_context()); });
  }
  void close() override { close_if_rich(fn_); }

 protected:
  F fn_;
};

template <class IN, class OUT, class F>
class StreamMap final : public UdfOperator<IN, OUT, F> {
 public:
  using UdfOperator<IN, OUT, F>::UdfOperator;
  void collect(IN&& record) override {
    call_user(this->info(), [&] { this->output_->collect(this->fn_(std::move(record))); });
  }
};

template <class T, class F>
class StreamFilter final : public UdfOperator<T, T, F> {
 public:
  using UdfOperator<T, T, F>::UdfOperator;
  void collect(T&& record) override {
    call_user(this->info(), [&] {
      if (this->fn_(static_cast<const T&>(record))) this->output_->collect(std::move(record));
    });
  }
};

// A UdfOperator whose function emits through a Collector (flat_map, process).
template <class IN, class OUT, class F>
class CollectingUdfOperator : public UdfOperator<IN, OUT, F> {
 public:
  using UdfOperator<IN, OUT, F>::UdfOperator;
  void open() override {
    collector_.set_output(this->output_);
    UdfOperator<IN, OUT, F>::open();
  }

 protected:
  Collector<OUT> collector_{nullptr};
};

// F is called as fn(const IN&, Collector<OUT>&).
template <class IN, class OUT, class F>
class StreamFlatMap final : public CollectingUdfOperator<IN, OUT, F> {
 public:
  using CollectingUdfOperator<IN, OUT, F>::CollectingUdfOperator;
  void collect(IN&& record) override {
    call_user(this->info(), [&] { this->fn_(static_cast<const IN&>(record), this->collector_); });
  }
};

// Runs a ProcessFunction<IN, OUT> (F derives from it).
template <class IN, class OUT, class F>
class ProcessOperator final : public CollectingUdfOperator<IN, OUT, F> {
 public:
  using CollectingUdfOperator<IN, OUT, F>::CollectingUdfOperator;
  void open() override {
    ctx_.set_record_timestamp(&this->record_timestamp());
    CollectingUdfOperator<IN, OUT, F>::open();
  }
  void collect(IN&& record) override {
    call_user(this->info(), [&] { this->fn_.process_element(record, ctx_, this->collector_); });
  }

 private:
  ProcessContext ctx_{&this->side_outputs_};
};

// The asynchronous part of a keyed backend's snapshot: the copy-on-write snapshot taken now (the synchronous
// part only fixes a version) is written out per key group later, on the snapshot executor, while the task keeps
// processing. The writer owns the snapshot; destroying it releases the version.
template <class K>
std::function<Status(std::vector<uint8_t>*, std::vector<uint64_t>*)> keyed_snapshot_writer(KeyedStateBackend<K>& backend) {
  std::shared_ptr<KeyedStateSnapshot> snap = backend.snapshot();
  return [snap](std::vector<uint8_t>* out, std::vector<uint64_t>* offsets) -> Status {
    Status s = write_all_key_groups(*snap, out, offsets);
    snap->release();
    return s;
  };
}

// The keyed part of an operator, over its input shape `Base` (OneInputStreamOperator<IN, OUT> or
// TwoInputStreamOperator<IN1, IN2, OUT>; Flink keeps this in AbstractStreamOperator for every shape): owns the
// keyed state backend for this subtask's key groups and the timer services, fires event-time timers when the
// operator's (combined) watermark advances, and checkpoints, restores and redistributes both by key group.
// Each input side sets the current key from its records through set_record_key (KeyedOperatorBase,
// KeyedCoProcessOperator, IntervalJoinOperator), which also ends a key on sorted input.
template <class K, class Base>
class AbstractKeyedOperator : public Base {
 public:
  void setup(const OperatorSetup& s) override {
    Base::setup(s);
    RocksDBStateBackendOptions rocksdb = s.rocksdb;
    rocksdb.instance_name = "job_" + s.job_id + "_op_" + (s.info.operator_uid.empty() ? s.info.operator_name
                                                                                     : s.info.operator_uid) +
                            "_" + std::to_string(s.info.subtask_index);
    if (s.metrics != nullptr && rocksdb.native_metrics.any()) {
      // Native RocksDB metrics: one group per state under this subtask's group, as Flink scopes them.
      MetricGroup* group = s.metrics;
      rocksdb.native_metric_registrar = [group](const std::string& state, const std::string& name,
                                                std::function<double()> read) {
        group->add_group(state).gauge(name, std::move(read));
      };
    }
    backend_ = create_keyed_state_backend<K>(s.state_backend_type, s.key_group_range, s.info.max_parallelism,
                                             rocksdb);
    this->runtime_context().set_keyed_state_backend(backend_.get());
  }
  KeyedStateBackend<K>& keyed_backend() { return *backend_; }

  // ---- timers (Flink's InternalTimeServiceManager) ----
  // The timer service `name` with namespace N, created on first use; firing goes to `target`. Call after
  // initialize_state (open() or later): its queues are keyed state. Several per operator, by name.
  template <class N>
  InternalTimerService<K, N>& get_internal_timer_service(const std::string& name, Triggerable<K, N>* target) {
    auto it = timer_services_.find(name);
    if (it != timer_services_.end()) return *static_cast<InternalTimerService<K, N>*>(it->second.get());
    auto service =
        std::make_shared<InternalTimerService<K, N>>(name, backend_.get(), &this->processing_time_service(), target);
    InternalTimerService<K, N>* raw = service.get();
    timer_services_.emplace(name, std::move(service));
    watermark_advancers_.push_back([raw](int64_t wm) { raw->advance_watermark(wm); });
    end_of_input_firers_.push_back([raw] { raw->fire_due_processing_time_timers(); });
    key_end_firers_.push_back([raw] { return raw->fire_all_timers_for_key_end(); });
    return *raw;
  }
  // BATCH execution with sorted input (OperatorSetup::batch_sorted_input): the current key's records are all
  // processed. Its timers fire with time at +inf (until none is left), then its state is dropped: the backend
  // holds one key at a time (Flink's BatchExecutionKeyedStateBackend). No-op before the first key.
  void end_key_for_batch() {
    if (!backend_->has_current_key()) return;
    call_user(this->info(), [&] {
      for (bool again = true; again;) {
        again = false;
        for (const auto& fire : key_end_firers_) again = fire() > 0 || again;
      }
    });
    Status s = backend_->clear_key_group(backend_->current_key_group());
    if (!s.is_ok()) throw StatusError(s.with_context("operator '" + this->info().operator_name + "'"));
  }
  // Fires the event-time timers of every timer service up to watermark_ms (the operator's watermark moved to
  // watermark_ms). User exceptions escape as OperatorFailure.
  void advance_watermark(int64_t watermark_ms) {
    call_user(this->info(), [&] {
      for (const auto& advance : watermark_advancers_) advance(watermark_ms);
    });
  }
  // The combined input watermark advanced (the task's valve): the event-time timers up to it fire first, then
  // it is recorded and goes downstream, so what the timers emit precedes it (Flink's order:
  // AbstractStreamOperator#processWatermark). TimerService::current_watermark() is watermark_ms from the first
  // timer on.
  void process_watermark(int64_t watermark_ms) override {
    advance_watermark(watermark_ms);
    Base::process_watermark(watermark_ms);
  }

  // End of a bounded input: due processing-time timers fire, and event time advances to the end of time
  // (INT64_MAX: every event-time timer fires, as Flink's MAX_WATERMARK at the end of a bounded source). In a
  // running job the sources' final kMaxWatermark has usually fired them through process_watermark already;
  // this also fires those registered since (e.g. by the processing-time timers just fired) and serves operators
  // run without a task.
  // With sorted input the last key ends instead (a two-input operator gets end_input once, after both inputs).
  void end_input() override {
    if (this->setup_.batch_sorted_input) {  // the last key ends: its timers fire at +inf
      end_key_for_batch();
      return;
    }
    call_user(this->info(), [&] {
      for (const auto& fire_due : end_of_input_firers_) fire_due();
    });
    advance_watermark(std::numeric_limits<int64_t>::max());
  }

  void initialize_state(const OperatorRestoreState* restored) override {
    Base::initialize_state(restored);
    if (restored == nullptr) return;
    Status inc = backend_->restore_incremental(restored->incremental_handles);
    if (!inc.is_ok()) {
      throw StatusError(inc.with_context("operator '" + this->info().operator_name + "' keyed state"));
    }
    for (const auto& kg : restored->key_groups) {
      Status st = backend_->restore_key_group(kg.data(), kg.size());
      if (!st.is_ok()) {
        throw StatusError(st.with_context("operator '" + this->info().operator_name + "' keyed state"));
      }
    }
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    OperatorSnapshot snap = Base::snapshot_state(id, ts);
    snap.key_group_range = backend_->key_group_range();
    const bool native_savepoint = this->snapshot_kind_ == OperatorSnapshotKind::kNativeSavepoint;
    const bool incremental_checkpoint =
        this->setup_.incremental_checkpoints && this->snapshot_kind_ == OperatorSnapshotKind::kCheckpoint;
    if ((incremental_checkpoint || native_savepoint) && backend_->kind() == StateBackendKind::kRocksDB) {
      auto inc = backend_->snapshot_incremental(id, native_savepoint ? SnapshotFileReuse::kUploadEverything
                                                                     : SnapshotFileReuse::kReuseCompletedUploads);
      if (inc.is_ok()) {
        snap.incremental_keyed = std::move(inc).value();
      } else {  // declined by the asynchronous part, with the reason
        snap.write_keyed = [st = inc.status()](std::vector<uint8_t>*, std::vector<uint64_t>*) { return st; };
      }
      return snap;
    }
    snap.write_keyed = keyed_snapshot_writer(*backend_);
    return snap;
  }
  void notify_checkpoint_complete(CheckpointId id) override { backend_->notify_checkpoint_complete(id); }
  void notify_checkpoint_aborted(CheckpointId id) override { backend_->notify_checkpoint_aborted(id); }
  int64_t state_size_bytes() const override { return backend_ ? backend_->state_size_bytes_estimate() : 0; }
  std::vector<std::string> state_schema_reports() const override {
    std::vector<std::string> lines;
    if (backend_) {
      for (const StateSchemaReport& r : backend_->schema_reports()) {
        if (r.kind != SchemaCompatibilityKind::kCompatibleAsIs) lines.push_back(r.to_string());
      }
    }
    return lines;
  }

 protected:
  // The key of the record being processed (each input shape calls it with its key selector's result). With
  // sorted input (BATCH: one key order over all inputs of the operator) a key whose serialized bytes differ from
  // the previous record's first ends the previous key (end_key_for_batch).
  template <class Key>
  void set_record_key(const Key& key) {
    if (this->setup_.batch_sorted_input) [[unlikely]] {
      next_key_bytes_.clear();
      DataOutputView out(&next_key_bytes_);
      TypeSerializer<K>::serialize(key, out);
      if (next_key_bytes_ != key_bytes_) {
        end_key_for_batch();
        key_bytes_.swap(next_key_bytes_);
      }
    }
    backend_->set_current_key(key);
  }

  std::unique_ptr<KeyedStateBackend<K>> backend_;
  std::map<std::string, std::shared_ptr<void>> timer_services_;      // InternalTimerService<K, N> by name
  std::vector<std::function<void(int64_t)>> watermark_advancers_;
  std::vector<std::function<void()>> end_of_input_firers_;
  std::vector<std::function<int64_t()>> key_end_firers_;

 private:
  std::vector<uint8_t> key_bytes_;       // sorted input: the current key, serialized
  std::vector<uint8_t> next_key_bytes_;  // scratch
};

// Base of operators on a keyed stream: AbstractKeyedOperator over one input, and the current key set from each
// record. KS: const IN& -> K.
template <class K, class IN, class OUT, class KS>
class KeyedOperatorBase : public AbstractKeyedOperator<K, OneInputStreamOperator<IN, OUT>> {
 public:
  explicit KeyedOperatorBase(KS key_selector) : key_selector_(std::move(key_selector)) {}

 protected:
  void set_key_of(const IN& record) { this->set_record_key(key_selector_(record)); }
  KS key_selector_;
};

// Runs a KeyedProcessFunction<K, IN, OUT> (F derives from it), with its timers (timer service "user-timers",
// as Flink's KeyedProcessOperator).
template <class K, class IN, class OUT, class KS, class F>
class KeyedProcessOperator final : public KeyedOperatorBase<K, IN, OUT, KS>, private Triggerable<K, VoidNamespace> {
 public:
  KeyedProcessOperator(KS ks, F fn) : KeyedOperatorBase<K, IN, OUT, KS>(std::move(ks)), fn_(std::move(fn)) {}
  void open() override {
    collector_.set_output(this->output_);
    timers_ = &this->template get_internal_timer_service<VoidNamespace>("user-timers", this);
    timer_service_.emplace(timers_);
    ctx_ = KeyedProcessContext<K>(&this->side_outputs_, this->backend_.get(), &*timer_service_);
    on_timer_ctx_ = KeyedOnTimerContext<K>(&this->side_outputs_, this->backend_.get(), &*timer_service_);
    ctx_.set_record_timestamp(&this->record_timestamp());
    on_timer_ctx_.set_record_timestamp(&this->record_timestamp());
    call_user(this->info(), [&] { fn_.open(this->runtime_context()); });
    timers_->start();  // restored processing-time timers
  }
  void close() override { fn_.close(); }
  void initialize_state(const OperatorRestoreState* restored) override {
    KeyedOperatorBase<K, IN, OUT, KS>::initialize_state(restored);
    call_user(this->info(), [&] { initialize_if_checkpointed(fn_, restored != nullptr, this->operator_state_); });
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    call_user(this->info(), [&] { snapshot_if_checkpointed(fn_, id, ts); });
    return KeyedOperatorBase<K, IN, OUT, KS>::snapshot_state(id, ts);
  }
  void notify_checkpoint_complete(CheckpointId id) override {
    KeyedOperatorBase<K, IN, OUT, KS>::notify_checkpoint_complete(id);
    call_user(this->info(), [&] { notify_complete_if_listener(fn_, id); });
  }
  void notify_checkpoint_aborted(CheckpointId id) override {
    KeyedOperatorBase<K, IN, OUT, KS>::notify_checkpoint_aborted(id);
    call_user(this->info(), [&] { notify_aborted_if_listener(fn_, id); });
  }
  void collect(IN&& record) override {
    call_user(this->info(), [&] {
      this->set_key_of(record);
      fn_.process_element(record, ctx_, collector_);
    });
  }
  // The function's timers (tests).
  InternalTimerService<K, VoidNamespace>& user_timers() { return *timers_; }

 private:
  void on_event_time(const InternalTimer<K, VoidNamespace>& timer) override { fire(timer, TimeDomain::kEventTime); }
  void on_processing_time(const InternalTimer<K, VoidNamespace>& timer) override {
    fire(timer, TimeDomain::kProcessingTime);
  }
  // What on_timer emits carries the timer's time for event time and no timestamp for processing time (as
  // Flink's KeyedProcessOperator); the record's timestamp is back afterwards (timers fire between records).
  void fire(const InternalTimer<K, VoidNamespace>& timer, TimeDomain domain) {
    on_timer_ctx_.set_time_domain(domain);
    RecordTimestamp& ts = this->record_timestamp();
    const RecordTimestamp saved = ts;
    if (domain == TimeDomain::kEventTime) {
      ts.set(timer.timestamp_ms);
    } else {
      ts.clear();
    }
    call_user(this->info(), [&] { fn_.on_timer(timer.timestamp_ms, on_timer_ctx_, collector_); });
    ts = saved;
  }

  F fn_;
  Collector<OUT> collector_{nullptr};
  InternalTimerService<K, VoidNamespace>* timers_ = nullptr;
  std::optional<SimpleTimerService<K>> timer_service_;
  KeyedProcessContext<K> ctx_{&this->side_outputs_, nullptr};
  KeyedOnTimerContext<K> on_timer_ctx_{&this->side_outputs_, nullptr};

 public:
  void setup(const OperatorSetup& s) override {
    KeyedOperatorBase<K, IN, OUT, KS>::setup(s);
    ctx_ = KeyedProcessContext<K>(&this->side_outputs_, this->backend_.get());
  }
};

// Rolling reduce per key (KeyedStream::reduce, sum/min/max): keeps the running value in ValueState and
// emits it after every record, as Flink's StreamGroupedReduceOperator. R: (const T&, const T&) -> T.
template <class K, class T, class KS, class R>
class StreamGroupedReduce final : public KeyedOperatorBase<K, T, T, KS> {
 public:
  StreamGroupedReduce(KS ks, R reducer) : KeyedOperatorBase<K, T, T, KS>(std::move(ks)), reducer_(std::move(reducer)) {}
  void open() override { state_ = &this->backend_->get_state(ValueStateDescriptor<T>("_reduce_value")); }
  void collect(T&& record) override {
    call_user(this->info(), [&] {
      this->set_key_of(record);
      std::optional<T> current = state_->value();
      T next = current ? reducer_(*current, record) : std::move(record);
      state_->update(next);
      this->output_->collect(std::move(next));
    });
  }

 private:
  R reducer_;
  ValueState<T>* state_ = nullptr;
};

}  // namespace sluice
