// The operators behind ConnectedStreams (datastream.h): co-map, co-flat-map, co-process (Flink's CoStreamMap,
// CoStreamFlatMap, CoProcessOperator) and keyed co-process (KeyedCoProcessOperator), each inlining its user
// functions. Two-input mechanics (per-input watermarks, end of input) are TwoInputStreamOperator's; keyed state
// and timers are AbstractKeyedOperator's, shared with the one-input keyed operators (builtin_operators.h).
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "sluice/functions/co_functions.h"
#include "sluice/operators/builtin_operators.h"
#include "sluice/operators/two_input_stream_operator.h"

namespace sluice {

// Owns the user function(s) and runs their lifecycle and checkpoint hooks. F: one object (a process function)
// or, for the map variants, a pair holder below.
template <class IN1, class IN2, class OUT, class F>
class TwoInputUdfOperator : public TwoInputStreamOperator<IN1, IN2, OUT> {
 public:
  explicit TwoInputUdfOperator(F fn) : fn_(std::move(fn)) {}
  void initialize_state(const OperatorRestoreState* restored) override {
    TwoInputStreamOperator<IN1, IN2, OUT>::initialize_state(restored);
    call_user(this->info(), [&] { initialize_if_checkpointed(fn_, restored != nullptr, this->operator_state_); });
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    call_user(this->info(), [&] { snapshot_if_checkpointed(fn_, id, ts); });
    return TwoInputStreamOperator<IN1, IN2, OUT>::snapshot_state(id, ts);
  }
  void notify_checkpoint_complete(CheckpointId id) override {
    call_user(this->info(), [&] { notify_complete_if_listener(fn_, id); });
  }
  void notify_checkpoint_aborted(CheckpointId id) override {
    call_user(this->info(), [&] { notify_aborted_if_listener(fn_, id); });
  }
  void open() override {
    collector_.set_output(this->output_);
    call_user(this->info(), [&] { open_if_rich(fn_, this->runtime_context()); });
  }
  void close() override { close_if_rich(fn_); }

 protected:
  F fn_;
  Collector<OUT> collector_{nullptr};
};

// The two callables of co_map / co_flat_map.
template <class F1, class F2>
struct CoFunctions {
  F1 first;
  F2 second;
};

// F1: IN1&& -> OUT, F2: IN2&& -> OUT.
template <class IN1, class IN2, class OUT, class F1, class F2>
class CoStreamMap final : public TwoInputUdfOperator<IN1, IN2, OUT, CoFunctions<F1, F2>> {
 public:
  CoStreamMap(F1 f1, F2 f2) : TwoInputUdfOperator<IN1, IN2, OUT, CoFunctions<F1, F2>>({std::move(f1), std::move(f2)}) {}
  void process_element1(IN1&& r) override {
    call_user(this->info(), [&] { this->output_->collect(this->fn_.first(std::move(r))); });
  }
  void process_element2(IN2&& r) override {
    call_user(this->info(), [&] { this->output_->collect(this->fn_.second(std::move(r))); });
  }
};

// F1: (const IN1&, Collector<OUT>&), F2: (const IN2&, Collector<OUT>&).
template <class IN1, class IN2, class OUT, class F1, class F2>
class CoStreamFlatMap final : public TwoInputUdfOperator<IN1, IN2, OUT, CoFunctions<F1, F2>> {
 public:
  CoStreamFlatMap(F1 f1, F2 f2)
      : TwoInputUdfOperator<IN1, IN2, OUT, CoFunctions<F1, F2>>({std::move(f1), std::move(f2)}) {}
  void process_element1(IN1&& r) override {
    call_user(this->info(), [&] { this->fn_.first(static_cast<const IN1&>(r), this->collector_); });
  }
  void process_element2(IN2&& r) override {
    call_user(this->info(), [&] { this->fn_.second(static_cast<const IN2&>(r), this->collector_); });
  }
};

// Runs a CoProcessFunction<IN1, IN2, OUT> (F derives from it).
template <class IN1, class IN2, class OUT, class F>
class CoProcessOperator final : public TwoInputUdfOperator<IN1, IN2, OUT, F> {
 public:
  using TwoInputUdfOperator<IN1, IN2, OUT, F>::TwoInputUdfOperator;
  void open() override {
    ctx_.set_record_timestamp(&this->record_timestamp());
    TwoInputUdfOperator<IN1, IN2, OUT, F>::open();
  }
  void process_element1(IN1&& r) override {
    call_user(this->info(), [&] { this->fn_.process_element1(r, ctx_, this->collector_); });
  }
  void process_element2(IN2&& r) override {
    call_user(this->info(), [&] { this->fn_.process_element2(r, ctx_, this->collector_); });
  }

