// CheckpointBarrierTracker: the barrier decisions of AT_LEAST_ONCE checkpointing for a task with several input
// channels (Flink's CheckpointBarrierTracker: at-least-once needs no alignment; docs/checkpoints.md).
//
// It never blocks a channel: records that arrive on a channel after its barrier n are processed at once, before
// checkpoint n is taken, so after a restore from n they are replayed and may be seen twice (duplicates, never
// losses). The task snapshots when barrier n has arrived on every channel that is still open. Rules:
//  - several checkpoints may be pending at once (barriers of n+1 can arrive on one channel while n is still
//    missing on another); at most kMaxPending are tracked, the oldest is dropped (aborted) beyond that;
//  - when checkpoint n triggers, every older pending checkpoint is aborted (its barriers can no longer all
//    arrive in order: the channel that delivered n already passed them), and later barriers of ids <= n are
//    dropped;
//  - a cancellation marker for n aborts n and every older pending checkpoint; if n was not pending yet it is
//    remembered, so its late barriers are dropped;
//  - a finished channel (end of partition) is no longer waited for; pending checkpoints that then have all
//    their barriers trigger (oldest first, so the newest triggers and the older ones abort).
// With one input channel every barrier triggers at once: the same as aligned mode.
// Pure: it only returns what to do (BarrierAction, never kBlockChannel). One instance per task; task thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "runtime/checkpointing/checkpoint_barrier.h"
#include "runtime/checkpointing/checkpoint_barrier_handler.h"
#include "sluice/core/ids.h"

namespace sluice::runtime {

class CheckpointBarrierTracker final : public CheckpointBarrierHandler {
 public:
  static constexpr size_t kMaxPending = 50;  // Flink's MAX_CHECKPOINTS_TO_TRACK

  explicit CheckpointBarrierTracker(int32_t num_channels);

  // `now_ns`: monotonic time, recorded as the first barrier's arrival of a new pending checkpoint (the
  // alignment duration of AT_LEAST_ONCE is first barrier to trigger, as in Flink).
  std::vector<BarrierAction> on_barrier(int32_t channel, const CheckpointBarrier& barrier, int64_t now_ns);
  std::vector<BarrierAction> on_barrier(int32_t channel, CheckpointId id, int64_t now_ns) {
    return on_barrier(channel, CheckpointBarrier{id, 0, {}}, now_ns);
  }
  std::vector<BarrierAction> on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                        const BarrierArrival& arrival) override {
    return on_barrier(channel, barrier, arrival.now_ns);
  }
  std::vector<BarrierAction> on_cancellation_marker(CheckpointId id) override;
  std::vector<BarrierAction> on_channel_finished(int32_t channel) override;

  // True when `channel` already delivered the barrier of a pending (not yet triggered) checkpoint: what it
  // delivers now belongs after that barrier and is processed before the checkpoint is taken.
  bool channel_past_pending_barrier(int32_t channel) const;
  // The oldest pending checkpoint whose barrier `channel` delivered; 0 when none.
  CheckpointId pending_barrier_of(int32_t channel) const override;
  // The first-barrier time (now_ns of on_barrier) of the checkpoint last returned in a kTriggerCheckpoint.
  int64_t last_trigger_first_barrier_ns() const { return last_trigger_first_barrier_ns_; }
  // The barrier (timestamp, snapshot type) of the checkpoint last returned in a kTriggerCheckpoint.
  const CheckpointBarrier& last_triggered_barrier() const { return last_triggered_barrier_; }
  size_t num_pending() const { return pending_.size(); }
  CheckpointId last_handled() const { return last_handled_; }

 private:
  struct Pending {
    CheckpointId id{0};
    CheckpointBarrier barrier;   // as first received
    std::vector<bool> received;  // per channel
    int64_t first_barrier_ns = 0;
    bool aborted = false;  // cancelled before it could complete: its barriers are only absorbed
  };
  bool complete(const Pending& p) const;
  // Triggers the newest complete pending checkpoint, aborting every older one.
  void trigger_completed(std::vector<BarrierAction>& actions);

  int32_t num_channels_;
  std::vector<bool> finished_;
  std::deque<Pending> pending_;   // ascending ids
  CheckpointId last_handled_{0};  // highest id triggered or aborted (and no longer pending)
  int64_t last_trigger_first_barrier_ns_ = 0;
  CheckpointBarrier last_triggered_barrier_;
};

}  // namespace sluice::runtime
