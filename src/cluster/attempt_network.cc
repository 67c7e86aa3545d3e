#include "cluster/attempt_network.h"

#include <string>

#include "graph/edge_topology.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tcp/data_connection_manager.h"

namespace sluice::cluster {

std::vector<std::pair<int32_t, int32_t>> NetworkPlacement::local_ends(const graph::JobGraph& job,
                                                                      const runtime::tcp::RemoteChannelId& channel) const {
  std::vector<std::pair<int32_t, int32_t>> ends;
  if (channel.edge < 0 || static_cast<size_t>(channel.edge) >= job.edges.size()) return ends;
  const graph::JobEdge& e = job.edges[static_cast<size_t>(channel.edge)];
  auto add = [&](int32_t vertex, int32_t subtask) {
    const auto& v = job.vertices[static_cast<size_t>(vertex)];
    if (subtask >= 0 && subtask < v.parallelism && is_local(vertex, subtask)) ends.emplace_back(vertex, subtask);
  };
  add(e.target_vertex, channel.consumer_subtask);
  add(e.source_vertex, channel.producer_subtask);
  return ends;
}

Status check_placement(const graph::JobGraph& job, const NetworkPlacement& placement) {
  if (placement.task_manager_of.size() != job.vertices.size()) {
    return Status::invalid_argument("the placement names " + std::to_string(placement.task_manager_of.size()) +
                                    " vertices, the JobGraph has " + std::to_string(job.vertices.size()));
  }
  for (const auto& v : job.vertices) {
    const auto& subtasks = placement.task_manager_of[static_cast<size_t>(v.id)];
    if (static_cast<int32_t>(subtasks.size()) != v.parallelism) {
      return Status::invalid_argument("the placement names " + std::to_string(subtasks.size()) +
                                      " subtasks of vertex " + std::to_string(v.id) + " '" + v.name + "', which has " +
                                      std::to_string(v.parallelism));
    }
  }
  return Status::ok();
}

Result<AttemptNetwork> build_attempt_network(const graph::JobGraph& job, const runtime::NetworkConfig& network,
                                             const std::shared_ptr<Clock>& clock, const NetworkPlacement* placement) {
  auto local = [&](int32_t vertex, int32_t subtask) { return !placement || placement->is_local(vertex, subtask); };
  AttemptNetwork n;
  n.notifiers.resize(job.vertices.size());
  n.input_channels.resize(job.vertices.size());
  n.outputs.resize(job.vertices.size());
  for (const auto& v : job.vertices) {
    const auto vi = static_cast<size_t>(v.id);
    n.notifiers[vi].resize(static_cast<size_t>(v.parallelism));
    for (int32_t i = 0; i < v.parallelism; ++i) {
      if (local(v.id, i)) n.notifiers[vi][static_cast<size_t>(i)] = std::make_shared<runtime::TaskNotifier>();
    }
    n.input_channels[vi].resize(static_cast<size_t>(v.parallelism));
    n.outputs[vi].resize(static_cast<size_t>(v.parallelism));
  }
  for (size_t ei = 0; ei < job.edges.size(); ++ei) {
    const graph::JobEdge& e = job.edges[ei];
    const auto& src = job.vertices[static_cast<size_t>(e.source_vertex)];
    const auto& dst = job.vertices[static_cast<size_t>(e.target_vertex)];
    // Producers in ascending order, so each consumer's channels of this edge come in producer order.
    for (int32_t i = 0; i < src.parallelism; ++i) {
      const graph::SubtaskRange consumers = graph::consumers_of_producer(job, e, i);
      std::shared_ptr<runtime::ResultPartition> partition;
      if (local(src.id, i)) {
        partition = std::make_shared<runtime::ResultPartition>(
            consumers.size(), network, n.notifiers[static_cast<size_t>(src.id)][static_cast<size_t>(i)].get(), clock);
        n.outputs[static_cast<size_t>(src.id)][static_cast<size_t>(i)].push_back(runtime::TaskOutput{&e, partition});
      }
      for (int32_t j = 0; j < consumers.size(); ++j) {
        const int32_t consumer = consumers.begin + j;
        const bool consumer_local = local(dst.id, consumer);
        if (!partition && !consumer_local) continue;
        auto& inputs = n.input_channels[static_cast<size_t>(dst.id)][static_cast<size_t>(consumer)];
        if (partition && consumer_local) {
          inputs.push_back(partition->channel(j));
          continue;
        }
        if (placement->data_plane == nullptr) {
          // A pipelined region deployed alone: no edge leaves it (graph/pipelined_regions.h).
          return Status::internal("edge " + std::to_string(ei) + " joins subtask " + std::to_string(i) + " of '" +
                                  src.name + "' and subtask " + std::to_string(consumer) + " of '" + dst.name +
                                  "', of which only one is deployed here, and the deployment has no data plane");
        }
        const runtime::tcp::RemoteChannelId id{static_cast<int32_t>(ei), i, consumer, placement->attempt_number};
        if (partition) {
          SLUICE_RETURN_IF_ERROR(placement->data_plane->register_output(
              id, placement->task_manager_of[static_cast<size_t>(dst.id)][static_cast<size_t>(consumer)],
              partition->channel(j), placement->data_plane_owner));
        } else {
          SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<runtime::Channel> channel,
                                  placement->data_plane->register_input(
                                      id, placement->task_manager_of[static_cast<size_t>(src.id)][static_cast<size_t>(i)],
                                      network, placement->data_plane_owner));
          inputs.push_back(std::move(channel));
        }
      }
    }
  }
  return n;
}

}  // namespace sluice::cluster
