#include "cluster/attempt_network.h"

#include "runtime/network/result_partition.h"

namespace sluice::cluster {

AttemptNetwork build_attempt_network(const graph::JobGraph& job, const runtime::NetworkConfig& network,
                                     const std::shared_ptr<Clock>& clock) {
  AttemptNetwork n;
  n.notifiers.resize(job.vertices.size());
  n.input_channels.resize(job.vertices.size());
  n.outputs.resize(job.vertices.size());
  for (const auto& v : job.vertices) {
    const auto vi = static_cast<size_t>(v.id);
    for (int32_t i = 0; i < v.parallelism; ++i) n.notifiers[vi].push_back(std::make_shared<runtime::TaskNotifier>());
    n.input_channels[vi].resize(static_cast<size_t>(v.parallelism));
    n.outputs[vi].resize(static_cast<size_t>(v.parallelism));
  }
  for (const auto& e : job.edges) {
    const auto& src = job.vertices[static_cast<size_t>(e.source_vertex)];
    const auto& dst = job.vertices[static_cast<size_t>(e.target_vertex)];
    for (int32_t i = 0; i < src.parallelism; ++i) {
      const bool forward = e.partitioning == Partitioning::kForward;
      const int32_t subpartitions = forward ? 1 : dst.parallelism;
      auto partition = std::make_shared<runtime::ResultPartition>(
          subpartitions, network, n.notifiers[static_cast<size_t>(src.id)][static_cast<size_t>(i)].get(), clock);
      for (int32_t j = 0; j < subpartitions; ++j) {
        const int32_t consumer = forward ? i : j;
        n.input_channels[static_cast<size_t>(dst.id)][static_cast<size_t>(consumer)].push_back(partition->channel(j));
      }
      n.outputs[static_cast<size_t>(src.id)][static_cast<size_t>(i)].push_back(runtime::TaskOutput{&e, partition});
    }
  }
  return n;
}

}  // namespace sluice::cluster
