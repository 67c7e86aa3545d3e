// Resolving `--restore PATH|latest` (execution.state-recovery.path) to one completed checkpoint.
//
// `latest` is the highest-id chk-<n> with a `_metadata` file under <checkpoint_dir>/*/ (across the folders of
// every run of the job; a restored run continues at the restored id + 1, so the newest chain wins). Folders
// without `_metadata` (in progress, aborted, or cut short by a crash) are not complete and are skipped. If the
// highest one's `_metadata` is corrupt the resolution fails loudly, naming the file: it never falls back to an
// older checkpoint silently (the user can pass that one explicitly). Several runs with the same highest id:
// the one triggered last (trigger timestamp, then folder name) wins. A checkpoint that a run restored and then
// FINISHED with (its job folder holds `_finished-restore` naming it) is refused: that run processed its input to the
// end and committed the output, so restoring it again would process the same input a second time (duplicates in
// an exactly-once sink). The user passes it explicitly to do that on purpose.
//
// Thread-safety: functions; safe to call concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint_metadata.h"
#include "fs/file_system.h"
#include "fs/file_system_registry.h"
#include "fs/path.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

inline constexpr std::string_view kRestoreLatest = "latest";

struct RestorePoint {
  std::string location;  // the chk-<n> folder (pass to CheckpointStorage::read_metadata / read_state)
  CheckpointMetadata metadata;
};

// `path_or_latest`: "latest", a chk-<n> folder, or its `_metadata` file. `checkpoint_dir`:
// execution.checkpointing.dir (only used for "latest"). `file_systems`: the filesystem of each path's URI scheme
// (default: the local disk only); an unsupported scheme is kInvalidArgument naming it.
// Errors: kInvalidArgument ("latest" without a checkpoint dir), kNotFound (nothing there, or no completed
// checkpoint), kCorruption / kFailedPrecondition (the chosen `_metadata` does not decode), each naming the path.
// An empty `path_or_latest` is an error (kInvalidArgument): "start fresh" is the option left unset, never an
// empty value. A job folder (<dir>/<job-id>, chk-<n> folders inside) or a checkpoint directory (job folders
// inside) is kInvalidArgument saying which it is and suggesting 'latest' or a chk-<n> folder.
// `input_name`: how errors about an explicit path name the input the user gave ("--restore", or a command's
// positional PATH).
Result<RestorePoint> resolve_restore_path(const std::string& path_or_latest, const std::string& checkpoint_dir,
                                          const fs::FileSystemRegistry& file_systems = fs::FileSystemRegistry(),
                                          const std::string& input_name = "--restore");

// What `_finished-restore` records: the checkpoint a run restored (as it was given, a chk-<n> folder) and when the
// run finished (wall clock, ms since the epoch). Text: "restored <location>\nfinished_at_ms <ms>\n".
struct FinishedRestore {
  std::string restored_location;
  int64_t finished_at_ms = 0;
};
std::string format_finished_restore(const FinishedRestore& record);
// nullopt for text that is not such a record.
std::optional<FinishedRestore> parse_finished_restore(std::string_view text);

// Compares the job properties a checkpoint recorded (CheckpointMetadata::properties, set from the job's
// properties, e.g. the demo's "demo.seed") with those of the job about to restore it. kFailedPrecondition
// naming every key that differs with both values (a key on one side only differs too); Ok when equal.
Status check_restore_properties(const CheckpointMetadata& metadata, const std::map<std::string, std::string>& job);

}  // namespace sluice::checkpoint
