// SourceOperator (reader side, in each source subtask) and SourceCoordinator (enumerator side, one per
// source), and the small event protocol between them. Splits travel as bytes (TypeSerializer<SplitT>), as
// they would between processes. See source.h for the threading rules.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/functions/watermark_strategy.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/operators/stream_operator.h"
#include "sluice/source/async_calls.h"
#include "sluice/source/source.h"

namespace sluice {

struct OperatorEvent {
  enum class Kind : uint8_t { kAddSplits, kNoMoreSplits };
  Kind kind;
  std::vector<uint8_t> payload;  // serialized std::vector<SplitT> for kAddSplits
};

// Delivers coordinator events to one reader subtask (the runtime posts them into the task's mailbox).
class OperatorEventSink {
 public:
  virtual ~OperatorEventSink() = default;
  virtual void send(OperatorEvent event) = 0;
};

// Type-erased coordinator, owned by the runtime (one per source vertex). Thread-safe.
//
// Checkpoints (Flink's SourceCoordinator + its event valve): snapshot_enumerator(n) is called when checkpoint
// n is triggered, before the source tasks take their snapshots. From then on, events for a reader are held
// back until that reader reports reader_snapshot_done(n), so an assignment is either in the enumerator's
// snapshot (unassigned) or in the reader's (assigned), never in both or neither. abort_checkpoint(n) releases
// everything held for n. Events for a reader that has not registered yet (its task is still opening) are kept
// and handed to it by register_reader, which the reader handles at once, before its task runs any mail: a
// checkpoint triggered meanwhile queues its trigger in the mailbox, and events mailed at registration would run
// after that trigger, leaving an assignment made before the checkpoint in neither snapshot.
//
// SourceReaderCoordinator is what the readers see of it: in-process the coordinator itself, in a TaskManager process
// a proxy to the coordinator in the JobManager (src/rpc). Thread-safe.
class SourceReaderCoordinator {
 public:
  virtual ~SourceReaderCoordinator() = default;
  // Returns the events for `subtask` made before it registered and those the enumerator makes for the registration
  // itself (its initial splits), oldest first; later ones go to `sink`.
  [[nodiscard]] virtual std::vector<OperatorEvent> register_reader(int32_t subtask, OperatorEventSink* sink) = 0;
  virtual void handle_split_request(int32_t subtask) = 0;
  virtual void reader_snapshot_done(int32_t subtask, CheckpointId checkpoint_id) = 0;
};

class SourceCoordinatorBase : public SourceReaderCoordinator {
 public:
  // `restored_state`: the enumerator state of the checkpoint the job restores from, or null on a fresh start.
  virtual void start(int32_t parallelism, const std::vector<uint8_t>* restored_state) = 0;
  virtual std::vector<uint8_t> snapshot_enumerator(CheckpointId checkpoint_id) = 0;
  virtual void abort_checkpoint(CheckpointId checkpoint_id) = 0;
  // Checkpoint `checkpoint_id` completed: the assignments made before its enumerator snapshot are in its readers'
  // state and no reset needs them any more.
  virtual void checkpoint_complete(CheckpointId checkpoint_id) = 0;
  // The reader of `subtask` restarts alone (region failover) from the checkpoint `restored_checkpoint_id` (0: from
  // no checkpoint, a fresh start). Flink's SplitAssignmentTracker: the splits assigned to it after that checkpoint's
  // enumerator snapshot are not in its restored state, so they go back to the enumerator (add_splits_back); what
  // was queued for the old reader is dropped; the new reader registers again (the enumerator's add_reader).
  virtual void reset_subtask(int32_t subtask, CheckpointId restored_checkpoint_id) = 0;
  virtual void close() = 0;
};

// The reader's handle on its coordinator, bound to its subtask and event sink (given in OperatorSetup).
class SourceCoordinatorGateway {
 public:
  SourceCoordinatorGateway(SourceReaderCoordinator* coordinator, int32_t subtask, OperatorEventSink* sink)
      : coordinator_(coordinator), subtask_(subtask), sink_(sink) {}
  // The events made before the reader registered (SourceCoordinatorBase::register_reader): handle them at once.
  [[nodiscard]] std::vector<OperatorEvent> register_reader() { return coordinator_->register_reader(subtask_, sink_); }
  void request_split() { coordinator_->handle_split_request(subtask_); }
  void snapshot_done(CheckpointId id) { coordinator_->reader_snapshot_done(subtask_, id); }

