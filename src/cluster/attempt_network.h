// The network of one deployment attempt: a TaskNotifier per subtask, a ResultPartition per (JobEdge, producing
// subtask) with one subpartition per consumer it feeds (every consumer on an all-to-all edge; on a pointwise forward
// or rescale edge only its own, graph/edge_topology.h), and per consuming subtask its input channels in JobEdge
// order, then producer order (the order channel state of unaligned checkpoints refers to).
// Rebuilt for every attempt: a failover starts with empty channels.
//
// In one process every channel is in memory. A TaskManager holding only some subtasks of an attempt builds the
// network of those: a channel between two of its subtasks stays in memory, one to or from a subtask of another
// TaskManager is a remote channel on the process's data plane (runtime/network/tcp), with the same contract, so
// tasks do not see the difference (docs/cluster.md "Data plane").
// Thread-safety: built by the control thread; the parts are then handed to the tasks.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/job_graph.h"
#include "runtime/network/network_config.h"
#include "runtime/network/tcp/remote_channel_id.h"
#include "runtime/stream_task.h"
#include "sluice/core/clock.h"
#include "sluice/core/status.h"

namespace sluice::runtime::tcp {
class DataConnectionManager;
}

namespace sluice::cluster {

// Where the subtasks of an attempt spread over several TaskManagers run, as one of them sees it.
struct NetworkPlacement {
  int32_t self = 0;  // this TaskManager's id on the data plane
  // [vertex][subtask]: the data-plane id of the TaskManager that runs it (-1: not in this deployment).
  std::vector<std::vector<int32_t>> task_manager_of;
  int32_t attempt_number = 0;
  // This TaskManager's end of the data plane, every peer of the placement declared (add_peer). Null for one
  // pipelined region deployed alone in this process, which no channel leaves. The data plane is the process's,
  // shared with other deployments: the channels are registered under `data_plane_owner` (the deployment id).
  runtime::tcp::DataConnectionManager* data_plane = nullptr;
  uint64_t data_plane_owner = 0;

  bool is_local(int32_t vertex, int32_t subtask) const {
    return task_manager_of[static_cast<size_t>(vertex)][static_cast<size_t>(subtask)] == self;
  }
  // The subtasks of this TaskManager a remote channel joins: its consumer and/or its producer.
  std::vector<std::pair<int32_t, int32_t>> local_ends(const graph::JobGraph& job,
                                                      const runtime::tcp::RemoteChannelId& channel) const;
};

struct AttemptNetwork {
  // Indexed [vertex][subtask]; empty for subtasks of other TaskManagers.
  std::vector<std::vector<std::shared_ptr<runtime::TaskNotifier>>> notifiers;
  std::vector<std::vector<std::vector<std::shared_ptr<runtime::Channel>>>> input_channels;
  std::vector<std::vector<std::vector<runtime::TaskOutput>>> outputs;  // one per outgoing JobEdge, job-graph order
};

// `job` must outlive the network (TaskOutput points at its edges). `placement`: null when every subtask runs in
// this process. Errors: those of registering a remote channel (an undeclared peer, a data plane shut down);
// kInternal for a channel leaving the placement's subtasks when it has no data plane.
[[nodiscard]] Result<AttemptNetwork> build_attempt_network(const graph::JobGraph& job,
                                                           const runtime::NetworkConfig& network,
                                                           const std::shared_ptr<Clock>& clock,
                                                           const NetworkPlacement* placement = nullptr);

// Checks that `placement` names a TaskManager for every subtask of `job` (InvalidArgument naming the vertex).
[[nodiscard]] Status check_placement(const graph::JobGraph& job, const NetworkPlacement& placement);

}  // namespace sluice::cluster
