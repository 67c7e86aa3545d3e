// Names in a checkpoint directory (the seed's section 2.3 layout; docs/checkpoints.md):
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

// "chk-7".
std::string checkpoint_dir_name(CheckpointId id);
// 7 for "chk-7"; nullopt for anything else (including "chk-07", "chk--1", "chk-").
std::optional<CheckpointId> parse_checkpoint_dir_name(std::string_view name);

}  // namespace sluice::checkpoint
