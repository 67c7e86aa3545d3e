// The in-memory model of a completed checkpoint or savepoint: what `_metadata` holds (DESIGN.md section 3,
// "Snapshots" and "Checkpoint storage"; Flink's CheckpointMetadata / OperatorState / OperatorSubtaskState).
//
// State bytes are referenced through StreamStateHandles: inline (small state, below
// execution.checkpointing.data-inline-threshold, stored inside _metadata) or a file relative to the job's
// checkpoint directory (so a directory can be moved as a whole). Every handle carries its size and an XXH3-64
// checksum of its bytes, so a truncated or flipped file fails the restore naming the file.
// Values; thread-safety: none needed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/state/key_group.h"

namespace sluice::checkpoint {

struct StreamStateHandle {
  std::string relative_path;          // empty: inline; else relative to the job's checkpoint directory
  std::vector<uint8_t> inline_bytes;  // the bytes, when inline
  uint64_t size_bytes = 0;
  uint64_t checksum = 0;              // XXH3-64 of the bytes
  bool is_inline() const { return relative_path.empty(); }
  bool operator==(const StreamStateHandle&) const = default;
};

// Keyed state of one subtask: the canonical per-key-group snapshots (state/key_group_snapshot.h) of its
// key-group range, concatenated in key-group order in one stream. offsets[i] is where key group
// range.start() + i begins; offsets has num_key_groups() + 1 entries (the last is the stream's size), and
// an empty key group has offsets[i] == offsets[i + 1].
struct KeyGroupsStateHandle {
  KeyGroupRange range;
  std::vector<uint64_t> offsets;
  StreamStateHandle stream;
  bool operator==(const KeyGroupsStateHandle&) const = default;
};

// One parallel instance's share of an operator's state.
struct OperatorSubtaskState {
  int32_t subtask_index = 0;
  std::optional<KeyGroupsStateHandle> keyed_state;
  // The operator state backend's snapshot (list, union and broadcast state; source splits; sink
  // committables), in the format of state/operator_state_snapshot.h.
  std::optional<StreamStateHandle> operator_state;
  bool operator==(const OperatorSubtaskState&) const = default;
};

// One operator of the job, matched on restore by its id (the user's uid, or an id derived from the graph).
struct OperatorState {
  std::string operator_id;
  std::string operator_name;  // for messages and `sluice checkpoint inspect`
  int32_t parallelism = 1;
  int32_t max_parallelism = 128;
  std::vector<OperatorSubtaskState> subtasks;  // sorted by subtask_index; one per subtask that has state
  bool operator==(const OperatorState&) const = default;
};

enum class SnapshotType : uint8_t { kCheckpoint = 0, kSavepoint = 1 };

struct CheckpointMetadata {
  static constexpr uint32_t kFormatVersion = 1;
  uint32_t format_version = kFormatVersion;
  CheckpointId checkpoint_id{0};
  JobId job_id;                 // the run that took it
  int64_t trigger_timestamp_ms = 0;
  SnapshotType type = SnapshotType::kCheckpoint;
  std::vector<OperatorState> operators;
  std::map<std::string, std::string> properties;  // job-level facts a restore checks (e.g. "demo.seed")
  bool operator==(const CheckpointMetadata&) const = default;

  // Full size of the state this checkpoint refers to (sum of every handle's size).
  uint64_t state_size_bytes() const;
  // Every file the checkpoint refers to (relative paths), for verify and cleanup.
  std::vector<std::string> referenced_files() const;
};

}  // namespace sluice::checkpoint
