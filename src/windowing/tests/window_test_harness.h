// An operator-level harness for window operators (no runtime): one subtask with its own processing-time service on
// a ManualClock, records fed with timestamps, the watermark advanced by hand, main output and the late-data side
// output collected, and snapshots taken and restored as the runtime would.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

#include "sluice/sluice.h"

namespace sluice::window_testing {

enum class Store { kHeap, kRocksDB, kRocksDBHeapTimers };
inline std::string store_name(Store s) {
  return s == Store::kHeap ? "HashMap" : s == Store::kRocksDB ? "RocksDB" : "RocksDBHeapTimers";
}

template <class T>
class VectorOutput final : public Output<T> {
 public:
  void collect(T&& r) override { records.push_back(std::move(r)); }
  std::vector<T> records;
};

using Event = std::pair<int64_t, int64_t>;  // (key, value)
struct KeyOf {
  int64_t operator()(const Event& e) const { return e.first; }
};

inline constexpr int32_t kMaxP = 16;
inline const std::string kLateTag = "late";

using KeyGroups = std::vector<std::vector<uint8_t>>;

// Op: a WindowOperator<int64_t, Event, OUT, KeyOf, ...>.
template <class Op>
class Harness {
 public:
  using OUT = typename Op::output_type;
  Harness(Store store, std::unique_ptr<Op> op, ManualClock* clock, const KeyGroups* restored = nullptr)
      : pts_(clock), op_(std::move(op)) {
    OperatorSetup s;
    s.info.operator_name = "window";
    s.info.max_parallelism = kMaxP;
    s.clock = clock;
    s.key_group_range = KeyGroupRange(0, kMaxP - 1);
    s.state_backend_type = store == Store::kHeap ? "hashmap" : "rocksdb";
    s.rocksdb.local_dir = ::testing::TempDir() + "sluice-window-tests";
    if (store == Store::kRocksDBHeapTimers) s.rocksdb.timer_service_factory = RocksDBTimerServiceFactory::kHeap;
    s.processing_time_service = &pts_;
    s.checkpointing = true;
    op_->setup(s);
    op_->set_output(&out_);
    op_->side_outputs().add(kLateTag, std::type_index(typeid(Event)), &late_);
    OperatorRestoreState state;
    if (restored != nullptr) {
      state.checkpoint_id = CheckpointId(1);
      state.key_groups = *restored;
    }
    op_->initialize_state(restored != nullptr ? &state : nullptr);
    op_->open();
  }
  ~Harness() { op_->close(); }

  void send(int64_t key, int64_t value, int64_t timestamp_ms) { op_->process_element(Event{key, value}, timestamp_ms); }
  void watermark(int64_t wm) { op_->advance_watermark(wm); }
  int fire_processing_time() { return pts_.fire_due(); }

  // Takes and clears the output so far.
  std::vector<OUT> take() { return std::exchange(out_.records, {}); }
  std::vector<Event> take_late() { return std::exchange(late_.records, {}); }

  KeyGroups checkpoint(int64_t id) {
    OperatorSnapshot snap = op_->snapshot_state(CheckpointId(id), 0);
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> offsets;
    EXPECT_TRUE(snap.write_keyed(&bytes, &offsets).is_ok());
    KeyGroups groups;
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      if (offsets[i] == offsets[i + 1]) continue;
      groups.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                          bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
    }
    return groups;
  }
  Op& op() { return *op_; }

 private:
  QueuedProcessingTimeService pts_;
  VectorOutput<OUT> out_;
  VectorOutput<Event> late_;
  std::unique_ptr<Op> op_;
};

// Sorted copy (outputs of different keys at one watermark come in timer order, which differs across stores).
template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

inline std::string window_text(const TimeWindow& w) {
  return "[" + std::to_string(w.start_ms) + "," + std::to_string(w.end_ms) + ")";
}
inline std::string window_text(const GlobalWindow&) { return "global"; }

