#include "runtime/checkpointing/aligned_barrier_handler.h"

namespace sluice::runtime {

using Kind = BarrierAction::Kind;

AlignedBarrierHandler::AlignedBarrierHandler(int32_t num_channels)
    : num_channels_(num_channels),
      received_(static_cast<size_t>(num_channels), false),
      finished_(static_cast<size_t>(num_channels), false) {}

void AlignedBarrierHandler::reset_alignment() {
  received_.assign(static_cast<size_t>(num_channels_), false);
  num_received_ = 0;
  aligning_ = false;
}

std::vector<BarrierAction> AlignedBarrierHandler::maybe_trigger() {
  if (!aligning_ || num_received_ + num_finished_ < num_channels_) return {};
  CheckpointId id = current_;
  last_handled_ = id;
  reset_alignment();
  BarrierAction trigger{Kind::kTriggerCheckpoint, -1, id};
  trigger.barrier = barrier_;
  trigger.first_barrier_ns = first_barrier_ns_;
  return {trigger};
}

std::vector<BarrierAction> AlignedBarrierHandler::on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                                             const BarrierArrival& arrival) {
  std::vector<BarrierAction> actions;
  const CheckpointId id = barrier.id;
  if (id <= last_handled_ || (aligning_ && id < current_)) return actions;  // old or aborted: dropped
  if (aligning_ && id > current_) {
    actions.push_back(BarrierAction{Kind::kAbortCheckpoint, -1, current_});
    last_handled_ = current_;
    reset_alignment();
  }
  if (!aligning_) {
    aligning_ = true;
    current_ = id;
    barrier_ = barrier;
    first_barrier_ns_ = arrival.now_ns;
  }
  auto c = static_cast<size_t>(channel);
  if (!received_[c]) {
    received_[c] = true;
    ++num_received_;
  }
  auto trigger = maybe_trigger();
  if (trigger.empty()) {
    actions.push_back(BarrierAction{Kind::kBlockChannel, channel, id});
  } else {
    actions.insert(actions.end(), trigger.begin(), trigger.end());
  }
  return actions;
}

std::vector<BarrierAction> AlignedBarrierHandler::on_cancellation_marker(CheckpointId id) {
  if (aligning_ && id == current_) {
    last_handled_ = id;
    reset_alignment();
    return {BarrierAction{Kind::kAbortCheckpoint, -1, id}};
  }
  if (!aligning_ && id > last_handled_) {
    // Cancelled before any barrier of it arrived here: remember, so its late barriers are dropped, and
    // forward the marker.
    last_handled_ = id;
    return {BarrierAction{Kind::kAbortCheckpoint, -1, id}};
  }
  return {};
}

std::vector<BarrierAction> AlignedBarrierHandler::on_channel_finished(int32_t channel) {
  auto c = static_cast<size_t>(channel);
  if (finished_[c]) return {};
  finished_[c] = true;
  ++num_finished_;
  if (received_[c]) {  // it already counted as received
    received_[c] = false;
    --num_received_;
  }
  return maybe_trigger();
}

}  // namespace sluice::runtime
