// UnalignedBarrierHandler: barrier handling of a task when unaligned checkpoints are enabled (Flink's
// SingleCheckpointBarrierHandler with its alternating aligned/unaligned controller; docs/checkpoints.md:
// unaligned checkpoints and the alignment timeout).
//
// A checkpoint starts aligned unless it is unaligned from the start (timeout 0): each channel that delivers
// barrier n is blocked, as in AlignedBarrierHandler. It turns unaligned when a barrier arrives that overtook
// data (a priority barrier) or when the task reports that the alignment timeout expired (on_alignment_timeout).
// An unaligned checkpoint triggers as soon as barrier n has arrived on every open *aligned* channel (forward
// and broadcast inputs, whose data never goes into channel state) - at once for a task whose inputs are all
// all-to-all. After that unaligned snapshot, every channel is unblocked and the task persists, as input channel
// state, every data buffer it takes from a channel that has not delivered barrier n yet (persist_buffer); the
// buffers a priority barrier overtook the task copies itself when it takes the barrier (InputGate::
// copy_overtaken). The channel state is complete (kChannelStateComplete) once every open channel delivered
// barrier n. A checkpoint whose barriers all arrived without one overtaking anything and without the timeout is
// taken aligned.
//
// Ids, newer barriers, cancellation markers and finished channels follow AlignedBarrierHandler's rules; a
// newer barrier or a marker while the channel state is still being collected aborts that checkpoint too.
// Pure: it returns actions for the task to apply. Task thread only.
#pragma once

#include <climits>
#include <cstdint>
#include <vector>

#include "runtime/checkpointing/checkpoint_barrier_handler.h"
#include "runtime/checkpointing/unaligned_checkpoint_config.h"
#include "sluice/core/ids.h"

namespace sluice::runtime {

class UnalignedBarrierHandler final : public CheckpointBarrierHandler {
 public:
  // `aligned_channel[c]`: input channel c belongs to a forward or broadcast edge (always aligned). `config` says
  // when a barrier's checkpoint is unaligned (the overload below that takes ids is told instead).
  explicit UnalignedBarrierHandler(std::vector<bool> aligned_channel, UnalignedCheckpointConfig config = {});

  // The checkpoint is unaligned when `config` says so at `arrival.now_ms`, or when the barrier overtook buffers;
  // those are to be copied as input channel state (a kPersistOvertaken action) unless the barrier is dropped.
  std::vector<BarrierAction> on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                        const BarrierArrival& arrival) override;
  // `unaligned_now`: the checkpoint is unaligned at this moment (the configuration says so for its barrier's
  // timestamp); `overtaken_buffers` > 0 makes it unaligned too (a priority barrier that overtook them).
  std::vector<BarrierAction> on_barrier(int32_t channel, CheckpointId id, bool unaligned_now, int32_t overtaken_buffers) {
    return on_barrier(channel, CheckpointBarrier{id, 0, {}}, 0, unaligned_now, overtaken_buffers);
  }
  // The alignment timeout of the checkpoint being aligned expired: switch it to unaligned.
  std::vector<BarrierAction> on_alignment_timeout() override;
  std::vector<BarrierAction> on_cancellation_marker(CheckpointId id) override;
  std::vector<BarrierAction> on_channel_finished(int32_t channel) override;

  bool barriers_overtake_data() const override { return true; }
  // While aligning a checkpoint that may turn unaligned by its timeout (`config`): when it does.
  int64_t alignment_timeout_at_ms() const override {
    return phase_ == Phase::kAligning && !unaligned_ ? timeout_at_ms_ : INT64_MAX;
  }
  // While collecting channel state: whether a data buffer taken from `channel` belongs to it (the channel has
  // not delivered the barrier yet).
  bool persist_buffer(int32_t channel) const override {
    return phase_ == Phase::kCollecting && !received_[static_cast<size_t>(channel)];
  }

  bool is_aligning() const { return phase_ == Phase::kAligning; }
  bool is_collecting() const { return phase_ == Phase::kCollecting; }
  bool is_unaligned() const { return unaligned_; }
  CheckpointId current_checkpoint() const { return current_; }
  CheckpointId last_handled() const { return last_handled_; }

 private:
  enum class Phase { kIdle, kAligning, kCollecting };
  std::vector<BarrierAction> on_barrier(int32_t channel, const CheckpointBarrier& barrier, int64_t now_ns,
                                        bool unaligned_now, int32_t overtaken_buffers);
  std::vector<BarrierAction> abort_current();
  std::vector<BarrierAction> maybe_trigger();
  bool collecting_done() const;
  void reset();

  std::vector<bool> aligned_;
  UnalignedCheckpointConfig config_;
  int32_t num_channels_;
  std::vector<bool> received_;
  std::vector<bool> finished_;
  int32_t num_received_ = 0;
  int32_t num_finished_ = 0;
  Phase phase_ = Phase::kIdle;
  bool unaligned_ = false;
  CheckpointId current_{0};
  CheckpointId last_handled_{0};
  CheckpointBarrier barrier_;     // the first barrier of `current_`
  int64_t first_barrier_ns_ = 0;  // when it arrived
  int64_t timeout_at_ms_ = INT64_MAX;  // when `current_` turns unaligned while aligning
};

}  // namespace sluice::runtime
