// Savepoint folders (Flink's savepoint target directory; docs/savepoints.md): where a savepoint goes,
// and disposing of one.
//
// Layout: <target-dir>/savepoint-<first 6 hex digits of the job id>-<12 random hex digits>/ holding the state
// files under plain names and `_metadata`, written last and atomically (FileSystemCheckpointStorage with
// begin_savepoint). Nothing in it refers outside the folder, so it can be moved, copied or renamed and still
// restores (`--restore <folder>`). The engine never deletes a completed savepoint: it belongs to the user, who
// disposes of it with `sluice savepoint dispose`.
//
// Thread-safety: functions; safe to call concurrently on different folders.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "fs/file_system.h"
#include "fs/path.h"
#include "sluice/core/ids.h"
#include "sluice/core/name_source.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

inline constexpr std::string_view kSavepointDirPrefix = "savepoint-";

// "savepoint-<6 hex of job>-<12 hex of random>".
std::string savepoint_dir_name(const JobId& job, uint64_t random);

// The refusal of a savepoint request that names no folder while the job has no default one (Flink's "No savepoint
// directory configured ... state.savepoints.dir"): kInvalidArgument naming both keys.
Status no_savepoint_directory(const std::string& what);

// Creates `target_dir` (with its parents, durably) and a new, empty savepoint folder in it; returns the folder's
// path. The folder's random part is drawn from `names` (stream "savepoint-dir"; null: a random source). Where `fs` injects entropy
// (fs/entropy_injection.h), the marker is removed from `target_dir`: savepoints never get entropy.
// no_savepoint_directory for an empty `target_dir` (no directory given and no default), kIOError naming the
// directory when it cannot be created.
Result<std::string> create_savepoint_dir(fs::FileSystem& fs, const std::string& target_dir, const JobId& job,
                                         NameSource* names = nullptr);

// What dispose_savepoint did.
struct DisposeReport {
  CheckpointId savepoint_id{0};
  int64_t files_deleted = 0;       // state files and `_metadata`
  uint64_t bytes_deleted = 0;
  std::vector<std::string> kept;   // files in the folder the savepoint does not refer to (left alone)
  bool folder_removed = false;     // the folder was empty afterwards and is gone
};

// Deletes the savepoint at `path` (its folder or its `_metadata`): every state file it refers to, then `_metadata`
// (an interrupted dispose leaves a folder without `_metadata`, which is refused by a restore, never half restored),
// then the folder if nothing else is in it. Refuses (kFailedPrecondition)
// a checkpoint (`_metadata` of type CHECKPOINT: the engine's retention owns those) and a `_metadata` that does
// not decode (kCorruption / kNotFound naming it: nothing is deleted). Missing state files are fine (a dispose
// that was interrupted before).
Result<DisposeReport> dispose_savepoint(fs::FileSystem& fs, const std::string& path);

}  // namespace sluice::checkpoint
