// Which restored state each subtask gets (Flink's StateAssignmentOperation): keyed state by key-group range
// intersection (each key group's canonical snapshot sliced out of the old subtasks' streams), operator state
// redistributed by mode (state/operator_state_store.h), matched to operators by operator id.
//
// Errors name the checkpoint location and the operator: a state file missing or corrupt (kNotFound /
// kCorruption from the storage), a max parallelism different from the job's (the key groups would not match),
// or state in the checkpoint for an operator the job does not have (restoring would silently drop it).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/checkpoint_storage.h"
#include "cluster/key_group_rehash.h"
#include "sluice/operators/stream_operator.h"

namespace sluice::cluster {

// The state of operator `operator_id` in `metadata`; null when it has none.
const checkpoint::OperatorState* find_operator_state(const checkpoint::CheckpointMetadata& metadata,
                                                     const std::string& operator_id);

// Whether some subtask of `op` holds keyed or operator state (channel state alone is in-flight data, not state
// of the operator: channel_state_assignment.h restores it).
bool has_operator_or_keyed_state(const checkpoint::OperatorState& op);

struct OperatorToRestore {
  std::string operator_id;
  int32_t parallelism = 1;
};

// State in a checkpoint or savepoint for an operator (by operator id, derived from its uid) the job does not have.
struct UnmatchedOperatorState {
  std::string operator_id;
  std::string operator_name;
  int32_t parallelism = 0;     // the operator's, when the snapshot was taken
  int32_t subtasks = 0;        // subtasks with state
  bool keyed = false;          // some subtask had keyed state
  bool operator_state = false; // some subtask had operator (non-keyed) state
  uint64_t state_size_bytes = 0;
  // "keyed state and operator state of 2 subtasks, 1.2 KiB"
  std::string describe() const;
};

// Every operator with state in `metadata` whose id is not in `job_operator_ids`, in metadata order.
std::vector<UnmatchedOperatorState> unmatched_operator_state(const checkpoint::CheckpointMetadata& metadata,
                                                             const std::vector<std::string>& job_operator_ids);
// "savepoint 7 (<location>) holds state of 2 operators this job does not have: 'a' (uid ...): ..., 'b' ..."
std::string describe_unmatched_state(const checkpoint::CheckpointMetadata& metadata, const std::string& location,
                                     const std::vector<UnmatchedOperatorState>& unmatched);

// Whether the restoring job may refer to the restored checkpoint's shared files in its own incremental
// checkpoints: its own checkpoint (a failover) or one it claimed (CLAIM) - kReuse; a checkpoint restored in
// NO_CLAIM mode - kNoReuse, so the first checkpoint uploads everything again.
enum class SharedFileReuse : uint8_t { kNoReuse, kReuse };

// The restore state of subtask `subtask` (key groups `range`) for each operator of its chain that has state in
// the checkpoint. Incremental handles whose range meets `range` are resolved to local file paths
// (IncrementalRestoreHandle); the RocksDB backend copies the files when it restores. An operator recorded with
// another max parallelism than `max_parallelism` fails (kInvalidArgument), unless `rehash` is kRehash: then its
// canonical keyed state is re-hashed into the new key groups (key_group_rehash.h; incremental state fails).
Result<std::map<std::string, OperatorRestoreState>> assign_subtask_state(
    const checkpoint::CheckpointMetadata& metadata, const std::string& location, checkpoint::CheckpointStorage& storage,
    const std::vector<OperatorToRestore>& chain, int32_t subtask, const KeyGroupRange& range, int32_t max_parallelism,
    SharedFileReuse reuse = SharedFileReuse::kNoReuse, KeyGroupRehash rehash = KeyGroupRehash::kRefuse);

// A native savepoint holds the state backend's own files (docs/savepoints.md), so it restores only into the
// backend that took it (Flink's rule for the native format); a checkpoint with incremental RocksDB snapshots restores
// only into the RocksDB backend. `state_backend_type`: the job's state.backend.type (any spelling
// parse_state_backend_type accepts). kInvalidArgument naming the snapshot, the backend it needs and the configured
// one; Ok otherwise (canonical state restores into either backend).
Status check_restore_backend(const checkpoint::CheckpointMetadata& metadata, const std::string& location,
                             std::string_view state_backend_type);

// Channel state belongs to the task, stored on its chain's head operator. kInvalidArgument naming the operator
// when the checkpoint holds channel state for an operator that is not a chain head in this job (its chaining
// changed): the in-flight data would have no task to go to.
Status check_channel_state_heads(const checkpoint::CheckpointMetadata& metadata,
                                 const std::vector<std::string>& head_operator_ids);

// The split enumerator state a source operator stored in its subtask 0 operator state (the state named
// kSourceEnumeratorStateName), or nullopt if the checkpoint has none for it.
Result<std::optional<std::vector<uint8_t>>> restored_enumerator_state(const checkpoint::CheckpointMetadata& metadata,
                                                                      const std::string& location,
                                                                      checkpoint::CheckpointStorage& storage,
                                                                      const std::string& source_operator_id);

}  // namespace sluice::cluster
