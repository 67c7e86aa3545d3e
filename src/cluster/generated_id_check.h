// Generated operator ids and a changed graph. An operator without a uid gets an id from its creation order
// ("auto-<node>-<name>", graph::operator_id), so an operator of the same name inserted before it takes its id, and
// a restore would hand it the old operator's state while the real one starts empty. Every checkpoint records,
// per operator without a uid, its graph position: the ids of its direct inputs and outputs. A restore that
// would give state to an operator by a generated id whose position differs is refused, listing those operators
// (Flink's advice holds: set a uid on every stateful operator; docs/savepoints.md).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "checkpoint/checkpoint_metadata.h"
#include "sluice/api/stream_graph.h"
#include "sluice/core/status.h"

namespace sluice::cluster {

// "inputs: a, b; outputs: c": the operator ids of the node's direct upstream and downstream nodes, each list
// sorted. "" for a node with a uid (its id does not depend on the graph).
std::string graph_position(const StreamGraph& sg, int32_t node_id);

// kInvalidArgument naming `location` and listing every operator without a uid whose state `md` holds under its
// generated id while its graph position differs from the one `md` recorded, with both positions and the uid
// that keeps the state (the old generated id); ok when there is none, and when `ignore`
// (execution.state-recovery.ignore-generated-id-changes). Snapshots that recorded no position (taken before
// positions were recorded) are not checked.
Status check_generated_id_positions(const checkpoint::CheckpointMetadata& md, const std::string& location,
                                    const StreamGraph& sg, bool ignore);

}  // namespace sluice::cluster
