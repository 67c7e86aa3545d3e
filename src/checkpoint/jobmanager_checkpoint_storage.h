// JobManagerCheckpointStorage: checkpoints kept in the coordinator's memory (as in Flink's
// JobManagerCheckpointStorage). The default when no checkpoint directory is set. Every state handle is inline;
// a handle larger than max_state_size_bytes fails write_state (and so that checkpoint) with a message naming
// the owner (operator, subtask) and both sizes. Nothing survives the process: for `--restore` use the
// filesystem storage. Locations are "jobmanager://<job-id>/<n>".
// Savepoints, and restores from files, go to a file storage given at construction, as Flink's
// JobManagerCheckpointStorage writes savepoints to their target directory: savepoint ids (begin_savepoint) and
// locations other than "jobmanager://..." are that storage's. Without one, savepoints are refused.
//
// Thread-safety: every method (and every stream factory) may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_storage.h"

namespace sluice::checkpoint {

struct JobManagerStorageOptions {
  // Largest state handle in bytes (Flink's MAX_MEM_STATE_SIZE, default 5 MiB); must be > 0.
  int64_t max_state_size_bytes = 5 * 1024 * 1024;
};

class JobManagerCheckpointStorage final : public CheckpointStorage {
 public:
  // `savepoints`: a storage rooted nowhere (initialize_for_savepoints) that writes savepoints into their target
  // folders and reads checkpoints and savepoints from files; null: savepoints refused, restores from files fail.
  explicit JobManagerCheckpointStorage(JobManagerStorageOptions options = {},
                                       std::shared_ptr<CheckpointStorage> savepoints = nullptr);
  ~JobManagerCheckpointStorage() override;
  JobManagerCheckpointStorage(const JobManagerCheckpointStorage&) = delete;
  JobManagerCheckpointStorage& operator=(const JobManagerCheckpointStorage&) = delete;

  // kInvalidArgument if max_state_size_bytes <= 0. Forgets checkpoints of a previous job.
  Status initialize(const JobId& job) override;
  Status initialize_for_savepoints(const JobId& job) override;
  Result<std::shared_ptr<CheckpointStreamFactory>> stream_factory(CheckpointId id) override;
  // kFailedPrecondition if checkpoint n already has metadata or belongs to another job; kInvalidArgument if the
  // metadata is malformed or holds file handles.
  Result<std::string> write_metadata(const CheckpointMetadata& metadata) override;
  // kNotFound naming the location if no such checkpoint is held.
  Result<CheckpointMetadata> read_metadata(const std::string& location) override;
  // Checks size and checksum of an inline handle; a file handle is kInvalidArgument (this storage has none).
  Result<std::vector<uint8_t>> read_state(const std::string& location, const StreamStateHandle& handle) override;
  Status discard(CheckpointId id) override;
  // True when no checkpoint is held any more (nothing to remove in memory).
  Result<bool> remove_job_dir_if_empty() override;
  std::string describe() const override;  // "jobmanager (max state size 5 MiB)"
  bool keeps_checkpoints_in_memory() const override { return true; }

  // ---- savepoints and files: the file storage's (see above) ----
  bool supports_savepoints() const override { return savepoints_ != nullptr; }
  Status begin_savepoint(CheckpointId id, const std::string& savepoint_dir) override;
  Status check_restore_files(const std::string& location, const CheckpointMetadata& metadata,
                             RestoreFileCheck check) override;
  Status write_side_file(const std::string& location, const std::string& name,
                         const std::vector<uint8_t>& bytes) override;
  std::optional<std::string> file_path(const std::string& location, const std::string& relative_path) const override;
  Result<std::shared_ptr<fs::FileSystem>> file_system(const std::string& path) const override;

  // "jobmanager://<job-id>/<n>".
  static std::string location_of(const JobId& job, CheckpointId id);

  struct Shared;  // state shared with the stream factories

 private:
  // The file storage for `location`, or null when it is one of this storage's own (jobmanager://).
  CheckpointStorage* files_for(const std::string& location) const;
  bool is_savepoint(CheckpointId id) const;

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<CheckpointStorage> savepoints_;
};

}  // namespace sluice::checkpoint