 private:
  ProcessContext ctx_{&this->side_outputs_};
};

// Runs a KeyedCoProcessFunction<K, IN1, IN2, OUT> (F derives from it) with keyed state and timers (timer service
// "user-timers", as KeyedProcessOperator). KS1: const IN1& -> K, KS2: const IN2& -> K. BATCH with sorted input:
// both inputs' records of a key arrive before the next key's, and each key ends as in KeyedProcessOperator.
template <class K, class IN1, class IN2, class OUT, class KS1, class KS2, class F>
class KeyedCoProcessOperator final : public AbstractKeyedOperator<K, TwoInputStreamOperator<IN1, IN2, OUT>>,
                                     private Triggerable<K, VoidNamespace> {
  using Base = AbstractKeyedOperator<K, TwoInputStreamOperator<IN1, IN2, OUT>>;

 public:
  KeyedCoProcessOperator(KS1 ks1, KS2 ks2, F fn) : ks1_(std::move(ks1)), ks2_(std::move(ks2)), fn_(std::move(fn)) {}
  void open() override {
    collector_.set_output(this->output_);
    timers_ = &this->template get_internal_timer_service<VoidNamespace>("user-timers", this);
    timer_service_.emplace(timers_);
    ctx_.emplace(&this->side_outputs_, this->backend_.get(), &*timer_service_);
    on_timer_ctx_.emplace(&this->side_outputs_, this->backend_.get(), &*timer_service_);
    ctx_->set_record_timestamp(&this->record_timestamp());
    on_timer_ctx_->set_record_timestamp(&this->record_timestamp());
    call_user(this->info(), [&] { fn_.open(this->runtime_context()); });
    timers_->start();  // restored processing-time timers
  }
  void close() override { fn_.close(); }
  void initialize_state(const OperatorRestoreState* restored) override {
    Base::initialize_state(restored);
    call_user(this->info(), [&] { initialize_if_checkpointed(fn_, restored != nullptr, this->operator_state_); });
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    call_user(this->info(), [&] { snapshot_if_checkpointed(fn_, id, ts); });
    return Base::snapshot_state(id, ts);
  }
  void notify_checkpoint_complete(CheckpointId id) override {
    Base::notify_checkpoint_complete(id);
    call_user(this->info(), [&] { notify_complete_if_listener(fn_, id); });
  }
  void notify_checkpoint_aborted(CheckpointId id) override {
    Base::notify_checkpoint_aborted(id);
    call_user(this->info(), [&] { notify_aborted_if_listener(fn_, id); });
  }
  void process_element1(IN1&& r) override {
    call_user(this->info(), [&] {
      this->set_record_key(ks1_(static_cast<const IN1&>(r)));
      fn_.process_element1(r, *ctx_, collector_);
    });
  }
  void process_element2(IN2&& r) override {
    call_user(this->info(), [&] {
      this->set_record_key(ks2_(static_cast<const IN2&>(r)));
      fn_.process_element2(r, *ctx_, collector_);
    });
  }
  // The function's timers (tests).
  InternalTimerService<K, VoidNamespace>& user_timers() { return *timers_; }

 private:
  void on_event_time(const InternalTimer<K, VoidNamespace>& timer) override { fire(timer, TimeDomain::kEventTime); }
  void on_processing_time(const InternalTimer<K, VoidNamespace>& timer) override {
    fire(timer, TimeDomain::kProcessingTime);
  }
  // As KeyedProcessOperator: event-time output carries the timer's time, processing-time output none.
  void fire(const InternalTimer<K, VoidNamespace>& timer, TimeDomain domain) {
    on_timer_ctx_->set_time_domain(domain);
    RecordTimestamp& ts = this->record_timestamp();
    const RecordTimestamp saved = ts;
    if (domain == TimeDomain::kEventTime) {
      ts.set(timer.timestamp_ms);
    } else {
      ts.clear();
    }
    call_user(this->info(), [&] { fn_.on_timer(timer.timestamp_ms, *on_timer_ctx_, collector_); });
    ts = saved;
  }

  KS1 ks1_;
  KS2 ks2_;
  F fn_;
  Collector<OUT> collector_{nullptr};
  InternalTimerService<K, VoidNamespace>* timers_ = nullptr;
  std::optional<SimpleTimerService<K>> timer_service_;
  std::optional<KeyedProcessContext<K>> ctx_;
  std::optional<KeyedOnTimerContext<K>> on_timer_ctx_;
};

}  // namespace sluice
