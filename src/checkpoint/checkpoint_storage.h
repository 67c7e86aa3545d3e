// CheckpointStorage: where checkpoint state and metadata go (Flink's CheckpointStorage and
// CheckpointStorageAccess; DESIGN.md section 3 "Checkpoint storage").
//
// Two implementations: FileSystemCheckpointStorage (<dir>/<job-id>/{shared/, taskowned/, chk-<n>/_metadata}; state
// files in chk-<n>/; state below the inline threshold inside _metadata; _metadata written last and published
// atomically through the FileSystem of the directory's scheme: local disk or S3) and JobManagerCheckpointStorage (everything in memory;
// a handle over max_state_size_bytes fails that checkpoint, naming the operator and the size).
//
// Thread-safety: every method may be called from any thread (tasks write state from their async threads
// while the coordinator writes metadata).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_metadata.h"
#include "fs/file_system.h"
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

  // Incremental snapshots (CheckpointStorage::supports_incremental()): upload a local file, never inline.
  // write_shared_file puts it into the job's shared/ folder as "<name_hint>-<16 hex><extension of local_path>"
  // (unique: SST names repeat
  // across subtasks and restores); the handle's path is "shared/<name>". If this checkpoint is aborted before it
  // completes, discard(n) deletes the shared files it uploaded (other checkpoints never refer to them: a backend
  // reuses only files of completed checkpoints). write_private_file puts it into the checkpoint's own folder.
  // For a savepoint (begin_savepoint; native format) both put the file into the savepoint's folder under a plain
  // name: it never refers to shared/.
  // Both: published whole (fs::FileSystem::copy_local_file) and durable; kCancelled if the checkpoint was discarded meanwhile
  // (the file is then removed); the default implementation returns kFailedPrecondition.
  virtual Result<StreamStateHandle> write_shared_file(const std::string& owner, const std::string& /*name_hint*/,
                                                      const std::string& /*local_path*/) {
    return no_incremental(owner);
  }
  virtual Result<StreamStateHandle> write_private_file(const std::string& owner, const std::string& /*name_hint*/,
                                                       const std::string& /*local_path*/) {
    return no_incremental(owner);
  }

 private:
  static Status no_incremental(const std::string& owner) {
    return Status::failed_precondition(owner + ": this checkpoint storage cannot hold incremental snapshots (use a "
                                               "filesystem checkpoint storage, or full snapshots)");
  }
};

class CheckpointStorage {
 public:
  virtual ~CheckpointStorage() = default;
  // Creates the job's folders (for the filesystem storage: shared/, taskowned/ and nothing else yet).
  virtual Status initialize(const JobId& job) = 0;
  // Instead of initialize(), for a job without periodic checkpoints that may still take savepoints (Flink's
  // storage without a checkpoint directory): creates nothing - a savepoint writes into its own folder
  // (begin_savepoint) - and refuses checkpoints (stream_factory and write_metadata of an id that is no savepoint:
  // kFailedPrecondition). remove_job_dir_if_empty() then returns false. A storage that cannot write savepoints:
  // kFailedPrecondition.
  virtual Status initialize_for_savepoints(const JobId& /*job*/) {
    return Status::failed_precondition("checkpoint storage " + describe() +
                                       " cannot write savepoints (savepoints need a filesystem checkpoint storage)");
  }
  virtual Result<std::shared_ptr<CheckpointStreamFactory>> stream_factory(CheckpointId id) = 0;
  // Makes a checkpoint complete: durable `_metadata`, written last and atomically. Returns its location
  // (the chk-<n> folder path, or "jobmanager://<job>/<n>").
  virtual Result<std::string> write_metadata(const CheckpointMetadata& metadata) = 0;
  // Reads a completed checkpoint's metadata by the location write_metadata returned (or a user-given path).
  virtual Result<CheckpointMetadata> read_metadata(const std::string& location) = 0;
  // Reads one state handle's bytes (files relative to the checkpoint's job directory), checking size and
  // checksum; kCorruption naming the file otherwise.
  virtual Result<std::vector<uint8_t>> read_state(const std::string& location, const StreamStateHandle& handle) = 0;
  // Before a restore of `metadata` from `location` is deployed: are the files it will read there, intact as far
  // as `check` looks (checkpoint_files.h, check_restore_files)? The default (state held in memory): Ok.
  virtual Status check_restore_files(const std::string& /*location*/, const CheckpointMetadata& /*metadata*/,
                                     RestoreFileCheck /*check*/) {
    return Status::ok();
  }
  // Deletes a checkpoint's folder and files (completed, aborted or subsumed). Idempotent. The id stays
  // discarded: a subtask still writing it (its asynchronous part outlived an abort) gets kCancelled from
  // stream_factory(id) and from its factory's writes, and leaves no file behind.
  virtual Status discard(CheckpointId id) = 0;
  // At job end, after its checkpoints were discarded: removes the job's folder (<dir>/<job-id>/ with its
  // shared/ and taskowned/) if nothing else is left in it. True if removed; false if something remains (a
  // retained checkpoint, files in shared/ or taskowned/; a `_finished-restore` record stays, alone) or it did not
  // exist.
  virtual Result<bool> remove_job_dir_if_empty() = 0;
  // At the end of a run that restored `restored_location` and FINISHED (its input processed, its output
  // committed): records that in the job's folder (`_finished-restore`, which keeps the folder), so `--restore
  // latest` does not pick that checkpoint again and process its input a second time (restore_path.h). Call before
  // the job-end cleanup. The default (nothing kept on disk): Ok, nothing recorded.
  virtual Status record_finished_restore(const std::string& /*restored_location*/, int64_t /*finished_at_ms*/) {
    return Status::ok();
  }
  virtual std::string describe() const = 0;  // for logs: "filesystem:/var/ck" / "jobmanager (max 5 MiB)"
  // True when checkpoints live in this process's memory (JobManager storage): no other process can read them, and
  // nothing survives the process. Savepoints may still go to files (supports_savepoints).
  virtual bool keeps_checkpoints_in_memory() const { return false; }

