#include "graph/job_graph.h"

#include <algorithm>
#include <functional>
#include <map>

namespace sluice {

const char* partitioning_name(Partitioning p) {
  switch (p) {
    case Partitioning::kDefault: return "DEFAULT";
    case Partitioning::kForward: return "FORWARD";
    case Partitioning::kRebalance: return "REBALANCE";
    case Partitioning::kBroadcast: return "BROADCAST";
    case Partitioning::kHash: return "HASH";
    case Partitioning::kRescale: return "RESCALE";
    case Partitioning::kShuffle: return "SHUFFLE";
    case Partitioning::kGlobal: return "GLOBAL";
    case Partitioning::kCustom: return "CUSTOM";
  }
  return "?";
}

namespace graph {

std::string operator_id(const StreamNode& node) {
  return node.uid.empty() ? "auto-" + std::to_string(node.id) + "-" + node.name : node.uid;
}

std::vector<const JobEdge*> JobGraph::inputs_of(int32_t vertex) const {
  std::vector<const JobEdge*> r;
  for (const auto& e : edges)
    if (e.target_vertex == vertex) r.push_back(&e);
  return r;
}

std::vector<const JobEdge*> JobGraph::outputs_of(int32_t vertex) const {
  std::vector<const JobEdge*> r;
  for (const auto& e : edges)
    if (e.source_vertex == vertex) r.push_back(&e);
  return r;
}

namespace {

std::string node_label(const StreamNode& n) {
  return "'" + n.name + "'" + (n.uid.empty() ? "" : " (uid " + n.uid + ")");
}

// Kahn's algorithm; fails on a cycle.
Result<std::vector<int32_t>> topological_order(const StreamGraph& g) {
  size_t n = g.nodes.size();
  std::vector<int32_t> indeg(n, 0);
  for (const auto& e : g.edges) indeg[static_cast<size_t>(e.target_id)]++;
  std::vector<int32_t> order, ready;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push_back(static_cast<int32_t>(i));
  while (!ready.empty()) {
    int32_t v = ready.front();
    ready.erase(ready.begin());
    order.push_back(v);
    for (const auto& e : g.edges)
      if (e.source_id == v && --indeg[static_cast<size_t>(e.target_id)] == 0) ready.push_back(e.target_id);
  }
  if (order.size() != n) return Status::invalid_argument("the stream graph has a cycle");
  return order;
}

}  // namespace

Result<JobGraph> build_job_graph(const StreamGraph& g, const JobGraphOptions& opt) {
  if (g.nodes.empty()) return Status::invalid_argument("the job has no operators: add a source and a sink");
  if (opt.default_parallelism < 1) {
    return Status::invalid_argument("parallelism.default: expected >= 1, got " +
                                    std::to_string(opt.default_parallelism));
  }
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const StreamNode& n) { return n.is_sink; })) {
    return Status::invalid_argument("the job has no sink: its results would go nowhere (add sink_to(...), e.g. "
                                    "a DiscardingSink if that is intended)");
  }
  JobGraph jg;
  jg.job_name = opt.job_name;
  const size_t n = g.nodes.size();

  jg.node_parallelism.resize(n);
  int32_t highest = 1;
  for (size_t i = 0; i < n; ++i) {
    int32_t p = g.nodes[i].parallelism > 0 ? g.nodes[i].parallelism : opt.default_parallelism;
    jg.node_parallelism[i] = p;
    highest = std::max(highest, p);
  }
  jg.max_parallelism = opt.max_parallelism > 0 ? opt.max_parallelism : default_max_parallelism(highest);
  for (size_t i = 0; i < n; ++i) {
    Status s = check_max_parallelism(jg.max_parallelism, jg.node_parallelism[i]);
    if (!s.is_ok()) return s.with_context("operator " + node_label(g.nodes[i]));
  }

  SLUICE_ASSIGN_OR_RETURN(std::vector<int32_t> order, topological_order(g));

  // Inputs per node, and type/edge validation.
  std::vector<std::vector<int32_t>> in_edges(n);
  for (size_t ei = 0; ei < g.edges.size(); ++ei) {
    const auto& e = g.edges[ei];
    in_edges[static_cast<size_t>(e.target_id)].push_back(static_cast<int32_t>(ei));
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& node = g.nodes[i];
    if (node.kind == StreamNode::Kind::kSource && !in_edges[i].empty()) {
      return Status::invalid_argument("source " + node_label(node) + " cannot have inputs");
    }
    if (node.kind != StreamNode::Kind::kSource && in_edges[i].empty()) {
      return Status::invalid_argument("operator " + node_label(node) + " has no input");
    }
    // Edges into the same input (type number) carry one record type; a two-input node has both inputs.
    const bool two_input = node.kind == StreamNode::Kind::kTwoInput;
    bool has_input[3] = {false, false, false};
    for (int32_t ei : in_edges[i]) {
      const StreamEdge& e = g.edges[static_cast<size_t>(ei)];
      if (two_input ? (e.type_number != 1 && e.type_number != 2) : e.type_number != 0) {
        return Status::invalid_argument("operator " + node_label(node) + ": an input edge with type number " +
                                        std::to_string(e.type_number) + ", expected " +
                                        (two_input ? "1 or 2 (a two-input operator)" : "0 (a one-input operator)"));
      }
      has_input[e.type_number] = true;
      for (int32_t other : in_edges[i]) {
        const StreamEdge& o = g.edges[static_cast<size_t>(other)];
        if (o.type_number == e.type_number && o.type.type != e.type.type) {
          return Status::invalid_argument("operator " + node_label(node) + " has inputs of different types (" +
                                          e.type.type_name + " and " + o.type.type_name + ")");
        }
      }
    }
    if (two_input && (!has_input[1] || !has_input[2])) {
      return Status::invalid_argument("two-input operator " + node_label(node) + " lacks its input " +
                                      (has_input[1] ? "2" : "1"));
    }
  }

  // Resolve partitioning; decide chaining.
  std::vector<Partitioning> resolved(g.edges.size());
  std::vector<bool> chain(g.edges.size(), false);
  for (size_t ei = 0; ei < g.edges.size(); ++ei) {
    const auto& e = g.edges[ei];
    int32_t ps = jg.node_parallelism[static_cast<size_t>(e.source_id)];
    int32_t pt = jg.node_parallelism[static_cast<size_t>(e.target_id)];
    Partitioning p = e.partitioning;
    if (p == Partitioning::kDefault) p = ps == pt ? Partitioning::kForward : Partitioning::kRebalance;
    if (p == Partitioning::kForward && ps != pt) {
      return Status::invalid_argument("forward edge from " + node_label(g.node(e.source_id)) + " (parallelism " +
                                      std::to_string(ps) + ") to " + node_label(g.node(e.target_id)) +
                                      " (parallelism " + std::to_string(pt) +
                                      "): forward needs equal parallelism; use rebalance() or key_by()");
    }
    if ((p == Partitioning::kHash || p == Partitioning::kCustom) && !e.make_selector) {
      return Status::invalid_argument(std::string("the ") + partitioning_name(p) + " edge from " +
                                      node_label(g.node(e.source_id)) + " to " + node_label(g.node(e.target_id)) +
                                      " has no partitioner");
    }
    resolved[ei] = p;
    chain[ei] = p == Partitioning::kForward && in_edges[static_cast<size_t>(e.target_id)].size() == 1 &&
                g.node(e.source_id).chaining != ChainingStrategy::kNever &&
                g.node(e.target_id).chaining == ChainingStrategy::kAlways;
  }

  // Vertices: a node whose single input edge is chained joins its producer's vertex.
  jg.vertex_of_node.assign(n, -1);
  for (int32_t node_id : order) {
    const auto& ins = in_edges[static_cast<size_t>(node_id)];
    if (ins.size() == 1 && chain[static_cast<size_t>(ins[0])]) {
      const auto& e = g.edges[static_cast<size_t>(ins[0])];
      int32_t v = jg.vertex_of_node[static_cast<size_t>(e.source_id)];
      jg.vertex_of_node[static_cast<size_t>(node_id)] = v;
      auto& vx = jg.vertices[static_cast<size_t>(v)];
      vx.nodes.push_back(node_id);
      vx.chained.push_back(ChainedEdge{e.source_id, node_id, e.side_output_tag});
      vx.name += " -> " + g.node(node_id).name;
      continue;
    }
    JobVertex vx;
    vx.id = static_cast<int32_t>(jg.vertices.size());
    vx.head_node = node_id;
    vx.nodes = {node_id};
    vx.parallelism = jg.node_parallelism[static_cast<size_t>(node_id)];
    vx.is_source = g.node(node_id).kind == StreamNode::Kind::kSource;
    vx.name = (vx.is_source ? "Source: " : "") + g.node(node_id).name;
    jg.vertex_of_node[static_cast<size_t>(node_id)] = vx.id;
    jg.vertices.push_back(std::move(vx));
  }
  // Timestamps exist downstream of any node that assigns them (a fixpoint over the edges; graphs are small).
  std::vector<bool> has_ts(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) has_ts[i] = g.nodes[i].assigns_timestamps;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& e : g.edges) {
      if (has_ts[static_cast<size_t>(e.source_id)] && !has_ts[static_cast<size_t>(e.target_id)]) {
        has_ts[static_cast<size_t>(e.target_id)] = true;
        changed = true;
      }
    }
  }
  // All input edges of one input of a node share one framing (one deserializer per input of a task): with
  // timestamps when any of them comes from a node with timestamps. Index: node * 3 + type number.
  std::vector<bool> ts_in(g.nodes.size() * 3, false);
  auto ts_slot = [](const StreamEdge& e) { return static_cast<size_t>(e.target_id) * 3 + static_cast<size_t>(e.type_number); };
  for (const auto& e : g.edges) {
    if (has_ts[static_cast<size_t>(e.source_id)]) ts_in[ts_slot(e)] = true;
  }
  for (size_t ei = 0; ei < g.edges.size(); ++ei) {
    if (chain[ei]) continue;
    const auto& e = g.edges[ei];
    jg.edges.push_back(JobEdge{jg.vertex_of_node[static_cast<size_t>(e.source_id)],
                               jg.vertex_of_node[static_cast<size_t>(e.target_id)], static_cast<int32_t>(ei),
                               resolved[ei], ts_in[ts_slot(e)], e.type_number});
  }
  return jg;
}

ExecutionGraph build_execution_graph(const JobGraph& job) {
  ExecutionGraph eg;
  for (const auto& v : job.vertices) {
    for (int32_t i = 0; i < v.parallelism; ++i) {
      eg.subtasks.push_back(ExecutionVertex{
          v.id, i, key_group_range_for_subtask(job.max_parallelism, v.parallelism, SubtaskIndex(i))});
    }
  }
  return eg;
}

}  // namespace graph
}  // namespace sluice
