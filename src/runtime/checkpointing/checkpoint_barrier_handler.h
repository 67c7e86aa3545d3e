// CheckpointBarrierHandler: what a task with input channels does with the checkpoint events it takes from its
// input gate (Flink's CheckpointBarrierHandler; docs/checkpoints.md). The task calls it without knowing which
// checkpointing mode it runs in; make_checkpoint_barrier_handler picks the implementation once from the task's
// settings:
//  - AlignedBarrierHandler (EXACTLY_ONCE): blocks a channel until barrier n arrived on all;
//  - UnalignedBarrierHandler (unaligned checkpoints, alignment timeout): snapshots on the first barrier and
//    collects input channel state, or aligns until the timeout;
//  - CheckpointBarrierTracker (AT_LEAST_ONCE): never blocks, snapshots when n arrived on every open channel.
// Unlike Flink's, the handlers do no I/O and never call back into the task: each call returns the BarrierActions
// the task applies, in order, to its gate, its snapshot and its outputs, so every decision is testable on its
// own. Barrier ids strictly increase; older barriers are dropped by every implementation.
// One instance per task; task thread only.
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/checkpointing/checkpoint_barrier.h"
#include "runtime/checkpointing/unaligned_checkpoint_config.h"
#include "sluice/core/ids.h"

namespace sluice::runtime {

struct BarrierAction {
  enum class Kind {
    kNone,             // nothing to do (e.g. an old barrier was dropped)
    kBlockChannel,     // block `channel` (it delivered the barrier being aligned)
    kTriggerCheckpoint,  // all barriers of `checkpoint` arrived: snapshot, forward the barrier, unblock all
    kAbortCheckpoint,  // alignment of `checkpoint` ends without a snapshot: unblock all, forward a cancel marker
    // Unaligned checkpoints (UnalignedBarrierHandler): every barrier of `checkpoint` arrived after an unaligned
    // snapshot and every buffer it overtook was persisted: the input channel state is complete.
    kChannelStateComplete,
    // Unaligned checkpoints: the barrier of `checkpoint` on `channel` overtook `buffers` data buffers that are
    // still queued right behind it: copy them as that channel's input channel state (they are processed as
    // usual later). Comes before the trigger or completion it belongs to.
    kPersistOvertaken,
  };
  Kind kind = Kind::kNone;
  int32_t channel = -1;
  CheckpointId checkpoint{0};
  bool unaligned = false;  // kTriggerCheckpoint: snapshot unaligned (input channel state follows)
  int32_t buffers = 0;     // kPersistOvertaken
  // kTriggerCheckpoint: the barrier to snapshot for, as its first one arrived (its id is `checkpoint`; only the
  // id is known when the handler was called with ids alone), and when that was (monotonic ns): the alignment
  // time runs from it.
  CheckpointBarrier barrier{};
  int64_t first_barrier_ns = 0;
};

// What the task knows about a barrier when it takes it from the gate.
struct BarrierArrival {
  int64_t now_ns = 0;  // monotonic: when alignment starts
  int64_t now_ms = 0;  // wall clock: compared with the barrier's timestamp (the alignment timeout)
  int32_t overtaken_buffers = 0;  // a priority barrier: data buffers it overtook in the channel
};

class CheckpointBarrierHandler {
 public:
  virtual ~CheckpointBarrierHandler() = default;

  virtual std::vector<BarrierAction> on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                                const BarrierArrival& arrival) = 0;
  virtual std::vector<BarrierAction> on_cancellation_marker(CheckpointId id) = 0;
  // `channel` delivered end of partition: it is no longer waited for.
  virtual std::vector<BarrierAction> on_channel_finished(int32_t channel) = 0;

  // Barriers may overtake data (unaligned checkpoints): the task takes priority events from its gate even when
  // it reads no data, promotes queued barriers whose alignment timeout passed, and watches alignment_timeout_at_ms.
  virtual bool barriers_overtake_data() const { return false; }
  // Wall-clock time at which the checkpoint being aligned turns unaligned; INT64_MAX: none pending.
  virtual int64_t alignment_timeout_at_ms() const { return INT64_MAX; }
  // alignment_timeout_at_ms has passed.
  virtual std::vector<BarrierAction> on_alignment_timeout() { return {}; }
  // A data buffer taken from `channel` now is input channel state of the checkpoint being collected.
  virtual bool persist_buffer(int32_t /*channel*/) const { return false; }
  // The pending checkpoint whose barrier `channel` already delivered while it is not yet taken (what the channel
  // delivers now is processed before that snapshot); 0 when none. Only AT_LEAST_ONCE has such checkpoints.
  virtual CheckpointId pending_barrier_of(int32_t /*channel*/) const { return CheckpointId(0); }
};

// The settings that choose a task's barrier handling.
struct BarrierHandlingConfig {
  bool at_least_once = false;           // execution.checkpointing.mode AT_LEAST_ONCE
  UnalignedCheckpointConfig unaligned;  // execution.checkpointing.unaligned.*
};

// AT_LEAST_ONCE: CheckpointBarrierTracker (whatever `unaligned` says, as in Flink); else unaligned enabled:
// UnalignedBarrierHandler; else AlignedBarrierHandler. `aligned_channel[c]`: input channel c belongs to a forward or
// broadcast edge (it stays aligned); its size is the number of input channels.
std::unique_ptr<CheckpointBarrierHandler> make_checkpoint_barrier_handler(const BarrierHandlingConfig& config,
                                                                          std::vector<bool> aligned_channel);

}  // namespace sluice::runtime
