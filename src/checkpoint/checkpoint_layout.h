// Names in a checkpoint directory (Flink's checkpoint directory layout, docs/checkpoints.md):
//   <checkpoint-dir>/<job-id>/shared/       state shared by several checkpoints (incremental RocksDB, later)
//   <checkpoint-dir>/<job-id>/taskowned/    state owned by the tasks, never deleted by the coordinator
//   <checkpoint-dir>/<job-id>/chk-<n>/      the files of checkpoint n and its `_metadata`
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sluice/core/ids.h"

namespace sluice::checkpoint {

inline constexpr std::string_view kMetadataFileName = "_metadata";
inline constexpr std::string_view kSharedDirName = "shared";
inline constexpr std::string_view kTaskOwnedDirName = "taskowned";
inline constexpr std::string_view kCheckpointDirPrefix = "chk-";
// In a job folder: written when a run that restored a checkpoint FINISHED (restore_path.h, `latest`).
inline constexpr std::string_view kFinishedRestoreFileName = "_finished-restore";

// "chk-7".
std::string checkpoint_dir_name(CheckpointId id);
// 7 for "chk-7"; nullopt for anything else (including "chk-07", "chk--1", "chk-").
std::optional<CheckpointId> parse_checkpoint_dir_name(std::string_view name);

// The checkpoint directory (execution.checkpointing.dir) of the checkpoint folder `chk_folder`
// ("<dir>/<job-id>/chk-<n>", trailing slashes ignored): `<dir>` ("." for a relative "<job-id>/chk-<n>"). For a
// folder outside that layout (a chk-<n> copied elsewhere), the folder holding it.
std::string checkpoint_dir_of(std::string_view chk_folder);

// Whether a handle records its file as an absolute URI ("s3://b/x7k2/ck/<job>/chk-3/f"): the data files of a
// checkpoint written with entropy injection (filesystem_checkpoint_storage.h). Every other handle path is relative.
bool is_absolute_handle_path(std::string_view recorded);
// The file a handle of the job folder `job_dir` records as `recorded`: `recorded` itself when absolute, else
// join_path(job_dir, recorded).
std::string handle_path_in_job(std::string_view job_dir, const std::string& recorded);

}  // namespace sluice::checkpoint