  // ---- incremental checkpoints (shared files; the defaults are those of a storage without them) ----
  // True when the stream factories implement write_shared_file / write_private_file.
  virtual bool supports_incremental() const { return false; }
  // Deletes shared files (paths relative to this job's directory, as handles record them); missing files are
  // fine. Called with what the SharedStateRegistry says nobody refers to any more.
  virtual Status discard_shared_files(const std::vector<std::string>& /*relative_paths*/) { return Status::ok(); }
  // Deletes the folder of a completed checkpoint of another job that this job claimed (CLAIM restore mode) once
  // it is subsumed. kFailedPrecondition by default.
  virtual Status discard_location(const std::string& location) {
    return Status::failed_precondition("checkpoint storage " + describe() + " cannot delete the checkpoint at '" +
                                       location + "'");
  }
  // The path, relative to this job's directory, of a shared file that the checkpoint at `location` (of this
  // or another job) records as `relative_path`; nullopt when this job cannot refer to it with a relative path
  // (another checkpoint directory). Lets a job reuse the files of a checkpoint it claimed.
  // The path, in file_system(location), of the file a handle of the checkpoint at `location` records as
  // `relative_path` (restoring incremental state copies it from there); nullopt for a storage without files.
  virtual std::optional<std::string> file_path(const std::string& /*location*/,
                                               const std::string& /*relative_path*/) const {
    return std::nullopt;
  }
  // The filesystem that serves `path` (a checkpoint location, a savepoint target directory): local disk, S3.
  // kInvalidArgument for a path of an unsupported scheme; kFailedPrecondition for a storage without files.
  virtual Result<std::shared_ptr<fs::FileSystem>> file_system(const std::string& path) const {
    return Status::failed_precondition("checkpoint storage " + describe() + " holds no files (asked for '" + path +
                                       "')");
  }
  // Writes a small file `name` into the folder of the completed checkpoint at `location`, next to its
  // _metadata (not synced; never part of the checkpoint's validity: a restore and verify ignore it). Used for
  // the checkpoint's statistics. A storage without files keeps nothing (ok).
  virtual Status write_side_file(const std::string& /*location*/, const std::string& /*name*/,
                                 const std::vector<uint8_t>& /*bytes*/) {
    return Status::ok();
  }
  virtual std::optional<std::string> rebase_shared_path(const std::string& /*location*/,
                                                        const std::string& /*relative_path*/) const {
    return std::nullopt;
  }

  // ---- savepoints (Flink's savepoint target directory) ----
  // Checkpoint `id` is a savepoint to be written into `savepoint_dir` (an existing, empty folder: savepoint_files.h,
  // create_savepoint_dir) instead of this job's chk-<id>/: its state files go there under plain file names, and
  // write_metadata puts its `_metadata` there (last, atomically) and returns that folder; discard(id) removes the
  // folder (an aborted savepoint leaves nothing). Called before any stream_factory(id). A storage without files
  // (supports_savepoints() false): kFailedPrecondition.
  virtual bool supports_savepoints() const { return false; }
  virtual Status begin_savepoint(CheckpointId id, const std::string& savepoint_dir) {
    return Status::failed_precondition("checkpoint storage " + describe() + " cannot write savepoint " +
                                       std::to_string(id.value()) + " to '" + savepoint_dir +
                                       "' (savepoints need execution.checkpointing.dir: a filesystem checkpoint storage)");
  }
};

}  // namespace sluice::checkpoint