 private:
  SourceReaderCoordinator* coordinator_;
  int32_t subtask_;
  OperatorEventSink* sink_;
};

template <class T, class SplitT>
class SourceCoordinator final : public SourceCoordinatorBase, private SplitEnumeratorContext<SplitT> {
 public:
  explicit SourceCoordinator(std::shared_ptr<const Source<T, SplitT>> source) : source_(std::move(source)) {}

  void start(int32_t parallelism, const std::vector<uint8_t>* restored_state) override {
    std::lock_guard lock(mu_);
    parallelism_ = parallelism;
    sinks_.assign(static_cast<size_t>(parallelism), nullptr);
    pending_.assign(static_cast<size_t>(parallelism), {});
    held_.assign(static_cast<size_t>(parallelism), {});
    valve_closed_.assign(static_cast<size_t>(parallelism), false);
    enumerator_ = restored_state ? source_->restore_enumerator(*this, *restored_state) : source_->create_enumerator(*this);
    enumerator_->start();
  }
  std::vector<OperatorEvent> register_reader(int32_t subtask, OperatorEventSink* sink) override {
    std::lock_guard lock(mu_);
    const auto i = static_cast<size_t>(subtask);
    // What the enumerator assigns on registration comes back with it, after what came before, so the reader has
    // every split of its initial assignment before it polls. Through `sink` each would be a network call of its
    // own in a TaskManager, and a reader polling its first split while the others are on their way advances its
    // watermark past records the later splits hold, which then arrive late.
    if (i >= sinks_.size()) {
      throw std::out_of_range("reader subtask " + std::to_string(subtask) + " of a source with parallelism " +
                              std::to_string(parallelism_));
    }
    enumerator_->add_reader(subtask);
    std::vector<OperatorEvent> events = std::move(pending_[i]);
    pending_[i].clear();
    sinks_[i] = sink;  // from now on
    return events;
  }
  void handle_split_request(int32_t subtask) override {
    std::lock_guard lock(mu_);
    enumerator_->handle_split_request(subtask);
  }
  std::vector<uint8_t> snapshot_enumerator(CheckpointId checkpoint_id) override {
    std::lock_guard lock(mu_);
    valve_checkpoint_ = checkpoint_id;
    valve_closed_.assign(static_cast<size_t>(parallelism_), true);
    assigned_by_checkpoint_[checkpoint_id.value()] = std::exchange(uncheckpointed_, {});
    return enumerator_->snapshot_state(checkpoint_id);
  }
  void checkpoint_complete(CheckpointId checkpoint_id) override {
    std::lock_guard lock(mu_);
    assigned_by_checkpoint_.erase(assigned_by_checkpoint_.begin(),
                                  assigned_by_checkpoint_.upper_bound(checkpoint_id.value()));
  }
  void reset_subtask(int32_t subtask, CheckpointId restored_checkpoint_id) override {
    std::lock_guard lock(mu_);
    if (subtask < 0 || subtask >= parallelism_) {
      throw std::out_of_range("reset of reader subtask " + std::to_string(subtask) + " of a source with parallelism " +
                              std::to_string(parallelism_));
    }
    const auto i = static_cast<size_t>(subtask);
    std::vector<SplitT> back;
    auto take = [&](std::vector<std::vector<SplitT>>& per_subtask) {
      if (i >= per_subtask.size()) return;
      for (auto& split : per_subtask[i]) back.push_back(std::move(split));
      per_subtask[i].clear();
    };
    for (auto it = assigned_by_checkpoint_.upper_bound(restored_checkpoint_id.value());
         it != assigned_by_checkpoint_.end(); ++it) {
      take(it->second);
    }
    take(uncheckpointed_);
    sinks_[i] = nullptr;
    pending_[i].clear();
    held_[i].clear();
    valve_closed_[i] = false;
    if (!back.empty()) enumerator_->add_splits_back(std::move(back), subtask);
  }
  void reader_snapshot_done(int32_t subtask, CheckpointId checkpoint_id) override {
    std::lock_guard lock(mu_);
    if (checkpoint_id == valve_checkpoint_) open_valve(subtask);
  }
  void abort_checkpoint(CheckpointId checkpoint_id) override {
    std::lock_guard lock(mu_);
    if (checkpoint_id != valve_checkpoint_) return;
    for (int32_t s = 0; s < parallelism_; ++s) open_valve(s);
  }
  void close() override {
    async_calls_.stop();  // without mu_: a running call's continuation takes it
    std::lock_guard lock(mu_);
    if (enumerator_) enumerator_->close();
  }

