// CheckpointStorage: where checkpoint state and metadata go (Flink's CheckpointStorage and
// CheckpointStorageAccess; DESIGN.md section 3 "Checkpoint storage").
//
// Two implementations: FileSystemCheckpointStorage (<dir>/<job-id>/{shared/, taskowned/, chk-<n>/_metadata}; state
// files in chk-<n>/; state below the inline threshold inside _metadata; _metadata written last, atomically:
// temp file, fsync, rename, fsync of the directory) and JobManagerCheckpointStorage (everything in memory;
// a handle over max_state_size_bytes fails that checkpoint, naming the operator and the size).
//
// Thread-safety: every method may be called from any thread (tasks write state from their async threads
// while the coordinator writes metadata).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

// Writes the state of one checkpoint. Obtained per checkpoint id; used by the asynchronous part of task
// snapshots.
class CheckpointStreamFactory {
 public:
  virtual ~CheckpointStreamFactory() = default;
  // Persists `bytes` as one state handle: inline if below the inline threshold, else a new file in the
  // checkpoint's folder named after `name_hint` (made unique). `owner` names the operator for errors
  // ("operator 'per-auction' subtask 2: state of 6.1 MiB exceeds max state size 5 MiB").
  virtual Result<StreamStateHandle> write_state(const std::string& owner, const std::string& name_hint,
                                                const std::vector<uint8_t>& bytes) = 0;
};

class CheckpointStorage {
 public:
  virtual ~CheckpointStorage() = default;
  // Creates the job's folders (for the filesystem storage: shared/, taskowned/ and nothing else yet).
  virtual Status initialize(const JobId& job) = 0;
  virtual Result<std::shared_ptr<CheckpointStreamFactory>> stream_factory(CheckpointId id) = 0;
  // Makes a checkpoint complete: durable `_metadata`, written last and atomically. Returns its location
  // (the chk-<n> folder path, or "jobmanager://<job>/<n>").
  virtual Result<std::string> write_metadata(const CheckpointMetadata& metadata) = 0;
  // Reads a completed checkpoint's metadata by the location write_metadata returned (or a user-given path).
  virtual Result<CheckpointMetadata> read_metadata(const std::string& location) = 0;
  // Reads one state handle's bytes (files relative to the checkpoint's job directory), checking size and
  // checksum; kCorruption naming the file otherwise.
  virtual Result<std::vector<uint8_t>> read_state(const std::string& location, const StreamStateHandle& handle) = 0;
  // Deletes a checkpoint's folder and files (completed, aborted or subsumed). Idempotent. The id stays
  // discarded: a subtask still writing it (its asynchronous part outlived an abort) gets kCancelled from
  // stream_factory(id) and from its factory's writes, and leaves no file behind.
  virtual Status discard(CheckpointId id) = 0;
  // At job end, after its checkpoints were discarded: removes the job's folder (<dir>/<job-id>/ with its
  // shared/ and taskowned/) if nothing else is left in it. True if removed; false if something remains (a
  // retained checkpoint, files in shared/ or taskowned/) or it did not exist.
  virtual Result<bool> remove_job_dir_if_empty() = 0;
  virtual std::string describe() const = 0;  // for logs: "filesystem:/var/ck" / "jobmanager (max 5 MiB)"
};

}  // namespace sluice::checkpoint
