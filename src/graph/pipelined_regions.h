// Pipelined regions of an ExecutionGraph: the unit Flink's region failover strategy restarts
// (jobmanager.execution.failover-strategy: region; Flink docs, "Task Failure Recovery" > "Restart Pipelined Region
// Failover Strategy").
//
// In a streaming job every exchange is pipelined (records flow while both ends run), so a failed subtask can only
// be restarted together with every subtask it exchanges records with, directly or through others: a region is a
// connected component of the subtasks joined by the JobGraph's network edges. Forward and rescale edges are
// pointwise (graph/edge_topology.h: forward joins producer subtask i to consumer subtask i only, rescale each
// producer to its own range of consumers, 2 -> 4 giving {0 -> 0, 1} and {1 -> 2, 3}); every other partitioning
// (hash, rebalance, broadcast, shuffle, global, custom) joins each producer subtask to each consumer subtask, so a
// job with such an edge between two vertices has them in one region. A job of chained vertices and forward edges
// only has one region per parallel pipeline; a job with a key_by has one region.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/edge_topology.h"
#include "graph/job_graph.h"

namespace sluice::graph {

struct PipelinedRegions {
  // Each region's subtasks as indices into ExecutionGraph::subtasks, ascending; regions ordered by their first
  // subtask, so a job's regions are numbered the same in every process that builds the same JobGraph.
  std::vector<std::vector<int32_t>> regions;
  // Indexed like ExecutionGraph::subtasks: the region each subtask belongs to.
  std::vector<int32_t> region_of;
};

// `execution` must be build_execution_graph(job) (subtasks grouped by vertex, subtask index ascending).
PipelinedRegions compute_pipelined_regions(const JobGraph& job, const ExecutionGraph& execution);

// The index of (vertex, subtask) in ExecutionGraph::subtasks of `job`; -1 when out of range.
int32_t execution_index(const JobGraph& job, int32_t vertex, int32_t subtask);

}  // namespace sluice::graph
