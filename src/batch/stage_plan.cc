#include "batch/stage_plan.h"

#include <algorithm>
#include <string>

namespace sluice::batch {

StagePlan plan_stages(const StreamGraph& sg, const graph::JobGraph& jg) {
  StagePlan plan;
  const size_t n = jg.vertices.size();
  plan.stage_of_vertex.assign(n, 0);
  plan.sorted_input.assign(n, false);
  // Vertices are in topological order, so producers are placed before their consumers.
  for (const graph::JobVertex& v : jg.vertices) {
    int32_t stage = 0;
    bool all_hash = true;
    const std::vector<const graph::JobEdge*> inputs = jg.inputs_of(v.id);
    for (const graph::JobEdge* e : inputs) {
      stage = std::max(stage, plan.stage_of_vertex[static_cast<size_t>(e->source_vertex)] + 1);
      all_hash = all_hash && e->partitioning == Partitioning::kHash;
    }
    plan.stage_of_vertex[static_cast<size_t>(v.id)] = stage;
    const StreamNode& head = sg.node(v.head_node);
    plan.sorted_input[static_cast<size_t>(v.id)] =
        !inputs.empty() && all_hash && head.keyed &&
        (head.kind == StreamNode::Kind::kOneInput || head.kind == StreamNode::Kind::kTwoInput);
    if (static_cast<size_t>(stage) >= plan.stages.size()) plan.stages.resize(static_cast<size_t>(stage) + 1);
    plan.stages[static_cast<size_t>(stage)].push_back(v.id);
  }
  return plan;
}

std::vector<std::string> unbounded_sources(const StreamGraph& sg) {
  std::vector<std::string> out;
  for (const StreamNode& node : sg.nodes) {
    if (node.kind == StreamNode::Kind::kSource && !node.bounded) out.push_back(node.name);
  }
  return out;
}

}  // namespace sluice::batch
