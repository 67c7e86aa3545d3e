// TimestampsAndWatermarksOperator: DataStream::assign_timestamps_and_watermarks (Flink's operator of the same
// name). Gives each record its timestamp (the strategy's assigner, which receives the record's current
// timestamp or kNoRecordTimestamp), runs one WatermarkGenerator for the subtask and emits its watermarks
// (punctuated from on_event, periodic every pipeline.auto-watermark-interval). Watermarks from upstream are
// not forwarded, except the final kMaxWatermark (end of input), as in Flink. Late records and the max-skew
// guard follow the strategy as in sources (source_watermarks.h), with the subtask as the one split; this
// operator's generator state is checkpointed as operator state under its own subtask's entry.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "sluice/functions/watermark_strategy.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/operators/stream_operator.h"
#include "sluice/source/source_watermarks.h"

namespace sluice {

template <class T>
class TimestampsAndWatermarksOperator final : public OneInputStreamOperator<T, T> {
 public:
  explicit TimestampsAndWatermarksOperator(WatermarkStrategy<T> strategy) : strategy_(std::move(strategy)) {}

  void initialize_state(const OperatorRestoreState* restored) override {
    OneInputStreamOperator<T, T>::initialize_state(restored);
    state_ = &this->operator_state_.get_union_list_state(ListStateDescriptor<SplitWatermarkState>("WatermarkState"));
  }
  void open() override {
    typename SourceWatermarks<T>::Config c;
    c.output = this->output_;
    c.record_timestamp = &this->record_timestamp();
    if (this->setup_.metrics != nullptr) {
      c.late_records = &this->setup_.metrics->counter(metric_names::kNumLateRecords);
      c.skewed_records = &this->setup_.metrics->counter(metric_names::kNumSkewedRecords);
    }
    c.side_outputs = &this->side_outputs_;
    c.on_watermark = [this](int64_t wm) { this->forward_watermark(wm); };
    c.on_idle = [this](bool idle) { StreamOperator::process_watermark_status(idle); };
    c.default_split_id = "#subtask-" + std::to_string(this->info().subtask_index);
    watermarks_ = std::make_unique<SourceWatermarks<T>>(strategy_, WatermarkGeneratorContext{this->setup_.clock},
                                                        std::move(c));
    watermarks_->restore(state_->get());
    split_ = &watermarks_->default_split();
    this->schedule_periodic_watermarks([this] { call_user(this->info(), [&] { watermarks_->on_periodic_emit(); }); });
  }
  void collect(T&& record) override {
    RecordTimestamp& rt = this->record_timestamp();
    const int64_t current = rt.has_timestamp ? rt.timestamp_ms : kNoRecordTimestamp;
    call_user(this->info(), [&] { watermarks_->collect(*split_, std::move(record), current); });
  }
  void process_watermark(int64_t watermark_ms) override {
    if (watermark_ms == kMaxWatermark) StreamOperator::process_watermark(watermark_ms);
  }
  void process_watermark_status(bool) override {}  // this operator decides its own status
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    state_->update(watermarks_->snapshot());
    return OneInputStreamOperator<T, T>::snapshot_state(id, ts);
  }

 private:
  WatermarkStrategy<T> strategy_;
  std::unique_ptr<SourceWatermarks<T>> watermarks_;
  typename SourceWatermarks<T>::Split* split_ = nullptr;
  ListState<SplitWatermarkState>* state_ = nullptr;
};

}  // namespace sluice
