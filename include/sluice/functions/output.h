// Output<T>: where a user function or an operator emits records (Flink's Collector, and the Output of its
// api.operators package), with the watermark bounds and a record's timestamp. It sits with the function
// interfaces (sluice/functions/) because every function emits through it; the operators build on both.
//
// Within an operator chain an Output<T> is the next operator itself (a virtual call, no copy, no
// serialization). At a chain's end it is a RecordWriterOutput that serializes into network buffers; with
// several consumers it is a BroadcastingOutput that copies the record to each. Thread-safety: an Output is
// used only by the task thread that owns the chain.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <typeinfo>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sluice {

// Watermark bounds (Flink's Long.MIN_VALUE / Long.MAX_VALUE watermarks): no event time has passed yet, and
// the end of event time (a bounded input ended; every event-time timer fires).
inline constexpr int64_t kMinWatermark = INT64_MIN;
inline constexpr int64_t kMaxWatermark = INT64_MAX;
// The timestamp of a record that has none (no assigner upstream), as a timestamp assigner and the network see it.
inline constexpr int64_t kNoRecordTimestamp = INT64_MIN;

// The event-time timestamp of the record being processed, one per task, shared by the chained operators (as
// Flink reuses the input StreamRecord): Output<T>::collect stays a plain record call. Written by whoever gives
// a record its time - a timestamp assigner (assign_timestamps_and_watermarks, a source's WatermarkStrategy),
// the network deserializer (read from the wire), a timer firing (the timer's time), a window (its max
// timestamp) - and read by the network output (written to the wire), process functions and window assigners.
// Task thread only.
struct RecordTimestamp {
  bool has_timestamp = false;
  int64_t timestamp_ms = 0;
  void set(int64_t ts_ms) {
    has_timestamp = true;
    timestamp_ms = ts_ms;
  }
  void clear() { has_timestamp = false; }
};

// Every output carries, besides records, the event-time progress in band: watermarks (no record with a
// timestamp <= watermark_ms follows, except late ones) and the watermark status (an idle stream holds no
// watermark back). The defaults drop them (outputs nobody reads).
class OutputBase {
 public:
  virtual ~OutputBase() = default;
  virtual void emit_watermark(int64_t /*watermark_ms*/) {}
  virtual void emit_watermark_status(bool /*idle*/) {}
};

template <class T>
class Output : public OutputBase {
 public:
  virtual void collect(T&& record) = 0;
};

// Side-output routing table of one operator: tag id -> output for the tag's element type. Records for tags
// nobody consumes are dropped, as in Flink.
class SideOutputs {
 public:
  void add(const std::string& tag_id, std::type_index type, OutputBase* out) {
    routes_.emplace(tag_id, Route{type, out});
  }
  // Throws std::invalid_argument if the job reads this tag with another element type than X.
  template <class X>
  void emit(const std::string& tag_id, X&& value) const {
    auto it = routes_.find(tag_id);
    if (it == routes_.end()) return;
    if (it->second.type != std::type_index(typeid(std::decay_t<X>))) {
      throw std::invalid_argument("side output '" + tag_id + "' is emitted with element type " +
                                  typeid(std::decay_t<X>).name() + " but read with " + it->second.type.name() +
                                  ": use one OutputTag type per tag id");
    }
    static_cast<Output<std::decay_t<X>>*>(it->second.out)->collect(std::forward<X>(value));
  }
  bool empty() const { return routes_.empty(); }
  // Side outputs carry the operator's watermarks too (their consumers' event time must advance).
  void emit_watermark(int64_t watermark_ms) const {
    for (const auto& [tag, route] : routes_) route.out->emit_watermark(watermark_ms);
  }
  void emit_watermark_status(bool idle) const {
    for (const auto& [tag, route] : routes_) route.out->emit_watermark_status(idle);
  }

 private:
  struct Route {
    std::type_index type;
    OutputBase* out;
  };
  std::unordered_map<std::string, Route> routes_;
};

// Copies each record to several outputs (a node with several consumers). The last one gets the original.
template <class T>
class BroadcastingOutput final : public Output<T> {
 public:
  explicit BroadcastingOutput(std::vector<Output<T>*> outs) : outs_(std::move(outs)) {}
  void collect(T&& record) override {
    for (size_t i = 0; i + 1 < outs_.size(); ++i) {
      T copy = record;
      outs_[i]->collect(std::move(copy));
    }
    if (!outs_.empty()) outs_.back()->collect(std::move(record));
  }
  void emit_watermark(int64_t watermark_ms) override {
    for (auto* o : outs_) o->emit_watermark(watermark_ms);
  }
  void emit_watermark_status(bool idle) override {
    for (auto* o : outs_) o->emit_watermark_status(idle);
  }

 private:
  std::vector<Output<T>*> outs_;
};

// Output that drops everything (a node whose records nobody consumes).
template <class T>
class DiscardingOutput final : public Output<T> {
 public:
  void collect(T&&) override {}
};

// Counts records into a single-writer counter, then forwards: wraps an operator's input (numRecordsIn) and its
// output (numRecordsOut). When `watermark_ms` is set, each watermark passing through is stored there (relaxed), for
// the currentInputWatermark / currentOutputWatermark gauges that other threads read.
template <class T, class CounterT>
class CountingOutput final : public Output<T> {
 public:
  CountingOutput(Output<T>* next, CounterT* counter, std::atomic<int64_t>* watermark_ms = nullptr)
      : next_(next), counter_(counter), watermark_ms_(watermark_ms) {}
  void collect(T&& record) override {
    counter_->inc();
    next_->collect(std::move(record));
  }
  void emit_watermark(int64_t watermark_ms) override {
    if (watermark_ms_ != nullptr) watermark_ms_->store(watermark_ms, std::memory_order_relaxed);
    next_->emit_watermark(watermark_ms);
  }
  void emit_watermark_status(bool idle) override { next_->emit_watermark_status(idle); }

 private:
  Output<T>* next_;
  CounterT* counter_;
  std::atomic<int64_t>* watermark_ms_;
};

}  // namespace sluice
