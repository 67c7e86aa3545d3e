#include "cluster/restore_check.h"

#include <map>

#include "checkpoint/byte_size_text.h"
#include "cluster/channel_state_assignment.h"
#include "cluster/generated_id_check.h"

namespace sluice::cluster {

namespace {

// "keyed state (128 key groups, re-hashed into 100) and operator state of 4 subtasks, parallelism 4 -> 2, 1.2 MiB"
std::string describe_restored(const checkpoint::OperatorState& os, int32_t parallelism, int32_t max_parallelism) {
  checkpoint::CheckpointMetadata one;
  one.operators.push_back(os);
  const UnmatchedOperatorState u = unmatched_operator_state(one, {}).front();  // sizes and kinds, as for a dropped one
  std::string what = u.keyed && u.operator_state ? "keyed and operator state" : u.keyed ? "keyed state" : "operator state";
  if (u.keyed && os.max_parallelism != max_parallelism) {
    what += " (re-hashed from " + std::to_string(os.max_parallelism) + " into " + std::to_string(max_parallelism) +
            " key groups)";
  }
  return what + " of " + std::to_string(u.subtasks) + (u.subtasks == 1 ? " subtask" : " subtasks") +
         ", parallelism " + std::to_string(os.parallelism) +
         (os.parallelism == parallelism ? "" : " -> " + std::to_string(parallelism)) + ", " +
         checkpoint::format_bytes(u.state_size_bytes);
}

}  // namespace

std::string RestoreCheck::to_text() const {
  std::string t = snapshot + "\nmax parallelism " + std::to_string(max_parallelism) + "\n";
  for (const auto& r : restored) t += "restores " + r + "\n";
  for (const auto& f : fresh) t += "starts empty " + f + "\n";
  for (const auto& f : in_flight) t += "restores in-flight data of " + f + "\n";
  for (const auto& d : dropped) {
    t += "drops '" + d.operator_name + "' (operator id " + d.operator_id + "): " + d.describe() +
         " (--allow-non-restored-state)\n";
  }
  for (const auto& p : problems) t += "problem: " + p + "\n";
  if (would_restore()) return t + "would restore\n";
  return t + "would NOT restore: " + std::to_string(problems.size()) +
         (problems.size() == 1 ? " problem\n" : " problems\n");
}

RestoreCheck check_restore(const StreamGraph& sg, const graph::JobGraph& jg, const RestoreFrom& restore,
                           checkpoint::CheckpointStorage& storage, std::string_view state_backend_type) {
  const checkpoint::CheckpointMetadata& md = restore.metadata;
  RestoreCheck c;
  c.snapshot = std::string(md.type == checkpoint::SnapshotType::kSavepoint ? "savepoint " : "checkpoint ") +
               std::to_string(md.checkpoint_id.value()) + " of job " + md.job_id.to_hex() + " (" + restore.location +
               ")";
  if (md.type == checkpoint::SnapshotType::kSavepoint) {
    c.snapshot += ", " + std::string(checkpoint::savepoint_format_name(md.savepoint_format)) + " format";
    if (!md.state_backend.empty()) c.snapshot += ", taken with the " + md.state_backend + " state backend";
  }
  c.max_parallelism = jg.max_parallelism;

  std::vector<std::string> ids, heads;
  for (const auto& v : jg.vertices) {
    heads.push_back(graph::operator_id(sg.node(v.head_node)));
    for (int32_t node_id : v.nodes) {
      const StreamNode& n = sg.node(node_id);
      const std::string id = graph::operator_id(n);
      ids.push_back(id);
      const std::string name = "'" + n.name + "' (" + (n.uid.empty() ? "generated id " : "uid ") + id + ")";
      const checkpoint::OperatorState* os = find_operator_state(md, id);
      if (os == nullptr || !has_operator_or_keyed_state(*os)) {  // in-flight data alone is reported below
        c.fresh.push_back(name);
      } else {
        c.restored.push_back(name + ": " + describe_restored(*os, v.parallelism, jg.max_parallelism));
      }
    }
  }
  std::vector<UnmatchedOperatorState> unmatched = unmatched_operator_state(md, ids);
  if (!unmatched.empty() && !restore.allow_non_restored_state) {
    c.problems.push_back(describe_unmatched_state(md, restore.location, unmatched) +
                         "; give those operators their old uid, or restore with --allow-non-restored-state");
  } else {
    c.dropped = std::move(unmatched);
  }
  for (Status s : {check_generated_id_positions(md, restore.location, sg, restore.ignore_generated_id_changes),
                   check_restore_backend(md, restore.location, state_backend_type),
                   check_channel_state_heads(md, heads),
                   storage.check_restore_files(restore.location, md, checkpoint::RestoreFileCheck::kSizes)}) {
    if (!s.is_ok()) c.problems.push_back(s.to_string());
  }
  if (!c.problems.empty()) return c;  // files missing or the shape refused: assigning state would only repeat it

  // What every subtask would get, as the deployment assigns it (reads and checks every state file).
  const graph::ExecutionGraph eg = graph::build_execution_graph(jg);
  for (const auto& ev : eg.subtasks) {
    const auto& v = jg.vertices[static_cast<size_t>(ev.vertex)];
    std::vector<OperatorToRestore> chain;
    for (int32_t node_id : v.nodes) chain.push_back({graph::operator_id(sg.node(node_id)), v.parallelism});
    auto assigned = assign_subtask_state(md, restore.location, storage, chain, ev.subtask_index, ev.key_group_range,
                                         jg.max_parallelism, SharedFileReuse::kNoReuse, restore.rehash_key_groups);
    if (!assigned.is_ok()) {
      c.problems.push_back(assigned.status().to_string());
      break;
    }
  }
  // The in-flight data of an unaligned checkpoint, reassigned as the deployment does (reads every channel state file).
  auto channel_state = ChannelStateAssignment::build(md, restore.location, storage, sg, jg);
  if (!channel_state.is_ok()) {
    c.problems.push_back(channel_state.status().to_string());
  } else {
    c.in_flight = channel_state->summary();
  }
  for (const auto& v : jg.vertices) {
    if (!v.is_source) continue;
    auto es = restored_enumerator_state(md, restore.location, storage, graph::operator_id(sg.node(v.head_node)));
    if (!es.is_ok()) c.problems.push_back(es.status().to_string());
  }
  return c;
}

}  // namespace sluice::cluster
