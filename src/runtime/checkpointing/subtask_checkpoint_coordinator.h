// SubtaskCheckpointCoordinator: one subtask's part of a checkpoint (Flink's SubtaskCheckpointCoordinatorImpl).
//
// At the barrier, on the task thread (the synchronous part): every operator of the chain snapshots (keyed
// state fixes its version; operator state is serialized), then the barrier goes downstream. Then, on the
// AsyncSnapshotExecutor (the asynchronous part): the keyed state is written out per key group, every piece
// is persisted through the checkpoint's CheckpointStreamFactory, and the subtask acknowledges with the
// resulting state handles - or declines with the reason, in which case whatever it wrote is left to the
// coordinator, which discards the aborted checkpoint's folder.
// Thread-safety: checkpoint_state() on the task thread; the responder is called from the async threads.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/channel_state.h"
#include "checkpoint/checkpoint_storage.h"
#include "runtime/checkpointing/async_snapshot_executor.h"
#include "runtime/checkpointing/checkpoint_barrier.h"
#include "sluice/core/clock.h"
#include "sluice/operators/stream_operator.h"

namespace sluice::runtime {

struct SubtaskSnapshotStats {
  int64_t sync_duration_ms = 0;
  int64_t async_duration_ms = 0;
  int64_t alignment_duration_ms = 0;
  int64_t state_size_bytes = 0;  // full size of the state the handles refer to
  int64_t start_delay_ms = 0;  // trigger (the barrier's timestamp) to the first barrier at this subtask
  int64_t checkpointed_size_bytes = 0;  // what this checkpoint wrote (incremental: new shared files + private files)
  int64_t persisted_data_bytes = 0;  // in-flight data persisted as channel state (unaligned checkpoints)
  bool unaligned = false;            // this subtask took the checkpoint unaligned
};

// The asynchronous part of an incremental keyed snapshot: uploads the SST files no completed checkpoint
// uploaded to shared/ and the private files to chk-<n>/, builds the handle (reused SSTs as placeholders), and
// tells the snapshot what each SST's shared file is. `owner` names the operator subtask in errors; shared
// files are named "<operator_id>-<subtask>-<16 hex>.sst".
Result<checkpoint::IncrementalKeyedStateHandle> upload_incremental_snapshot(
    IncrementalKeyedSnapshot& snapshot, checkpoint::CheckpointStreamFactory& factory, const std::string& owner,
    const std::string& operator_id, int32_t subtask);

// Where a subtask reports its part of a checkpoint (the cluster forwards to the CheckpointCoordinator). The same
// argument order and id types as CheckpointCoordinator::acknowledge / decline: a swapped argument does not compile.
class CheckpointResponder {
 public:
  virtual ~CheckpointResponder() = default;
  virtual void acknowledge(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask,
                           std::map<std::string, checkpoint::OperatorSubtaskState> state, SubtaskSnapshotStats stats) = 0;
  virtual void decline(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask, const Status& reason) = 0;
};

struct ChainOperator {
  std::string operator_id;    // matches state across runs (uid, or derived)
  std::string operator_name;  // for messages
  StreamOperator* op = nullptr;
};

class SubtaskCheckpointCoordinator {
 public:
  SubtaskCheckpointCoordinator(int32_t vertex, int32_t subtask, CheckpointResponder* responder,
                               std::shared_ptr<checkpoint::CheckpointStorage> storage, AsyncSnapshotExecutor* executor,
                               const Clock* clock)
      : vertex_(vertex), subtask_(subtask), responder_(responder), storage_(std::move(storage)),
        executor_(executor), clock_(clock) {}

  // The synchronous part, then emit_barrier(), then the asynchronous part is submitted (it opens the
  // checkpoint storage, writes, and acknowledges or declines). Returns false if the synchronous part failed
  // (the checkpoint was declined; the caller sends a cancellation marker instead of the barrier). An exception
  // from a user function's snapshot propagates (it fails the task, as in Flink); so does one from
  // emit_barrier() (fault injection), and then no asynchronous part is submitted.
  //
  // `unaligned`: the asynchronous part writes the operators' state at once but acknowledges only once
  // complete_channel_state(id, ...) handed over the checkpoint's channel state, which it writes as one more
  // handle on the chain's head operator (its size is the stats' persisted_data_bytes). abort_channel_state(id)
  // instead makes it acknowledge nothing (the task declines the checkpoint).
  bool checkpoint_state(const CheckpointBarrier& barrier, const std::vector<ChainOperator>& chain,
                        const std::function<void()>& emit_barrier, int64_t alignment_duration_ms,
                        bool unaligned = false);

  // Task thread. No-ops for a checkpoint that is not waiting for its channel state.
  void complete_channel_state(CheckpointId id, checkpoint::SubtaskChannelState state);
  void abort_channel_state(CheckpointId id);
  // Checkpoints whose acknowledgement waits for complete_channel_state.
  size_t num_waiting_for_channel_state() const { return waiting_.size(); }
  // Task thread: the start delay (trigger to the first barrier here, ms) of the last checkpoint_state call.
  int64_t last_start_delay_ms() const { return last_start_delay_ms_; }

 private:
  int32_t vertex_;
  int32_t subtask_;
  int64_t last_start_delay_ms_ = 0;
  CheckpointResponder* responder_;
  std::shared_ptr<checkpoint::CheckpointStorage> storage_;
  AsyncSnapshotExecutor* executor_;
  const Clock* clock_;
  struct PendingAck;  // joins the operators' part and the channel-state part of an unaligned checkpoint
  std::map<int64_t, std::shared_ptr<PendingAck>> waiting_;  // task thread
  // Bytes of keyed state the last asynchronous part wrote (the chain has at most one keyed operator).
  std::shared_ptr<std::atomic<uint64_t>> keyed_size_bytes_ = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace sluice::runtime