 private:
  // SplitEnumeratorContext, called by the enumerator with mu_ held.
  int32_t current_parallelism() const override { return parallelism_; }
  void assign_split(SplitT split, int32_t subtask) override {
    std::vector<SplitT> splits;
    splits.push_back(split);
    deliver(subtask, OperatorEvent{OperatorEvent::Kind::kAddSplits, serialize_bytes(splits)});
    uncheckpointed_.resize(static_cast<size_t>(parallelism_));
    uncheckpointed_[static_cast<size_t>(subtask)].push_back(std::move(split));
  }
  void signal_no_more_splits(int32_t subtask) override {
    deliver(subtask, OperatorEvent{OperatorEvent::Kind::kNoMoreSplits, {}});
  }
  void call_async(std::function<std::function<void()>()> work, int64_t initial_delay_ms, int64_t period_ms) override {
    async_calls_.add(std::move(work), initial_delay_ms, period_ms);
  }
  void deliver(int32_t subtask, OperatorEvent ev) {
    if (subtask < 0 || subtask >= parallelism_) {
      throw std::out_of_range("split enumerator assigned to subtask " + std::to_string(subtask) +
                              " but the source has parallelism " + std::to_string(parallelism_));
    }
    auto i = static_cast<size_t>(subtask);
    if (valve_closed_[i]) held_[i].push_back(std::move(ev));
    else if (sinks_[i]) sinks_[i]->send(std::move(ev));
    else pending_[i].push_back(std::move(ev));
  }
  void open_valve(int32_t subtask) {
    auto i = static_cast<size_t>(subtask);
    valve_closed_[i] = false;
    auto held = std::move(held_[i]);
    held_[i].clear();
    for (auto& ev : held) deliver(subtask, std::move(ev));
  }

  std::shared_ptr<const Source<T, SplitT>> source_;
  std::mutex mu_;
  int32_t parallelism_ = 0;
  std::unique_ptr<SplitEnumerator<SplitT>> enumerator_;
  std::vector<OperatorEventSink*> sinks_;
  std::vector<std::vector<OperatorEvent>> pending_;  // for readers not registered yet
  std::vector<std::vector<OperatorEvent>> held_;     // behind the closed valve of valve_checkpoint_
  std::vector<bool> valve_closed_;
  CheckpointId valve_checkpoint_{-1};
  // Splits assigned per subtask since the last enumerator snapshot, and those assigned before each snapshot whose
  // checkpoint has not completed (by checkpoint id): what reset_subtask gives back. Without checkpoints (no
  // restarts either) they are kept for the job's life, as Flink's tracker does.
  std::vector<std::vector<SplitT>> uncheckpointed_;
  std::map<int64_t, std::vector<std::vector<SplitT>>> assigned_by_checkpoint_;
  AsyncCalls async_calls_{mu_};  // declared last: destroyed (its worker joined) before what its calls use
};

// Subtask 0 of a source keeps its split enumerator's checkpointed state in this (union list) operator state,
// so the enumerator restores from the same checkpoint as the readers (see cluster/state_assignment.h).
inline constexpr const char* kSourceEnumeratorStateName = "SourceEnumeratorState";

// Type-erased view of a source operator for the task's loop.
class SourceOperatorBase : public StreamOperator {
 public:
  // The enumerator state taken when checkpoint `id` was triggered; subtask 0 stores it in its snapshot of id.
  void set_enumerator_state(CheckpointId id, std::vector<uint8_t> state) {
    enumerator_checkpoint_ = id;
    enumerator_state_ = std::move(state);
  }

