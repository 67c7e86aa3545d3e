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
#include <string_view>
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

// One file of an incremental RocksDB snapshot (Flink's HandleAndLocalPath): the name the file has in the
// backend's local database ("000012.sst", "MANIFEST-000005") and where its bytes are in checkpoint storage.
struct IncrementalFile {
  std::string local_name;
  StreamStateHandle file;  // never inline
  // Shared files only: true when this checkpoint did not upload the file but refers to one a completed
  // checkpoint uploaded before (Flink's placeholder handle). Its bytes count in the full state size, not in the
  // checkpointed (added) size.
  bool reused = false;
  bool operator==(const IncrementalFile&) const = default;
};

// Keyed state of one subtask as an incremental RocksDB snapshot (Flink's IncrementalRemoteKeyedStateHandle):
// the files of a native RocksDB checkpoint. SST files are immutable and go to `shared/` under unique names, where
// several checkpoints refer to them (the SharedStateRegistry counts the references); the database's private
// files (MANIFEST, CURRENT, OPTIONS) go to the checkpoint's own folder. Only the RocksDB backend restores it;
// full snapshots (KeyGroupsStateHandle) are the portable format.
//
// Shared file paths are relative to the job directory ("shared/<name>"); a checkpoint that claimed (CLAIM mode)
// a checkpoint of another job in the same checkpoint directory may refer to that job's files as
// "../<job-id>/shared/<name>" (the only form of ".." allowed).
struct IncrementalKeyedStateHandle {
  KeyGroupRange range;
  std::string backend_id;              // 32 hex digits: the backend instance that took it (Flink's backendIdentifier)
  CheckpointId checkpoint_id{0};       // the checkpoint this handle was taken for
  std::vector<IncrementalFile> shared_files;   // SST files, by local name
  std::vector<IncrementalFile> private_files;  // MANIFEST, CURRENT, OPTIONS
  // The registered states (names, kinds, serializer snapshots), the key serializer and max parallelism, in the
  // canonical encoding of sluice/state/incremental_snapshot.h (encode_incremental_state_meta).
  std::vector<uint8_t> state_meta;
  bool operator==(const IncrementalKeyedStateHandle&) const = default;

  // Every file's bytes (full state size) / the bytes this checkpoint uploaded (shared files not reused, plus
  // the private files).
  uint64_t full_size_bytes() const {
    uint64_t total = 0;
    for (const IncrementalFile& f : shared_files) total += f.file.size_bytes;
    for (const IncrementalFile& f : private_files) total += f.file.size_bytes;
    return total;
  }
  uint64_t checkpointed_size_bytes() const {
    uint64_t total = 0;
    for (const IncrementalFile& f : shared_files) total += f.reused ? 0 : f.file.size_bytes;
    for (const IncrementalFile& f : private_files) total += f.file.size_bytes;
    return total;
  }
};

// One parallel instance's share of an operator's state.
struct OperatorSubtaskState {
  int32_t subtask_index = 0;
  std::optional<KeyGroupsStateHandle> keyed_state;
  // Instead of keyed_state when the RocksDB backend took an incremental snapshot (never both).
  std::optional<IncrementalKeyedStateHandle> incremental_keyed_state;
  // The operator state backend's snapshot (list, union and broadcast state; source splits; sink
  // committables), in the format of state/operator_state_snapshot.h.
  std::optional<StreamStateHandle> operator_state;
  // The subtask's in-flight data of an unaligned checkpoint (channel_state.h encoding), on its chain's head
  // operator only (format version 3). Restored at any parallelism (cluster/channel_state_assignment.h).
  std::optional<StreamStateHandle> channel_state;
  bool operator==(const OperatorSubtaskState&) const = default;
};

// One operator of the job, matched on restore by its id (the user's uid, or an id derived from the graph).
struct OperatorState {
  std::string operator_id;
  std::string operator_name;  // for messages and `sluice checkpoint inspect`
  int32_t parallelism = 1;
  int32_t max_parallelism = 128;
  // For an operator without a uid: the ids of its direct inputs and outputs when the snapshot was taken
  // (cluster/generated_id_check.h); "" for an operator with a uid, and in snapshots taken before it was recorded.
  std::string graph_position;
  std::vector<OperatorSubtaskState> subtasks;  // sorted by subtask_index; one per subtask that has state
  bool operator==(const OperatorState&) const = default;
};

enum class SnapshotType : uint8_t { kCheckpoint = 0, kSavepoint = 1 };

