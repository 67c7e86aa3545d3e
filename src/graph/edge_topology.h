// Which subtasks a network edge connects: the one place that knows an edge's channels, used by the network
// wiring (cluster/attempt_network), the task's outputs and input gate (runtime/stream_task), BATCH exchange files
// (batch/batch_job) and the unaligned channel-state restore (cluster/channel_state_assignment).
//
// Flink's DistributionPattern: an ALL_TO_ALL edge (rebalance, broadcast, hash, shuffle, global, custom) gives every
// producer subtask one subpartition per consumer subtask and every consumer one input channel per producer. A
// POINTWISE edge (forward, rescale) connects each producer to a contiguous range of consumers, or each consumer to
// a contiguous range of producers, as Flink's EdgeManagerBuildUtil.connectPointwise:
//  - P producers, C consumers, P <= C: producer i feeds consumers [i*C/P, (i+1)*C/P), each consumer has one producer;
//  - P >= C: consumer j reads producers [j*P/C, (j+1)*P/C), each producer has one consumer;
//  - P == C (forward): i -> i.
// So 2 -> 4 gives 0 -> {0, 1}, 1 -> {2, 3}, and 4 -> 2 gives {0, 1} -> 0, {2, 3} -> 1.
// A producer's subpartition k goes to consumer consumers_of_producer(...).begin + k; a consumer's input channels of
// one edge are its producers in ascending order, channel k reading producer producers_of_consumer(...).begin + k.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "graph/job_graph.h"
#include "sluice/api/stream_graph.h"

namespace sluice::graph {

enum class DistributionPattern { kAllToAll, kPointwise };

// kPointwise for kForward and kRescale, kAllToAll for the others (kDefault is resolved before any edge exists).
DistributionPattern distribution_pattern(Partitioning p);
// distribution_pattern(p) == kPointwise.
bool is_pointwise(Partitioning p);

// Subtask indexes [begin, end).
struct SubtaskRange {
  int32_t begin = 0;
  int32_t end = 0;
  int32_t size() const { return end - begin; }
  bool contains(int32_t subtask) const { return subtask >= begin && subtask < end; }
  bool operator==(const SubtaskRange&) const = default;
};

// The consumer subtasks that producer subtask `producer` of `producers` sends to on an edge into `consumers`
// subtasks; never empty. Arguments must be in range (producers, consumers >= 1, 0 <= producer < producers).
SubtaskRange consumers_of_producer(Partitioning p, int32_t producer, int32_t producers, int32_t consumers);
// The producer subtasks that consumer subtask `consumer` reads from; never empty.
SubtaskRange producers_of_consumer(Partitioning p, int32_t consumer, int32_t producers, int32_t consumers);

// The same for a JobEdge of `job`, at its vertices' parallelisms.
SubtaskRange consumers_of_producer(const JobGraph& job, const JobEdge& edge, int32_t producer);
SubtaskRange producers_of_consumer(const JobGraph& job, const JobEdge& edge, int32_t consumer);

}  // namespace sluice::graph