 protected:
  CheckpointId enumerator_checkpoint_{-1};
  std::vector<uint8_t> enumerator_state_;

 public:
  virtual InputStatus emit_next() = 0;
  virtual void handle_operator_event(const OperatorEvent& event) = 0;
  virtual std::chrono::nanoseconds idle_wait_hint() const = 0;
};

template <class T, class SplitT>
class SourceOperator final : public SourceOperatorBase, private SourceReaderContext {
 public:
  // `strategy`: event time (per-split watermarks, source_watermarks.h); none: records carry no timestamps.
  explicit SourceOperator(std::shared_ptr<const Source<T, SplitT>> source,
                          std::optional<WatermarkStrategy<T>> strategy = std::nullopt)
      : source_(std::move(source)), strategy_(std::move(strategy)) {}
  void set_output(Output<T>* out) {
    output_.emplace(out);
    watermark_output_ = out;
  }

  void initialize_state(const OperatorRestoreState* restored) override {
    StreamOperator::initialize_state(restored);
    splits_state_ = &operator_state_.get_list_state(ListStateDescriptor<SplitT>(kReaderStateName));
    enumerator_state_store_ =
        &operator_state_.get_union_list_state(ListStateDescriptor<std::vector<uint8_t>>(kSourceEnumeratorStateName));
    if (strategy_) {  // sources without event time keep their checkpoint format unchanged
      watermark_state_ =
          &operator_state_.get_union_list_state(ListStateDescriptor<SplitWatermarkState>(kWatermarkStateName));
    }
  }
  void open() override {
    if (setup_.source_gateway == nullptr) throw std::logic_error("source operator without a coordinator");
    if (strategy_) start_watermarks();
    reader_ = call_user(info(), [&] { return source_->create_reader(*this); });
    // Splits restored from a checkpoint go back to the reader before it starts (Flink's SourceOperator).
    std::vector<SplitT> restored = splits_state_->get();
    if (watermarks_ && !restored.empty()) {
      std::vector<std::string> ids;
      for (const auto& split : restored) ids.push_back(split.split_id());
      watermarks_->add_splits(ids);
    }
    if (!restored.empty()) call_user(info(), [&] { reader_->add_splits(std::move(restored)); });
    call_user(info(), [&] { reader_->start(); });
    // Before any mail (a checkpoint trigger among them): an assignment made before a checkpoint's enumerator
    // snapshot must be in this reader's snapshot of it.
    for (const OperatorEvent& ev : setup_.source_gateway->register_reader()) handle_operator_event(ev);
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    std::vector<SplitT> splits = call_user(info(), [&] { return reader_->snapshot_state(); });
    snapshotted_splits_[id.value()] = splits;
    splits_state_->update(std::move(splits));
    // Each split's event time, taken at the same point as its position (union state: it follows the split).
    if (watermarks_) watermark_state_->update(watermarks_->snapshot());
    // Only subtask 0 keeps the enumerator's state (union state would otherwise multiply copies).
    if (info().subtask_index == 0 && enumerator_checkpoint_ == id) {
      enumerator_state_store_->update({enumerator_state_});
    } else {
      enumerator_state_store_->clear();
    }
    OperatorSnapshot snap = SourceOperatorBase::snapshot_state(id, ts);
    setup_.source_gateway->snapshot_done(id);
    return snap;
  }
  InputStatus emit_next() override {
    return call_user(info(), [&] { return reader_->poll_next(*output_); });
  }
  void handle_operator_event(const OperatorEvent& event) override {
    if (event.kind == OperatorEvent::Kind::kNoMoreSplits) {
      call_user(info(), [&] { reader_->notify_no_more_splits(); });
      return;
    }
    auto splits = deserialize_bytes<std::vector<SplitT>>(event.payload.data(), event.payload.size(),
                                                         "split assignment for " + info().operator_name);
    if (!splits.is_ok()) throw OperatorFailure(info(), splits.status().to_string());
    call_user(info(), [&] { reader_->add_splits(std::move(splits).value()); });
  }
  std::chrono::nanoseconds idle_wait_hint() const override { return reader_->idle_wait_hint(); }
  // The reader hears of the completed checkpoint with the splits it snapshotted for it; older snapshots (of
  // checkpoints that failed or were subsumed) are dropped.
  void notify_checkpoint_complete(CheckpointId id) override {
    auto it = snapshotted_splits_.find(id.value());
    if (it != snapshotted_splits_.end()) call_user(info(), [&] { reader_->notify_checkpoint_complete(id, it->second); });
    snapshotted_splits_.erase(snapshotted_splits_.begin(), snapshotted_splits_.upper_bound(id.value()));
  }
  void close() override {
    if (reader_) reader_->close();
  }
  // Null without a WatermarkStrategy (tests inspect per-split state through it).
  const SourceWatermarks<T>* watermarks() const { return watermarks_.get(); }

