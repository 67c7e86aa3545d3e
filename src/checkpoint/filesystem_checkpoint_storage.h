// FileSystemCheckpointStorage: checkpoints as files under a directory (as in Flink's
// FileSystemCheckpointStorage / FsCheckpointStorageAccess). Layout (docs/checkpoints.md):
//
//   <base_dir>/<job-id>/shared/           created by initialize(); state shared between checkpoints (RocksDB, later)
//   <base_dir>/<job-id>/taskowned/        created by initialize(); state the tasks own
//   <base_dir>/<job-id>/chk-<n>/          created by stream_factory(n): state files + `_metadata`
//   <savepoint-dir>/savepoint-<6 hex>-<12 hex>/   a savepoint (begin_savepoint): its files under plain names, and
//                                         `_metadata`; nothing outside it, so it can be moved or copied
// A job without periodic checkpoints initializes it for savepoints only (initialize_for_savepoints): then nothing
// exists under base_dir, and savepoint folders are all it writes.
//
// The directory may be any path or URI its FileSystem serves (a local path, `file://`, `s3://bucket/prefix`):
// the storage uses only the object-store semantics of fs/file_system.h (files written once under unique names,
// no rename), so the same code is correct on every scheme.
//
// State handles smaller than inline_threshold_bytes go inside `_metadata`; larger ones become a file
// chk-<n>/<name_hint>-<16 hex digits>, published whole and durable. Handles carry the size and XXH3-64 of
// their bytes; read_state checks both. `_metadata` is written last: chk-<n>/ (the state files' names) and the
// job folder (chk-<n>'s name) are synced, `_metadata` is published (durable: fsync before it gets its name),
// then chk-<n>/ is synced for that name. A checkpoint whose write_metadata did not return ok has no
// `_metadata` and is never restored. (On an object store the syncs do nothing; the PUT is durable.)
//
// Entropy injection (fs/entropy_injection.h; Flink's docs, "Entropy injection for S3 file systems"): when the
// base directory's filesystem injects entropy and the directory holds its marker (`s3://b/_entropy_/ck`), the job
// folder, chk-<n>/ and `_metadata` live under the directory without the marker (`s3://b/ck/<job>/chk-<n>/_metadata`),
// and every state data file of a checkpoint - write_state's files, shared and private uploads - is written at the
// path with the marker replaced by random characters (`s3://b/x7k2/ck/<job>/chk-<n>/<name>`). Such a handle records
// that absolute URI instead of a path relative to the job folder, as Flink does, so a checkpoint with entropy is
// not relocatable (savepoints are: they never get entropy). discard(n) deletes the entropy files this run wrote for
// n besides chk-<n>/; discard_location deletes those a claimed checkpoint's `_metadata` names; shared files go as
// before, by the SharedStateRegistry's word (discard_shared_files takes absolute paths too).
//
// discard(n) versus writers of n (stream_factory's mkdir, state files, uploads, `_metadata`): each writer is
// counted in flight, under the storage's mutex, from its "is n discarded?" check to its end. discard(n) marks n
// discarded (no writer enters after that) and removes chk-<n>/ at once; a writer still in flight may yet create
// the folder or a file in it, so the last writer out removes it again, and every writer that finds n discarded
// on leaving removes its own file (a shared upload included) and returns kCancelled. So no chk-<n>/ or file outlives a discard (tests/discard_race_test.cc).
//
// Thread-safety: every method (and every stream factory) may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_storage.h"
#include "fs/file_system_registry.h"
#include "fs/file_system.h"
#include "fs/path.h"
#include "sluice/core/name_source.h"

namespace sluice::checkpoint {

struct FileSystemStorageOptions {
  // execution.checkpointing.data-inline-threshold (Flink's state.storage.fs.memory-threshold): state handles
  // smaller than this many bytes are stored inside `_metadata`; 0 writes every handle to a file. Default 20 KiB;
  // allowed 0 .. 1 MiB (Flink's bound), checked by initialize().
  int64_t inline_threshold_bytes = 20 * 1024;
  // The filesystems by URI scheme: the base directory's, a savepoint folder's and a restored checkpoint's
  // filesystem come from here. Default: the local disk only (plain paths and file://).
  fs::FileSystemRegistry file_systems;
  // Overrides the base directory's filesystem (tests pass a fs::FaultInjectionFileSystem); null: from
  // file_systems. A base directory whose scheme is not supported fails initialize(), naming it.
  std::shared_ptr<fs::FileSystem> file_system;
  // Where the random suffixes of file names and the entropy of data paths come from (sluice/core/name_source.h;
  // streams named after the writing operator subtask and the file's name hint, so a seeded source gives the same
  // names on every run). Null: a random source.
  std::shared_ptr<NameSource> names;
};

inline constexpr int64_t kMaxInlineThresholdBytes = 1024 * 1024;

class FileSystemCheckpointStorage final : public CheckpointStorage {
 public:
  // `base_dir` is execution.checkpointing.dir (created by initialize() if missing); with entropy injection, the
  // directory with the marker (base_dir() then returns it without).
  explicit FileSystemCheckpointStorage(std::string base_dir, FileSystemStorageOptions options = {});
  ~FileSystemCheckpointStorage() override;
  FileSystemCheckpointStorage(const FileSystemCheckpointStorage&) = delete;
  FileSystemCheckpointStorage& operator=(const FileSystemCheckpointStorage&) = delete;

