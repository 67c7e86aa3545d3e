// The in-process network of one deployment attempt: a TaskNotifier per subtask, a ResultPartition per (JobEdge,
// producing subtask) with one subpartition per consumer (one for a forward edge), and per consuming subtask its
// input channels in JobEdge order, then producer order (the order channel state of unaligned checkpoints refers
// to). Rebuilt for every attempt: a failover starts with empty channels.
// Thread-safety: built by the control thread; the parts are then handed to the tasks.
#pragma once

#include <memory>
#include <vector>

#include "graph/job_graph.h"
#include "runtime/network/network_config.h"
#include "runtime/stream_task.h"
#include "sluice/core/clock.h"

namespace sluice::cluster {

struct AttemptNetwork {
  // Indexed [vertex][subtask].
  std::vector<std::vector<std::shared_ptr<runtime::TaskNotifier>>> notifiers;
  std::vector<std::vector<std::vector<std::shared_ptr<runtime::Channel>>>> input_channels;
  std::vector<std::vector<std::vector<runtime::TaskOutput>>> outputs;  // one per outgoing JobEdge, job-graph order
};

// `job` must outlive the network (TaskOutput points at its edges).
AttemptNetwork build_attempt_network(const graph::JobGraph& job, const runtime::NetworkConfig& network,
                                     const std::shared_ptr<Clock>& clock);

}  // namespace sluice::cluster
