// AlignedBarrierHandler: the decisions of exactly-once barrier alignment for a task with several input
// channels (Flink's SingleCheckpointBarrierHandler in aligned mode; docs/checkpoints.md).
//
// A channel that delivered barrier n is blocked until barrier n has arrived on every channel that is still
// open; the other channels keep flowing. Then the task snapshots its operators, forwards barrier n and every
// channel is unblocked. Rules:
//  - barrier ids strictly increase: a barrier older than (or equal to) the last one handled is dropped;
//  - a newer barrier during alignment aborts the current alignment (that checkpoint is subsumed or was
//    aborted upstream) and starts aligning the new one;
//  - a cancellation marker for the checkpoint being aligned aborts it; for an older one it is ignored;
//  - a channel that finished (end of partition) is no longer waited for; if it was the last one missing,
//    the checkpoint triggers.
// Pure: it only returns what to do; the task applies it to the input gate. One instance per task; task
// thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/checkpointing/checkpoint_barrier_handler.h"
#include "sluice/core/ids.h"

namespace sluice::runtime {

class AlignedBarrierHandler final : public CheckpointBarrierHandler {
 public:
  explicit AlignedBarrierHandler(int32_t num_channels);

  // Returns the actions to apply, in order (an abort of the old alignment can precede a block or trigger
  // for the new one).
  std::vector<BarrierAction> on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                        const BarrierArrival& arrival) override;
  std::vector<BarrierAction> on_barrier(int32_t channel, CheckpointId id) {
    return on_barrier(channel, CheckpointBarrier{id, 0, {}}, BarrierArrival{});
  }
  std::vector<BarrierAction> on_cancellation_marker(CheckpointId id) override;
  std::vector<BarrierAction> on_channel_finished(int32_t channel) override;

  bool is_aligning() const { return aligning_; }
  CheckpointId current_checkpoint() const { return current_; }
  CheckpointId last_handled() const { return last_handled_; }

 private:
  std::vector<BarrierAction> maybe_trigger();
  void reset_alignment();

  int32_t num_channels_;
  std::vector<bool> received_;  // barrier `current_` delivered on this channel
  std::vector<bool> finished_;
  int32_t num_received_ = 0;
  int32_t num_finished_ = 0;
  bool aligning_ = false;
  CheckpointId current_{0};
  CheckpointId last_handled_{0};  // highest id triggered or aborted
  CheckpointBarrier barrier_;     // the first barrier of `current_`
  int64_t first_barrier_ns_ = 0;  // when it arrived
};

}  // namespace sluice::runtime
