#include "cluster/attempt_restore.h"

#include <vector>

#include "cluster/state_assignment.h"

namespace sluice::cluster {

Result<AttemptRestoreAssignment> AttemptRestoreAssignment::build(const AttemptRestore& restore,
                                                                 checkpoint::CheckpointStorage& storage,
                                                                 const StreamGraph& stream_graph,
                                                                 const graph::JobGraph& job_graph) {
  SLUICE_ASSIGN_OR_RETURN(ChannelStateAssignment channel_state,
                          ChannelStateAssignment::build(restore.point.metadata, restore.point.location, storage,
                                                        stream_graph, job_graph));
  return AttemptRestoreAssignment(restore, storage, stream_graph, job_graph, std::move(channel_state));
}

Result<SubtaskRestoreState> AttemptRestoreAssignment::take(const runtime::ExecutionAttemptId& id,
                                                           const KeyGroupRange& range) {
  const graph::JobVertex& v = jg_->vertices[static_cast<size_t>(id.vertex.value())];
  std::vector<OperatorToRestore> chain;
  for (int32_t node_id : v.nodes) chain.push_back({graph::operator_id(sg_->node(node_id)), v.parallelism});
  SubtaskRestoreState out;
  SLUICE_ASSIGN_OR_RETURN(out.operators,
                          assign_subtask_state(restore_->point.metadata, restore_->point.location, *storage_, chain,
                                               id.subtask.value(), range, jg_->max_parallelism,
                                               restore_->point.owned ? SharedFileReuse::kReuse
                                                                     : SharedFileReuse::kNoReuse,
                                               restore_->rehash));
  out.channel_state = channel_state_.take(v.id, id.subtask.value());
  return out;
}

}  // namespace sluice::cluster
