#include "graph/edge_topology.h"

namespace sluice::graph {
namespace {

// The range [k*big/small, (k+1)*big/small) of the side with more subtasks that subtask k of the smaller side
// connects to (integer division, as Flink's connectPointwise).
SubtaskRange spread(int32_t k, int32_t small, int32_t big) {
  const int64_t b = static_cast<int64_t>(k) * big / small;
  const int64_t e = (static_cast<int64_t>(k) + 1) * big / small;
  return SubtaskRange{static_cast<int32_t>(b), static_cast<int32_t>(e)};
}

// The one subtask of the smaller side that subtask k of the side with more subtasks connects to: the largest i
// with i*big/small <= k, that is ceil((k+1)*small/big) - 1.
SubtaskRange gather(int32_t k, int32_t small, int32_t big) {
  const int64_t i = ((static_cast<int64_t>(k) + 1) * small + big - 1) / big - 1;
  return SubtaskRange{static_cast<int32_t>(i), static_cast<int32_t>(i) + 1};
}

}  // namespace

DistributionPattern distribution_pattern(Partitioning p) {
  switch (p) {
    case Partitioning::kForward:
    case Partitioning::kRescale:
      return DistributionPattern::kPointwise;
    case Partitioning::kDefault:
    case Partitioning::kRebalance:
    case Partitioning::kBroadcast:
    case Partitioning::kHash:
    case Partitioning::kShuffle:
    case Partitioning::kGlobal:
    case Partitioning::kCustom:
      return DistributionPattern::kAllToAll;
  }
  return DistributionPattern::kAllToAll;
}

bool is_pointwise(Partitioning p) { return distribution_pattern(p) == DistributionPattern::kPointwise; }

SubtaskRange consumers_of_producer(Partitioning p, int32_t producer, int32_t producers, int32_t consumers) {
  if (!is_pointwise(p)) return SubtaskRange{0, consumers};
  return producers <= consumers ? spread(producer, producers, consumers) : gather(producer, consumers, producers);
}

SubtaskRange producers_of_consumer(Partitioning p, int32_t consumer, int32_t producers, int32_t consumers) {
  if (!is_pointwise(p)) return SubtaskRange{0, producers};
  return producers >= consumers ? spread(consumer, consumers, producers) : gather(consumer, producers, consumers);
}

SubtaskRange consumers_of_producer(const JobGraph& job, const JobEdge& edge, int32_t producer) {
  return consumers_of_producer(edge.partitioning, producer,
                               job.vertices[static_cast<size_t>(edge.source_vertex)].parallelism,
                               job.vertices[static_cast<size_t>(edge.target_vertex)].parallelism);
}

SubtaskRange producers_of_consumer(const JobGraph& job, const JobEdge& edge, int32_t consumer) {
  return producers_of_consumer(edge.partitioning, consumer,
                               job.vertices[static_cast<size_t>(edge.source_vertex)].parallelism,
                               job.vertices[static_cast<size_t>(edge.target_vertex)].parallelism);
}

}  // namespace sluice::graph
