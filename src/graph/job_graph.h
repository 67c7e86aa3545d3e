// JobGraph: the StreamGraph after operator chaining (Flink's JobGraph), and the ExecutionGraph of subtasks.
//
// Chaining rule (Flink's StreamingJobGraphGenerator.isChainable): an edge u -> v is chained when its partitioning
// resolves to forward, both have the same parallelism, v has no other input (so a two-input node always heads its
// vertex), u's chaining strategy is not kNever (disable_chaining) and v's is kAlways (neither disable_chaining nor
// start_new_chain). Rescale, shuffle and every other partitioning never chain, even at equal parallelism. A vertex
// is then a tree of chained nodes rooted at its head; every other edge becomes a network JobEdge from the vertex
// that contains u to the vertex headed by v (the subtasks it connects: edge_topology.h).
// Partitioning kDefault resolves to forward for equal parallelism, else rebalance; an explicit forward
// between different parallelisms is an error. Max parallelism (the number of key groups) is job-wide:
// pipeline.max-parallelism if set, else default_max_parallelism(the highest operator parallelism).
// Pure functions over the graph; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/api/stream_graph.h"
#include "sluice/core/status.h"
#include "sluice/state/key_group.h"

namespace sluice::graph {

struct ChainedEdge {
  int32_t source_node = -1;
  int32_t target_node = -1;
  std::string side_output_tag;  // empty: main output
};

struct JobVertex {
  int32_t id = -1;
  std::string name;          // "Source: bids -> Filter -> Map"
  int32_t parallelism = 1;
  bool is_source = false;
  int32_t head_node = -1;
  std::vector<int32_t> nodes;         // the chain, head first, in topological order
  std::vector<ChainedEdge> chained;   // forward edges inside the vertex
};

struct JobEdge {
  int32_t source_vertex = -1;
  int32_t target_vertex = -1;
  int32_t stream_edge = -1;           // index into StreamGraph::edges (source node, tag, type, selector)
  Partitioning partitioning = Partitioning::kForward;  // resolved: never kDefault
  // Records on this edge carry event-time timestamps: a node upstream of it (or its source node) assigns them
  // (StreamNode::assigns_timestamps). Static, so edges without timestamps pay nothing on the wire.
  bool carries_timestamps = false;
  // Which input of the target vertex's head the edge feeds: 0 (one-input head), 1 or 2 (two-input head).
  int32_t type_number = 0;
};

struct JobGraph {
  std::string job_name;
  int32_t max_parallelism = 128;
  std::vector<JobVertex> vertices;  // in topological order
  std::vector<JobEdge> edges;
  std::vector<int32_t> node_parallelism;  // per StreamGraph node, resolved
  std::vector<int32_t> vertex_of_node;    // per StreamGraph node

  std::vector<const JobEdge*> inputs_of(int32_t vertex) const;
  std::vector<const JobEdge*> outputs_of(int32_t vertex) const;
};

struct JobGraphOptions {
  std::string job_name;
  int32_t default_parallelism = 1;
  int32_t max_parallelism = -1;  // -1: derive
};

// The id that matches an operator's state across runs: its uid, or one derived from its position and name
// (stable only while the program's shape does not change - set uids on stateful operators, as in Flink).
std::string operator_id(const StreamNode& node);

// Errors (kInvalidArgument): empty graph, a cycle, parallelism < 1, max parallelism out of range or below
// an operator's parallelism, forward edge between different parallelisms, an edge joining different record
// types into one operator, a non-source node without input, a hash or custom edge without its partitioner.
Result<JobGraph> build_job_graph(const StreamGraph& graph, const JobGraphOptions& options);

// One parallel instance of a vertex with its key groups (ExecutionGraph's ExecutionVertex).
struct ExecutionVertex {
  int32_t vertex = -1;
  int32_t subtask_index = 0;
  KeyGroupRange key_group_range;
};

struct ExecutionGraph {
  std::vector<ExecutionVertex> subtasks;  // grouped by vertex, subtask index ascending
};

ExecutionGraph build_execution_graph(const JobGraph& job);

}  // namespace sluice::graph
