// LocalRecoveryStorage: task-local recovery (Flink's execution.state-recovery.from-local, docs/cluster.md "Local
// recovery"). A CheckpointStorage that wraps the job's own (the primary copy: a shared folder or s3://) and keeps a
// second copy of every state file this process's tasks write on local disk, under taskmanager.state.local.root-dirs.
// A task restored in the same process - the MiniCluster, or a TaskManager whose slot the job gets again - reads its
// state from the local copy, and from checkpoint storage when the copy is missing or damaged (its size or XXH3-64
// differs from the handle's: the same check the primary copy gets). The primary copy alone makes a checkpoint
// complete and valid; the local one is only a faster read, never trusted without that check.
//
// What is copied: the files write_state makes (keyed and operator state of full snapshots, in-flight data of
// unaligned checkpoints). Not copied: state inlined into `_metadata`, savepoints, and the files of incremental
// RocksDB snapshots (those restore from checkpoint storage).
//
// Layout: <local dir>/chk-<n>/<16 hex: XXH3 of the handle's path>. The local directory belongs to this object: it is
// created empty (kFailedPrecondition if it exists: another process's copies are never taken over or deleted) and
// removed with everything in it on destruction. A process killed outright leaves its directory behind (named with
// its pid: sluice-local-state-<pid>-<random> when made from the configuration); nothing else deletes it. A stream
// factory may outlive the storage: its writes then go to checkpoint storage only. Copies of the `retained_checkpoints` newest checkpoints this process
// wrote are kept (the one a restore needs is the latest completed: a newer one may still be pending or have failed);
// older ones, and a discarded checkpoint's, are deleted.
//
// Thread-safety: every method may be called from any thread (one internal mutex guards the index; file I/O runs
// outside it).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_storage.h"

namespace sluice::checkpoint {

// How the reads of non-inline state went since the storage was made.
struct LocalRecoveryStats {
  int64_t local_reads = 0;     // served by a local copy that passed the size and checksum check
  int64_t fallback_reads = 0;  // a local copy existed but was missing or damaged: read from checkpoint storage
  int64_t remote_reads = 0;    // no local copy (another process wrote it, a savepoint, an old checkpoint)
  int64_t copies_written = 0;
};

class LocalRecoveryStorage final : public CheckpointStorage,
                                   public std::enable_shared_from_this<LocalRecoveryStorage> {
 public:
  // `primary`: the job's checkpoint storage (required). `local_fs`: the file system of `local_dir` (local disk), a
  // directory to create for the copies (with its missing parents). `retained_checkpoints` >= 1. kInvalidArgument /
  // kFailedPrecondition / kIOError naming the directory.
  static Result<std::shared_ptr<LocalRecoveryStorage>> create(std::shared_ptr<CheckpointStorage> primary,
                                                              std::shared_ptr<fs::FileSystem> local_fs,
                                                              std::string local_dir, int32_t retained_checkpoints = 3);
  ~LocalRecoveryStorage() override;  // removes the local directory

  const std::string& local_dir() const { return local_dir_; }
  LocalRecoveryStats stats() const;

  Status initialize(const JobId& job) override { return primary_->initialize(job); }
  Status initialize_for_savepoints(const JobId& job) override { return primary_->initialize_for_savepoints(job); }
  Result<std::shared_ptr<CheckpointStreamFactory>> stream_factory(CheckpointId id) override;
  Result<std::string> write_metadata(const CheckpointMetadata& metadata) override {
    return primary_->write_metadata(metadata);
  }
  Result<CheckpointMetadata> read_metadata(const std::string& location) override {
    return primary_->read_metadata(location);
  }
  Result<std::vector<uint8_t>> read_state(const std::string& location, const StreamStateHandle& handle) override;
  Status check_restore_files(const std::string& location, const CheckpointMetadata& metadata,
                             RestoreFileCheck check) override {
    return primary_->check_restore_files(location, metadata, check);
  }
  Status discard(CheckpointId id) override;
  Result<bool> remove_job_dir_if_empty() override { return primary_->remove_job_dir_if_empty(); }
  Status record_finished_restore(const std::string& restored_location, int64_t finished_at_ms) override {
    return primary_->record_finished_restore(restored_location, finished_at_ms);
  }
  std::string describe() const override;
  bool supports_incremental() const override { return primary_->supports_incremental(); }
  Status discard_shared_files(const std::vector<std::string>& relative_paths) override {
    return primary_->discard_shared_files(relative_paths);
  }
  Status discard_location(const std::string& location) override { return primary_->discard_location(location); }
  std::optional<std::string> file_path(const std::string& location, const std::string& relative_path) const override {
    return primary_->file_path(location, relative_path);
  }
  Result<std::shared_ptr<fs::FileSystem>> file_system(const std::string& path) const override {
    return primary_->file_system(path);
  }
  Status write_side_file(const std::string& location, const std::string& name,
                         const std::vector<uint8_t>& bytes) override {
    return primary_->write_side_file(location, name, bytes);
  }
  std::optional<std::string> rebase_shared_path(const std::string& location,
                                                const std::string& relative_path) const override {
    return primary_->rebase_shared_path(location, relative_path);
  }
  bool supports_savepoints() const override { return primary_->supports_savepoints(); }
  bool keeps_checkpoints_in_memory() const override { return primary_->keeps_checkpoints_in_memory(); }
  Status begin_savepoint(CheckpointId id, const std::string& savepoint_dir) override;

 private:
  class Factory;
  LocalRecoveryStorage(std::shared_ptr<CheckpointStorage> primary, std::shared_ptr<fs::FileSystem> local_fs,
                       std::string local_dir, int32_t retained);
  // Writes the local copy of `handle` (checkpoint `id`) and records it; a failure only costs the copy (logged).
  void keep_copy(CheckpointId id, const StreamStateHandle& handle, const std::vector<uint8_t>& bytes);
  // Deletes the copies of `ids` from the index and the disk.
  void drop(const std::vector<int64_t>& ids);

  const std::shared_ptr<CheckpointStorage> primary_;
  const std::shared_ptr<fs::FileSystem> local_fs_;
  const std::string local_dir_;
  const int32_t retained_;

  mutable std::mutex mu_;
  std::map<std::string, std::pair<int64_t, std::string>> copies_;  // handle path -> (checkpoint id, local file)
  std::set<int64_t> checkpoints_;  // ids with copies, or being written
  std::set<int64_t> savepoints_;   // ids that are savepoints: not copied
  std::atomic<int64_t> local_reads_{0}, fallback_reads_{0}, remote_reads_{0}, copies_written_{0};
};

}  // namespace sluice::checkpoint