// How a savepoint holds keyed state (Flink's SavepointFormatType). kCanonical: the backend-independent full format
// (KeyGroupsStateHandle), restorable into either backend. kNative: the state backend's own snapshot format - for
// RocksDB the database's files (an IncrementalKeyedStateHandle whose files all sit in the savepoint folder), for
// the heap backend its full snapshot (the same bytes as canonical) - restorable only into the backend that took
// it (CheckpointMetadata::state_backend). Checkpoints are always kCanonical here (their format follows
// execution.checkpointing.incremental).
enum class SavepointFormatType : uint8_t { kCanonical = 0, kNative = 1 };
const char* savepoint_format_name(SavepointFormatType format);  // "CANONICAL", "NATIVE" (Flink's names)
// "canonical" / "native", any case; nullopt otherwise.
std::optional<SavepointFormatType> parse_savepoint_format(std::string_view text);

struct CheckpointMetadata {
  // 1: full snapshots only. 2: adds IncrementalKeyedStateHandle (a version-1 reader would drop it silently, so
  // the version was bumped; version-1 metadata still decodes, and may not hold incremental handles).
  // 3: adds channel state (unaligned checkpoints); older metadata may not hold it.
  static constexpr uint32_t kFormatVersion = 3;
  static constexpr uint32_t kFirstIncrementalFormatVersion = 2;
  static constexpr uint32_t kFirstChannelStateFormatVersion = 3;
  // The version the metadata was read with (decode_metadata); writing uses required_format_version(). Not part
  // of equality: the same content reads back equal whatever version it was written with.
  uint32_t format_version = kFormatVersion;
  CheckpointId checkpoint_id{0};
  JobId job_id;                 // the run that took it
  // The runs `job_id` descends from by restores, newest first: the run whose snapshot it restored, then that
  // snapshot's lineage. Empty for a run started fresh, and in metadata written before lineages were recorded. A
  // restored sink cleans up only artifacts of these runs and its own (docs/safety.md).
  std::vector<JobId> lineage;
  int64_t trigger_timestamp_ms = 0;
  SnapshotType type = SnapshotType::kCheckpoint;
  // Savepoints only (kCanonical for checkpoints and for savepoints written before native ones existed).
  SavepointFormatType savepoint_format = SavepointFormatType::kCanonical;
  // The state backend that took it: "hashmap" or "rocksdb" (state.backend.type); empty in metadata written before
  // it was recorded. A native savepoint restores only into this backend.
  std::string state_backend;
  std::vector<OperatorState> operators;
  std::map<std::string, std::string> properties;  // job-level facts a restore checks (e.g. "demo.seed")
  bool operator==(const CheckpointMetadata& o) const {
    return checkpoint_id == o.checkpoint_id && job_id == o.job_id && lineage == o.lineage &&
           trigger_timestamp_ms == o.trigger_timestamp_ms &&
           type == o.type && savepoint_format == o.savepoint_format && state_backend == o.state_backend &&
           operators == o.operators && properties == o.properties;
  }
  bool is_native_savepoint() const {
    return type == SnapshotType::kSavepoint && savepoint_format == SavepointFormatType::kNative;
  }

  // The lowest version that holds this metadata, which encode_metadata writes: 3 with channel state, else 2, so
  // aligned checkpoints stay readable by readers of version 2 (builds before unaligned checkpoints).
  uint32_t required_format_version() const {
    return has_channel_state() ? kFirstChannelStateFormatVersion : kFirstIncrementalFormatVersion;
  }

  // Full size of the state this checkpoint refers to (sum of every handle's size, shared files included;
  // Flink's "Full Checkpoint Data Size").
  uint64_t state_size_bytes() const;
  // The bytes this checkpoint added: state_size_bytes() less the shared files it reused from earlier
  // checkpoints (Flink's "Checkpointed Data Size"). Equal to state_size_bytes() without incremental handles.
  uint64_t checkpointed_size_bytes() const;
  // Every file the checkpoint refers to (relative paths), for verify and cleanup.
  std::vector<std::string> referenced_files() const;
  // The shared files of its incremental handles (relative paths, sorted, unique): what the SharedStateRegistry
  // counts. Empty for a native savepoint (its files are its own, never shared).
  std::vector<std::string> shared_files() const;
  bool has_incremental_state() const;
  // Some subtask holds channel state (an unaligned checkpoint that persisted in-flight data).
  bool has_channel_state() const;
};

}  // namespace sluice::checkpoint
