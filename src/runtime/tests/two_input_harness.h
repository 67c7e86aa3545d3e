// A harness for two-input operators without a task (the shape of timer_service_test's): setup on a ManualClock
// with its own processing-time service, elements with a timestamp and watermarks/statuses fed to input 1 or 2,
// output recorded with the record timestamp and the watermarks in between, and keyed checkpoints as key groups.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/sluice.h"

namespace sluice::two_input_test {

enum class Store { kHeap, kRocksDB, kRocksDBHeapTimers };
inline std::string store_name(Store s) {
  return s == Store::kHeap ? "HashMap" : s == Store::kRocksDB ? "RocksDB" : "RocksDBHeapTimers";
}

// Records what reaches it: the records, their timestamps, and a log of records, watermarks and statuses.
template <class T>
class RecordingOutput final : public Output<T> {
 public:
  void collect(T&& r) override {
    timestamps.push_back(timestamp != nullptr && timestamp->has_timestamp ? std::optional<int64_t>(timestamp->timestamp_ms)
                                                                          : std::nullopt);
    records.push_back(std::move(r));
    log.push_back("record");
  }
  void emit_watermark(int64_t watermark_ms) override {
    watermarks.push_back(watermark_ms);
    log.push_back("watermark " + std::to_string(watermark_ms));
  }
  void emit_watermark_status(bool idle) override { log.push_back(idle ? "idle" : "active"); }
  void clear() {
    records.clear();
    timestamps.clear();
    watermarks.clear();
    log.clear();
  }
  std::vector<T> records;
  std::vector<std::optional<int64_t>> timestamps;
  std::vector<int64_t> watermarks;
  std::vector<std::string> log;
  const RecordTimestamp* timestamp = nullptr;
};

constexpr int32_t kMaxParallelism = 32;

// Op: a TwoInputStreamOperator<IN1, IN2, OUT>.
template <class Op>
class TwoInputHarness {
 public:
  using IN1 = typename Op::input1_type;
  using IN2 = typename Op::input2_type;
  using OUT = typename Op::output_type;

  TwoInputHarness(std::unique_ptr<Op> op, Store store, ManualClock* clock, int32_t subtask = 0,
                  int32_t parallelism = 1, const OperatorRestoreState* restored = nullptr)
      : pts_(clock), op_(std::move(op)) {
    OperatorSetup s;
    s.info.operator_name = "two-input";
    s.info.subtask_index = subtask;
    s.info.parallelism = parallelism;
    s.info.max_parallelism = kMaxParallelism;
    s.clock = clock;
    s.key_group_range = key_group_range_for_subtask(kMaxParallelism, parallelism, SubtaskIndex(subtask));
    s.state_backend_type = store == Store::kHeap ? "hashmap" : "rocksdb";
    s.rocksdb.local_dir = ::testing::TempDir() + "sluice-two-input-tests";
    if (store == Store::kRocksDBHeapTimers) s.rocksdb.timer_service_factory = RocksDBTimerServiceFactory::kHeap;
    s.processing_time_service = &pts_;
    s.checkpointing = true;
    op_->setup(s);
    op_->side_outputs().add("late-left", std::type_index(typeid(IN1)), &late1);
    op_->side_outputs().add("late-right", std::type_index(typeid(IN2)), &late2);
    op_->set_output(&out);
    out.timestamp = &op_->record_timestamp();
    op_->initialize_state(restored);
    op_->open();
  }
  ~TwoInputHarness() { op_->close(); }

  // An element with event time `ts_ms` (nullopt: none), as the task's deserializer delivers it.
  void element1(IN1 r, std::optional<int64_t> ts_ms = std::nullopt) {
    stamp(ts_ms);
    op_->input1().collect(std::move(r));
  }
  void element2(IN2 r, std::optional<int64_t> ts_ms = std::nullopt) {
    stamp(ts_ms);
    op_->input2().collect(std::move(r));
  }
  void watermark1(int64_t wm) { op_->input1().emit_watermark(wm); }
  void watermark2(int64_t wm) { op_->input2().emit_watermark(wm); }
  void status1(bool idle) { op_->input1().emit_watermark_status(idle); }
  void status2(bool idle) { op_->input2().emit_watermark_status(idle); }
  // Both inputs end (as a task does: each input, then the chain).
  void end_input() {
    op_->end_input_of(1);
    op_->end_input_of(2);
    op_->end_input();
  }
  void fire_processing_time() { pts_.fire_due(); }

  // The keyed state as the checkpoint's key groups.
  std::vector<std::vector<uint8_t>> checkpoint(int64_t id) {
    OperatorSnapshot snap = op_->snapshot_state(CheckpointId(id), 0);
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> offsets;
    EXPECT_TRUE(snap.write_keyed(&bytes, &offsets).is_ok());
    std::vector<std::vector<uint8_t>> groups;
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      if (offsets[i] == offsets[i + 1]) continue;
      groups.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                          bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
    }
    return groups;
  }

  Op& op() { return *op_; }
  RecordingOutput<OUT> out;
  RecordingOutput<IN1> late1;
  RecordingOutput<IN2> late2;

 private:
  void stamp(std::optional<int64_t> ts_ms) {
    if (ts_ms) {
      op_->record_timestamp().set(*ts_ms);
    } else {
      op_->record_timestamp().clear();
    }
  }
  QueuedProcessingTimeService pts_;
  std::unique_ptr<Op> op_;
};

}  // namespace sluice::two_input_test