// "key@[start,end)=value" for each value: the window function behind reduce and aggregate in the tests.
template <class W>
struct Describe final : ProcessWindowFunction<int64_t, std::string, int64_t, W> {
  using Context = typename ProcessWindowFunction<int64_t, std::string, int64_t, W>::Context;
  void process(const int64_t& key, Context& ctx, const std::vector<int64_t>& values, Collector<std::string>& out) override {
    for (int64_t v : values) out.collect(std::to_string(key) + "@" + window_text(ctx.window()) + "=" + std::to_string(v));
  }
};
// "key@[start,end)=v1+v2+..." over all elements, sorted (process()).
template <class W>
struct DescribeAll final : ProcessWindowFunction<Event, std::string, int64_t, W> {
  using Context = typename ProcessWindowFunction<Event, std::string, int64_t, W>::Context;
  void process(const int64_t& key, Context& ctx, const std::vector<Event>& events, Collector<std::string>& out) override {
    std::vector<int64_t> values;
    for (const Event& e : events) values.push_back(e.second);
    std::sort(values.begin(), values.end());
    std::string s = std::to_string(key) + "@" + window_text(ctx.window()) + "=";
    for (size_t i = 0; i < values.size(); ++i) s += (i ? "+" : "") + std::to_string(values[i]);
    out.collect(std::move(s));
  }
};
// The reduced Event's value with the window.
template <class W>
struct DescribeEvent final : ProcessWindowFunction<Event, std::string, int64_t, W> {
  using Context = typename ProcessWindowFunction<Event, std::string, int64_t, W>::Context;
  void process(const int64_t& key, Context& ctx, const std::vector<Event>& events, Collector<std::string>& out) override {
    for (const Event& e : events) out.collect(std::to_string(key) + "@" + window_text(ctx.window()) + "=" + std::to_string(e.second));
  }
};

struct SumValues {
  Event operator()(const Event& a, const Event& b) const { return {a.first, a.second + b.second}; }
};
// Sum of values as int64_t, for aggregate().
struct SumAggregate final : AggregateFunction<Event, int64_t, int64_t> {
  int64_t create_accumulator() const override { return 0; }
  void add(const Event& e, int64_t& acc) const override { acc += e.second; }
  int64_t get_result(const int64_t& acc) const override { return acc; }
  void merge(int64_t& target, const int64_t& other) const override { target += other; }
};

inline std::string win(int64_t key, int64_t start, int64_t end, const std::string& v) {
  return std::to_string(key) + "@[" + std::to_string(start) + "," + std::to_string(end) + ")=" + v;
}
inline std::string win(int64_t key, int64_t start, int64_t end, int64_t v) { return win(key, start, end, std::to_string(v)); }

// The operator types of the tests.
template <class Assigner, class Trig, class Contents, class OUT = std::string>
using WindowOp = WindowOperator<int64_t, Event, OUT, KeyOf, Assigner, Trig, Contents>;

template <class Assigner, class Trig = typename Assigner::default_trigger_type>
auto aggregate_op(Assigner a, Trig t = Trig{}, WindowOperatorConfig cfg = {}) {
  using W = typename Assigner::window_type;
  using C = AggregatingWindowContents<Event, int64_t, int64_t, std::string, Describe<W>>;
  return std::make_unique<WindowOp<Assigner, Trig, C>>(KeyOf{}, a, t, C(std::make_shared<const SumAggregate>(), Describe<W>{}), cfg);
}
template <class Assigner, class Trig = typename Assigner::default_trigger_type>
auto reduce_op(Assigner a, Trig t = Trig{}, WindowOperatorConfig cfg = {}) {
  using W = typename Assigner::window_type;
  using C = ReducingWindowContents<Event, std::string, SumValues, DescribeEvent<W>>;
  return std::make_unique<WindowOp<Assigner, Trig, C>>(KeyOf{}, a, t, C(SumValues{}, DescribeEvent<W>{}), cfg);
}
template <class Assigner, class Trig = typename Assigner::default_trigger_type>
auto process_op(Assigner a, Trig t = Trig{}, WindowOperatorConfig cfg = {}) {
  using W = typename Assigner::window_type;
  using C = ListWindowContents<Event, std::string, DescribeAll<W>>;
  return std::make_unique<WindowOp<Assigner, Trig, C>>(KeyOf{}, a, t, C(DescribeAll<W>{}), cfg);
}

}  // namespace sluice::window_testing
