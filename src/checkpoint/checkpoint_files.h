// Reading a checkpoint from its folder: shared by the filesystem storage, `--restore` path resolution and verify.
// Errors name the file: kNotFound for a missing `_metadata` or state file, kCorruption for a damaged one.
// Thread-safety: functions; safe to call concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "fs/file_system.h"
#include "fs/path.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

// Where a checkpoint lives on disk.
struct CheckpointLocation {
  std::string checkpoint_dir;  // the chk-<n> folder
  std::string metadata_path;   // <checkpoint_dir>/_metadata
  std::string base_dir;        // where the handles' relative paths start: the folder's parent (the job directory)
};

// Accepts a checkpoint folder or its `_metadata` file (any regular file is taken as the metadata file).
// kNotFound naming `path` if nothing is there.
Result<CheckpointLocation> locate_checkpoint(fs::FileSystem& fs, const std::string& path);

// Reads and decodes the `_metadata` file. kNotFound naming it when missing; kCorruption naming it when damaged,
// or when a folder named chk-<n> holds the metadata of another checkpoint id. kFailedPrecondition naming the folder
// when a checkpoint whose handles name its own folder ("chk-<n>/...") lies in a folder not named chk-<n> (renamed:
// only savepoints, whose handles are bare file names, restore from any folder name).
Result<CheckpointMetadata> read_checkpoint_metadata(fs::FileSystem& fs, const CheckpointLocation& location);

// Where the file a handle records as `relative_path` is, for the checkpoint (or savepoint) folder `checkpoint_dir`.
// An absolute URI (an entropy-injected data file) is where it says.
// A path with a folder part ("chk-7/x", "shared/y.sst") starts at the folder's parent (the job directory); a bare
// file name starts at the folder itself: savepoints record only bare names (validate_metadata), which is what
// keeps a savepoint folder restorable after it was moved, copied or renamed.
std::string handle_file_path(const std::string& checkpoint_dir, const std::string& relative_path);

// The files of `metadata` (read from `location`) that are its own (not shared with other checkpoints) yet recorded
// as absolute paths, so not below its chk-<n> folder: the entropy-injected data files (checkpoint_layout.h,
// is_absolute_handle_path). Deleting a checkpoint deletes these besides its folder. Only files whose path ends in
// the location's own "<job folder>/chk-<n>/<file>" are listed: the metadata's own job id is not proof, so a
// `_metadata` that names another job's checkpoint files (planted, or copied into this folder) deletes nothing of
// theirs. Sorted, unique.
std::vector<std::string> files_outside_checkpoint_dir(const CheckpointMetadata& metadata,
                                                      const CheckpointLocation& location);

// One handle's bytes: its inline bytes, or its file (handle_file_path of `checkpoint_dir`; may be empty for an
// inline handle). Checks size and checksum: kCorruption naming the file (or "inline state") on mismatch, kNotFound
// naming a missing file.
Result<std::vector<uint8_t>> read_state_handle(fs::FileSystem& fs, const std::string& checkpoint_dir,
                                               const StreamStateHandle& handle);
// An inline handle's bytes, size and checksum checked (kCorruption "inline state" on mismatch);
// kInvalidArgument for a file handle.
Result<std::vector<uint8_t>> read_inline_state_handle(const StreamStateHandle& handle);

// Same checks as read_state_handle, streaming the file instead of keeping its bytes (for verify).
Status check_state_handle(fs::FileSystem& fs, const std::string& checkpoint_dir, const StreamStateHandle& handle);

// How much of each file check_restore_files looks at.
enum class RestoreFileCheck : uint8_t {
  kSizes,      // present, with the recorded size: one stat per file (before every deployment)
  kChecksums,  // also the recorded XXH3-64: reads every byte (after a failure that may be damage)
};

// Checks every file a restore of `metadata` from `checkpoint_dir` (its chk-<n> folder) will read: the state
// files of every handle, the shared and private files of incremental handles included; inline handles by their
// checksum. Restoring damaged bytes can never succeed, so a job checks this before it deploys a restore and fails
// instead of restarting forever. Ok, or the first problem, naming the file, whose state it is and what was
// expected: kNotFound (missing) or kCorruption (size or checksum differs). kIOError if a file cannot be read.
Status check_restore_files(fs::FileSystem& fs, const std::string& checkpoint_dir, const CheckpointMetadata& metadata,
                           RestoreFileCheck check);

}  // namespace sluice::checkpoint
