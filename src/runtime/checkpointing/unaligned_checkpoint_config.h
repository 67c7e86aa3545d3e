// UnalignedCheckpointConfig: whether a checkpoint's barriers are aligned or unaligned at a given moment
// (execution.checkpointing.unaligned.enabled and execution.checkpointing.aligned-checkpoint-timeout; Flink's
// CheckpointOptions alignment types and "aligned checkpoint timeout").
//
// Unaligned checkpoints off, or a savepoint: always aligned. Timeout 0: unaligned from the trigger on. Timeout
// t > 0: aligned until t has passed since the trigger (the barrier's timestamp, the coordinator's wall clock),
// then unaligned. Only the exchanges whose in-flight data the channel-state restore can place carry unaligned
// barriers (holds_channel_state below); forward and broadcast edges stay aligned, see stream_task.h.
// Values; thread-safety: none needed.
#pragma once

#include <chrono>
#include <cstdint>

#include "runtime/checkpointing/checkpoint_barrier.h"
#include "sluice/api/stream_graph.h"

namespace sluice::runtime {

struct UnalignedCheckpointConfig {
  bool enabled = false;
  std::chrono::milliseconds aligned_checkpoint_timeout{0};

  // The checkpoint of `barrier` may go unaligned at some point (enabled, and a checkpoint, not a savepoint).
  bool may_be_unaligned(const CheckpointBarrier& barrier) const {
    return enabled && barrier.type == checkpoint::SnapshotType::kCheckpoint;
  }
  // The checkpoint of `barrier` is unaligned at wall-clock `now_ms`.
  bool unaligned_at(const CheckpointBarrier& barrier, int64_t now_ms) const {
    if (!may_be_unaligned(barrier)) return false;
    const int64_t timeout_ms = aligned_checkpoint_timeout.count();
    return timeout_ms == 0 || now_ms - barrier.timestamp_ms > timeout_ms;
  }
  // When a barrier sent aligned may be promoted to overtake the data ahead of it (the timeout expires), or 0:
  // never (unaligned off, a savepoint, or already unaligned from the start).
  int64_t promote_at_ms(const CheckpointBarrier& barrier) const {
    const int64_t timeout_ms = aligned_checkpoint_timeout.count();
    if (!may_be_unaligned(barrier) || timeout_ms == 0) return 0;
    return barrier.timestamp_ms + timeout_ms + 1;
  }
};

// Edges whose channel state an unaligned checkpoint may hold: those where each record goes to one consumer chosen by
// a partitioner - hash, rebalance, shuffle, global, custom, and the pointwise rescale. At another parallelism the
// restore places each record where the partitioner allows (cluster/channel_state_assignment.h). Forward and
// broadcast edges stay aligned, their barriers in order behind the data.
inline bool holds_channel_state(Partitioning p) {
  switch (p) {
    case Partitioning::kHash:
    case Partitioning::kRebalance:
    case Partitioning::kRescale:
    case Partitioning::kShuffle:
    case Partitioning::kGlobal:
    case Partitioning::kCustom:
      return true;
    case Partitioning::kDefault:
    case Partitioning::kForward:
    case Partitioning::kBroadcast:
      return false;
  }
  return false;
}

}  // namespace sluice::runtime
