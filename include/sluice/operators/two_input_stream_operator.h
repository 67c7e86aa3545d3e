// TwoInputStreamOperator: an operator with two inputs of types IN1 and IN2 (Flink's TwoInputStreamOperator),
// behind connect()/co-process and interval joins. It is always the head of its chain (the task reads both inputs
// from one input gate and knows which input each channel feeds); chained successors follow as usual.
//
// Records: process_element1 / process_element2, through the operator's input1() / input2() (each an Output<INi>:
// the task's deserializer of that input, or a test harness, pushes into it).
// Event time: each input has its own watermark and idleness, computed by the task's valve of that input (minimum
// over its non-idle channels); the operator's watermark is the minimum over its non-idle inputs - an idle input
// holds nothing back - and never decreases (Flink: "the watermark of a two-input operator is the minimum of both
// inputs' watermarks"). When it advances, the virtual process_watermark runs with it (keyed operators fire their
// event-time timers there, then forward). When both inputs are idle the operator is idle downstream.
// End of input: end_input_of(n) when input n (1 or 2) ended, then end_input() once both ended (Flink's
// BoundedMultiInput#endInput(inputId)).
// Thread-safety: the task thread, as every operator.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sluice/operators/stream_operator.h"

namespace sluice {

// The type-free part: per-input watermarks and statuses combined into the operator's, and the per-input end.
class TwoInputOperatorBase : public StreamOperator {
 public:
  // Input `input_number` (1 or 2) is exhausted. Default: nothing.
  virtual void end_input_of(int32_t /*input_number*/) {}

  // A watermark / status of input `input_number` (1 or 2), from that input's valve.
  void process_input_watermark(int32_t input_number, int64_t watermark_ms) {
    InputTime& in = input(input_number);
    if (watermark_ms <= in.watermark_ms) return;
    in.watermark_ms = watermark_ms;
    if (!in.idle) advance_combined();
  }
  void process_input_watermark_status(int32_t input_number, bool idle) {
    InputTime& in = input(input_number);
    if (in.idle == idle) return;
    in.idle = idle;
    const bool all_idle = inputs_[0].idle && inputs_[1].idle;
    if (all_idle != idle_) {
      idle_ = all_idle;
      if (!all_idle) this->process_watermark_status(false);
    }
    if (!all_idle) advance_combined();
    if (all_idle) this->process_watermark_status(true);
  }
  // Each input's last watermark (INT64_MIN before its first) and whether it is idle (tests, metrics).
  int64_t input_watermark_ms(int32_t input_number) const { return inputs_[index(input_number)].watermark_ms; }
  bool input_idle(int32_t input_number) const { return inputs_[index(input_number)].idle; }

 private:
  struct InputTime {
    int64_t watermark_ms = kMinWatermark;
    bool idle = false;
  };
  static size_t index(int32_t input_number) {
    if (input_number != 1 && input_number != 2) {
      throw std::invalid_argument("two-input operator: expected input number 1 or 2, got " +
                                  std::to_string(input_number));
    }
    return static_cast<size_t>(input_number - 1);
  }
  InputTime& input(int32_t input_number) { return inputs_[index(input_number)]; }
  // The minimum over the active inputs, if it moved forward.
  void advance_combined() {
    int64_t combined = kMaxWatermark;
    bool any = false;
    for (const auto& in : inputs_) {
      if (in.idle) continue;
      any = true;
      combined = std::min(combined, in.watermark_ms);
    }
    if (any && combined > this->current_watermark_ms_) this->process_watermark(combined);
  }

  InputTime inputs_[2];
  bool idle_ = false;
};

template <class IN1, class IN2, class OUT>
class TwoInputStreamOperator : public TwoInputOperatorBase {
 public:
  using input1_type = IN1;
  using input2_type = IN2;
  using output_type = OUT;

  virtual void process_element1(IN1&& record) = 0;
  virtual void process_element2(IN2&& record) = 0;

  void set_output(Output<OUT>* out) {
    output_ = out;
    watermark_output_ = out;
  }
  Output<OUT>* output() const { return output_; }

  // The two inputs as Outputs (what the task's deserializers and a harness push into).
  Output<IN1>& input1() { return input1_; }
  Output<IN2>& input2() { return input2_; }

 protected:
  Output<OUT>* output_ = nullptr;

 private:
  template <class IN, int32_t N>
  class Input final : public Output<IN> {
   public:
    explicit Input(TwoInputStreamOperator* op) : op_(op) {}
    void collect(IN&& record) override {
      if constexpr (N == 1) {
        op_->process_element1(std::move(record));
      } else {
        op_->process_element2(std::move(record));
      }
    }
    void emit_watermark(int64_t watermark_ms) override { op_->process_input_watermark(N, watermark_ms); }
    void emit_watermark_status(bool idle) override { op_->process_input_watermark_status(N, idle); }

   private:
    TwoInputStreamOperator* op_;
  };
  Input<IN1, 1> input1_{this};
  Input<IN2, 2> input2_{this};
};

}  // namespace sluice
