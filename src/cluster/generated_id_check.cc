#include "cluster/generated_id_check.h"

#include <algorithm>
#include <vector>

#include "cluster/state_assignment.h"
#include "graph/job_graph.h"

namespace sluice::cluster {
namespace {

std::string joined(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out.empty() ? "none" : out;
}

}  // namespace

std::string graph_position(const StreamGraph& sg, int32_t node_id) {
  const StreamNode& node = sg.node(node_id);
  if (!node.uid.empty()) return "";
  std::vector<std::string> inputs, outputs;
  for (const StreamEdge& e : sg.edges) {
    if (e.target_id == node_id) inputs.push_back(graph::operator_id(sg.node(e.source_id)));
    if (e.source_id == node_id) outputs.push_back(graph::operator_id(sg.node(e.target_id)));
  }
  return "inputs: " + joined(std::move(inputs)) + "; outputs: " + joined(std::move(outputs));
}

Status check_generated_id_positions(const checkpoint::CheckpointMetadata& md, const std::string& location,
                                    const StreamGraph& sg, bool ignore) {
  if (ignore) return Status::ok();
  std::string moved;
  int count = 0;
  for (const StreamNode& node : sg.nodes) {
    if (!node.uid.empty()) continue;
    const std::string id = graph::operator_id(node);
    const checkpoint::OperatorState* os = find_operator_state(md, id);
    if (os == nullptr || os->graph_position.empty() || !has_operator_or_keyed_state(*os)) continue;
    const std::string now = graph_position(sg, node.id);
    if (now == os->graph_position) continue;
    ++count;
    moved += "\n  '" + node.name + "' (generated id " + id + "): in the snapshot " + os->graph_position +
             "; now " + now;
  }
  if (count == 0) return Status::ok();
  return Status::invalid_argument(
      "restoring " + location + ": " + std::to_string(count) +
      (count == 1 ? " operator without a uid would get" : " operators without a uid would get") +
      " the state of another operator: a generated id follows the order operators were created in, and the graph "
      "around these changed since the snapshot:" + moved +
      "\nset .uid(\"...\") on every stateful operator: the operator whose state this is keeps it with its old "
      "generated id as uid, new operators get new uids. To restore by generated id anyway, set "
      "execution.state-recovery.ignore-generated-id-changes=true");
}

}  // namespace sluice::cluster