  // Creates <base_dir>/<job-id>/ with shared/ and taskowned/, durably. kInvalidArgument for a bad option,
  // kIOError naming the directory when it cannot be created. Called once per run, before anything else
  // (the others return kFailedPrecondition until then).
  Status initialize(const JobId& job) override;
  // Savepoints only (CheckpointStorage::initialize_for_savepoints): no folder under base_dir (which may be empty)
  // is created; checkpoints are refused (kFailedPrecondition), job_dir() and checkpoint_dir() too.
  Status initialize_for_savepoints(const JobId& job) override;
  // Creates chk-<n>/ on the first call for n (made durable by write_metadata: until then it is an incomplete
  // checkpoint folder, which a crash may take away).
  Result<std::shared_ptr<CheckpointStreamFactory>> stream_factory(CheckpointId id) override;
  // Returns the chk-<n> folder path. kFailedPrecondition if checkpoint n already has `_metadata`, or if the
  // metadata names another job; kInvalidArgument if it is malformed (validate_metadata).
  Result<std::string> write_metadata(const CheckpointMetadata& metadata) override;
  // `location`: a chk-<n> folder or its `_metadata` file, of this job or any other (e.g. a retained one).
  // Works before initialize().
  Result<CheckpointMetadata> read_metadata(const std::string& location) override;
  // File handles are read relative to the parent of `location`'s checkpoint folder. Works before initialize().
  Result<std::vector<uint8_t>> read_state(const std::string& location, const StreamStateHandle& handle) override;
  Status check_restore_files(const std::string& location, const CheckpointMetadata& metadata,
                             RestoreFileCheck check) override;
  Status discard(CheckpointId id) override;
  Result<bool> remove_job_dir_if_empty() override;
  Status record_finished_restore(const std::string& restored_location, int64_t finished_at_ms) override;
  std::string describe() const override;  // "filesystem:/var/ck (state below 20 KiB inline)"

  // Incremental checkpoints: shared files go to <job>/shared/ (CheckpointStreamFactory::write_shared_file).
  bool supports_incremental() const override { return true; }
  Status discard_shared_files(const std::vector<std::string>& relative_paths) override;
  Status discard_location(const std::string& location) override;
  Status write_side_file(const std::string& location, const std::string& name,
                         const std::vector<uint8_t>& bytes) override;
  Result<std::shared_ptr<fs::FileSystem>> file_system(const std::string& path) const override;
  std::optional<std::string> file_path(const std::string& location,
                                             const std::string& relative_path) const override;
  // Same job: unchanged; a job folder beside this job's: "../<job-id>/<path>"; elsewhere: nullopt.
  std::optional<std::string> rebase_shared_path(const std::string& location,
                                                const std::string& relative_path) const override;

  // Savepoint `id` goes to `savepoint_dir` (CheckpointStorage::begin_savepoint); kFailedPrecondition before
  // initialize() or when `id` already has state files.
  Status begin_savepoint(CheckpointId id, const std::string& savepoint_dir) override;
  bool supports_savepoints() const override { return true; }

  const std::string& base_dir() const;
  // <base_dir>/<job-id>; kFailedPrecondition before initialize().
  Result<std::string> job_dir() const;
  // <base_dir>/<job-id>/chk-<n>; kFailedPrecondition before initialize().
  Result<std::string> checkpoint_dir(CheckpointId id) const;

  struct Shared;  // state shared with the stream factories (public only so the .cc's factory can name it)

 private:
  Result<std::string> write_metadata_entered(const CheckpointMetadata& metadata, const std::vector<uint8_t>& bytes,
                                             const std::string& ctx);
  std::shared_ptr<Shared> shared_;
};

}  // namespace sluice::checkpoint
