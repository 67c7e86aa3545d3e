#include "cluster/injectable_tasks.h"

namespace sluice::cluster {

std::vector<runtime::FaultInjector::Task> injectable_tasks(const StreamGraph& stream_graph,
                                                           const graph::JobGraph& job_graph, bool checkpointing) {
  using runtime::FailurePoint;
  using runtime::failure_point_bit;
  std::vector<runtime::FaultInjector::Task> tasks;
  for (const auto& ev : graph::build_execution_graph(job_graph).subtasks) {
    const auto& v = job_graph.vertices[static_cast<size_t>(ev.vertex)];
    uint32_t points = failure_point_bit(FailurePoint::kTask);
    bool keyed = false, sink = false;
    for (int32_t node_id : v.nodes) {
      keyed = keyed || stream_graph.node(node_id).keyed;
      sink = sink || stream_graph.node(node_id).is_sink;
    }
    if (v.is_source) points |= failure_point_bit(FailurePoint::kSource);
    if (keyed) points |= failure_point_bit(FailurePoint::kKeyedOperator);
    if (checkpointing) {
      points |= failure_point_bit(FailurePoint::kBetweenSyncAndAsyncSnapshot) | failure_point_bit(FailurePoint::kRestore);
      if (sink) {
        points |= failure_point_bit(FailurePoint::kSink) | failure_point_bit(FailurePoint::kBetweenCompletionAndCommit) |
                  failure_point_bit(FailurePoint::kAfterCommit);
      }
    }
    tasks.push_back({ev.vertex, ev.subtask_index, points});
  }
  return tasks;
}

}  // namespace sluice::cluster
