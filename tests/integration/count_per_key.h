// Keyed functions whose output depends on restored keyed state, for the tests of checkpoint storage and restore:
// a running count per key (keyed state "count"), emitted with each record as "<key>,<record>,<count>"
// (CountPerKey) or as the count alone (RunningCount).
#pragma once

#include <cstdint>
#include <string>

#include "sluice/sluice.h"

namespace sluice::it {

class CountPerKey final : public KeyedProcessFunction<int64_t, int64_t, std::string> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count_ = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const int64_t& v, KeyedProcessContext<int64_t>& ctx, Collector<std::string>& out) override {
    const int64_t n = count_->value().value_or(0) + 1;
    count_->update(n);
    out.collect(std::to_string(ctx.current_key()) + "," + std::to_string(v) + "," + std::to_string(n));
  }

 private:
  ValueState<int64_t>* count_ = nullptr;
};

class RunningCount final : public KeyedProcessFunction<int64_t, int64_t, int64_t> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count_ = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const int64_t&, KeyedProcessContext<int64_t>&, Collector<int64_t>& out) override {
    const int64_t n = count_->value().value_or(0) + 1;
    count_->update(n);
    out.collect(n);
  }

 private:
  ValueState<int64_t>* count_ = nullptr;
};

}  // namespace sluice::it
