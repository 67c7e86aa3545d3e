// AttemptRestore: the checkpoint (or savepoint) an attempt restores from, as the JobMaster hands it to a deployer,
// and AttemptRestoreAssignment, which turns it into each subtask's restored state where the subtask runs: its key
// groups and operator state (state_assignment.h) and the unaligned checkpoint's in-flight data it processes first
// (channel_state_assignment.h). The state itself is read by the process that runs the subtask, from the checkpoint
// storage every process reaches, never shipped through the JobMaster (as Flink's TaskManagers read the state
// handles of their JobManagerTaskRestore).
// Thread-safety: an AttemptRestoreAssignment is used by one thread (the deployer's).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "checkpoint/channel_state.h"
#include "checkpoint/checkpoint_storage.h"
#include "cluster/channel_state_assignment.h"
#include "cluster/job_checkpoints.h"
#include "cluster/key_group_rehash.h"
#include "graph/job_graph.h"
#include "runtime/execution_attempt_id.h"
#include "sluice/api/stream_graph.h"
#include "sluice/operators/stream_operator.h"

namespace sluice::cluster {

struct AttemptRestore {
  RestorePoint point;
  // --rehash-key-groups of the run's restore (execution.state-recovery.rehash-key-groups); kRefuse for failovers
  // from the job's own checkpoints, which always have the job's max parallelism.
  KeyGroupRehash rehash = KeyGroupRehash::kRefuse;
};

struct SubtaskRestoreState {
  std::map<std::string, OperatorRestoreState> operators;  // by operator id; operators without state are absent
  std::optional<checkpoint::SubtaskChannelState> channel_state;
};

class AttemptRestoreAssignment {
 public:
  // Reads the checkpoint's channel state (each file once) for reassignment. `storage`, `stream_graph` and
  // `job_graph` must outlive the assignment. Errors: those of ChannelStateAssignment::build (a changed topology,
  // a missing or damaged file).
  static Result<AttemptRestoreAssignment> build(const AttemptRestore& restore, checkpoint::CheckpointStorage& storage,
                                                const StreamGraph& stream_graph, const graph::JobGraph& job_graph);

  // The state subtask `id` (key groups `range`) restores; call once per subtask. Errors: those of
  // assign_subtask_state (missing or damaged state files, a max parallelism that does not fit).
  Result<SubtaskRestoreState> take(const runtime::ExecutionAttemptId& id, const KeyGroupRange& range);

 private:
  AttemptRestoreAssignment(const AttemptRestore& restore, checkpoint::CheckpointStorage& storage,
                           const StreamGraph& stream_graph, const graph::JobGraph& job_graph,
                           ChannelStateAssignment channel_state)
      : restore_(&restore), storage_(&storage), sg_(&stream_graph), jg_(&job_graph),
        channel_state_(std::move(channel_state)) {}

  const AttemptRestore* restore_;
  checkpoint::CheckpointStorage* storage_;
  const StreamGraph* sg_;
  const graph::JobGraph* jg_;
  ChannelStateAssignment channel_state_;
};

}  // namespace sluice::cluster
