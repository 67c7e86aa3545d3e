// User functions of two-input operators (Flink's CoProcessFunction, KeyedCoProcessFunction, ProcessJoinFunction):
// ConnectedStreams::process and IntervalJoined::process take a class derived from one of these (datastream.h);
// ConnectedStreams::map / flat_map take two plain callables.
//
// The two process_element methods are never called concurrently, nor with on_timer: the operator runs on one
// task thread and reads its inputs one record at a time, in no particular order between the inputs. Exceptions
// fail the task, as for every user function (functions.h). Each parallel subtask owns its copy of the function.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "sluice/functions/functions.h"

namespace sluice {

// On connected streams that are not keyed: no keyed state and no timers (Flink allows neither there).
// ctx.timestamp() is the record's event time, if it has one; ctx.output(tag, x) emits to a side output.
template <class IN1, class IN2, class OUT>
class CoProcessFunction : public RichFunction {
 public:
  using input1_type = IN1;
  using input2_type = IN2;
  using output_type = OUT;
  virtual void process_element1(const IN1& value, ProcessContext& ctx, Collector<OUT>& out) = 0;
  virtual void process_element2(const IN2& value, ProcessContext& ctx, Collector<OUT>& out) = 0;
};

// On connected streams keyed by the same key type K on both sides (ConnectedStreams::key_by): records of both
// inputs with equal keys reach the same subtask, and see the same keyed state (get_*_state, one state per key
// shared by both inputs) and timers (ctx.timer_service(), api/timer_service.h) - as KeyedProcessFunction.
template <class K, class IN1, class IN2, class OUT>
class KeyedCoProcessFunction : public KeyedRichFunction<K> {
 public:
  using key_type = K;
  using input1_type = IN1;
  using input2_type = IN2;
  using output_type = OUT;
  virtual void process_element1(const IN1& value, KeyedProcessContext<K>& ctx, Collector<OUT>& out) = 0;
  virtual void process_element2(const IN2& value, KeyedProcessContext<K>& ctx, Collector<OUT>& out) = 0;
  // A timer fired (same contract as KeyedProcessFunction::on_timer). Default: nothing.
  virtual void on_timer(int64_t /*timestamp_ms*/, KeyedOnTimerContext<K>& /*ctx*/, Collector<OUT>& /*out*/) {}
};

// The context of ProcessJoinFunction::process_element: both elements' timestamps, the pair's (the larger of
// the two, which is also what the emitted records carry), and side outputs.
class ProcessJoinContext {
 public:
  explicit ProcessJoinContext(const SideOutputs* side) : side_(side) {}
  int64_t left_timestamp() const { return left_ms_; }
  int64_t right_timestamp() const { return right_ms_; }
  int64_t timestamp() const { return left_ms_ > right_ms_ ? left_ms_ : right_ms_; }
  template <class X>
  void output(const OutputTag<X>& tag, X value) const {
    side_->emit(tag.id(), std::move(value));
  }
  void set_timestamps(int64_t left_ms, int64_t right_ms) {
    left_ms_ = left_ms;
    right_ms_ = right_ms;
  }

 private:
  const SideOutputs* side_;
  int64_t left_ms_ = 0;
  int64_t right_ms_ = 0;
};

// Called once per joined pair of an interval join (KeyedStream::interval_join ... between ... process).
template <class IN1, class IN2, class OUT>
class ProcessJoinFunction : public RichFunction {
 public:
  using input1_type = IN1;
  using input2_type = IN2;
  using output_type = OUT;
  virtual void process_element(const IN1& left, const IN2& right, ProcessJoinContext& ctx, Collector<OUT>& out) = 0;
};

}  // namespace sluice
