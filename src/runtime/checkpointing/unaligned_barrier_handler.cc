#include "runtime/checkpointing/unaligned_barrier_handler.h"

#include <utility>

namespace sluice::runtime {

using Kind = BarrierAction::Kind;

UnalignedBarrierHandler::UnalignedBarrierHandler(std::vector<bool> aligned_channel, UnalignedCheckpointConfig config)
    : aligned_(std::move(aligned_channel)),
      config_(config),
      num_channels_(static_cast<int32_t>(aligned_.size())),
      received_(aligned_.size(), false),
      finished_(aligned_.size(), false) {}

void UnalignedBarrierHandler::reset() {
  received_.assign(received_.size(), false);
  num_received_ = 0;
  phase_ = Phase::kIdle;
  unaligned_ = false;
}

std::vector<BarrierAction> UnalignedBarrierHandler::abort_current() {
  last_handled_ = current_;
  CheckpointId id = current_;
  reset();
  return {BarrierAction{Kind::kAbortCheckpoint, -1, id}};
}

bool UnalignedBarrierHandler::collecting_done() const { return num_received_ + num_finished_ >= num_channels_; }

std::vector<BarrierAction> UnalignedBarrierHandler::maybe_trigger() {
  if (phase_ != Phase::kAligning) return {};
  const bool all = num_received_ + num_finished_ == num_channels_;
  bool aligned_done = true;
  for (int32_t c = 0; c < num_channels_ && aligned_done; ++c) {
    auto i = static_cast<size_t>(c);
    aligned_done = !aligned_[i] || received_[i] || finished_[i];
  }
  if (!all && !(unaligned_ && aligned_done)) return {};
  std::vector<BarrierAction> out;
  BarrierAction trigger{Kind::kTriggerCheckpoint, -1, current_};
  trigger.unaligned = unaligned_;
  trigger.barrier = barrier_;
  trigger.first_barrier_ns = first_barrier_ns_;
  out.push_back(trigger);
  if (!unaligned_) {
    last_handled_ = current_;
    reset();
    return out;
  }
  phase_ = Phase::kCollecting;
  if (collecting_done()) {
    out.push_back(BarrierAction{Kind::kChannelStateComplete, -1, current_});
    last_handled_ = current_;
    reset();
  }
  return out;
}

std::vector<BarrierAction> UnalignedBarrierHandler::on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                                               const BarrierArrival& arrival) {
  const bool dropped = barrier.id <= last_handled_ || (phase_ != Phase::kIdle && barrier.id < current_);
  auto actions = on_barrier(channel, barrier, arrival.now_ns, config_.unaligned_at(barrier, arrival.now_ms),
                            arrival.overtaken_buffers);
  if (dropped || arrival.overtaken_buffers <= 0) return actions;
  // After the abort of an older checkpoint (the task drops that one's copies), before what this barrier does.
  auto at = actions.begin();
  while (at != actions.end() && at->kind == Kind::kAbortCheckpoint) ++at;
  BarrierAction persist{Kind::kPersistOvertaken, channel, barrier.id};
  persist.buffers = arrival.overtaken_buffers;
  actions.insert(at, persist);
  return actions;
}

std::vector<BarrierAction> UnalignedBarrierHandler::on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                                               int64_t now_ns, bool unaligned_now,
                                                               int32_t overtaken_buffers) {
  std::vector<BarrierAction> actions;
  const CheckpointId id = barrier.id;
  const bool busy = phase_ != Phase::kIdle;
  if (id <= last_handled_ || (busy && id < current_)) return actions;  // old or aborted: dropped
  if (busy && id > current_) actions = abort_current();
  if (phase_ == Phase::kIdle) {
    phase_ = Phase::kAligning;
    current_ = id;
    barrier_ = barrier;
    first_barrier_ns_ = now_ns;
    const int64_t timeout_ms = config_.aligned_checkpoint_timeout.count();
    timeout_at_ms_ =
        config_.may_be_unaligned(barrier) && timeout_ms > 0 ? barrier.timestamp_ms + timeout_ms + 1 : INT64_MAX;
  }
  auto c = static_cast<size_t>(channel);
  if (received_[c]) return actions;  // a duplicate: cannot happen on one channel
  received_[c] = true;
  ++num_received_;
  if (phase_ == Phase::kCollecting) {
    if (collecting_done()) {
      actions.push_back(BarrierAction{Kind::kChannelStateComplete, -1, current_});
      last_handled_ = current_;
      reset();
    }
    return actions;
  }
  unaligned_ = unaligned_ || unaligned_now || overtaken_buffers > 0;
  auto trigger = maybe_trigger();
  if (trigger.empty()) {
    actions.push_back(BarrierAction{Kind::kBlockChannel, channel, id});
  } else {
    actions.insert(actions.end(), trigger.begin(), trigger.end());
  }
  return actions;
}

std::vector<BarrierAction> UnalignedBarrierHandler::on_alignment_timeout() {
  if (phase_ != Phase::kAligning || unaligned_) return {};
  unaligned_ = true;
  return maybe_trigger();
}

std::vector<BarrierAction> UnalignedBarrierHandler::on_cancellation_marker(CheckpointId id) {
  if (phase_ != Phase::kIdle && id == current_) return abort_current();
  if (phase_ == Phase::kIdle && id > last_handled_) {
    last_handled_ = id;
    return {BarrierAction{Kind::kAbortCheckpoint, -1, id}};
  }
  return {};
}

std::vector<BarrierAction> UnalignedBarrierHandler::on_channel_finished(int32_t channel) {
  auto c = static_cast<size_t>(channel);
  if (finished_[c]) return {};
  finished_[c] = true;
  ++num_finished_;
  if (received_[c]) {
    received_[c] = false;
    --num_received_;
  }
  if (phase_ == Phase::kCollecting) {
    if (!collecting_done()) return {};
    CheckpointId id = current_;
    last_handled_ = id;
    reset();
    return {BarrierAction{Kind::kChannelStateComplete, -1, id}};
  }
  return maybe_trigger();
}

}  // namespace sluice::runtime