 private:
  int32_t subtask_index() const override { return setup_.info.subtask_index; }
  int32_t parallelism() const override { return setup_.info.parallelism; }
  void send_split_request() override { setup_.source_gateway->request_split(); }
  MetricGroup& metric_group() override { return *setup_.metrics; }
  const Clock& clock() const override { return *setup_.clock; }

  void start_watermarks() {
    typename SourceWatermarks<T>::Config c;
    c.output = output_->out_;
    c.record_timestamp = &record_timestamp();
    if (setup_.metrics != nullptr) {
      c.late_records = &setup_.metrics->counter(metric_names::kNumLateRecords);
      c.skewed_records = &setup_.metrics->counter(metric_names::kNumSkewedRecords);
    }
    c.side_outputs = &side_outputs_;
    c.on_watermark = [this](int64_t wm) { process_watermark(wm); };
    c.on_idle = [this](bool idle) { process_watermark_status(idle); };
    c.default_split_id = "#subtask-" + std::to_string(info().subtask_index);
    watermarks_ = std::make_unique<SourceWatermarks<T>>(*strategy_, WatermarkGeneratorContext{setup_.clock}, std::move(c));
    watermarks_->restore(watermark_state_->get());
    output_->watermarks_ = watermarks_.get();
    schedule_periodic_watermarks([this] { call_user(info(), [&] { watermarks_->on_periodic_emit(); }); });
  }

  static constexpr const char* kReaderStateName = "SourceReaderState";
  static constexpr const char* kWatermarkStateName = "SourceWatermarkState";
  std::shared_ptr<const Source<T, SplitT>> source_;
  std::unique_ptr<SourceReader<T, SplitT>> reader_;
  std::optional<ReaderOutput<T>> output_;
  ListState<SplitT>* splits_state_ = nullptr;
  ListState<std::vector<uint8_t>>* enumerator_state_store_ = nullptr;
  std::optional<WatermarkStrategy<T>> strategy_;
  std::unique_ptr<SourceWatermarks<T>> watermarks_;
  ListState<SplitWatermarkState>* watermark_state_ = nullptr;
  std::map<int64_t, std::vector<SplitT>> snapshotted_splits_;  // checkpoint id -> splits, until it completes
};

}  // namespace sluice
