// `sluice checkpoint inspect PATH [--json]`: what a retained checkpoint is and what it cost. PATH (a local path,
// file:// or s3:// URI) is a chk-<n>
// folder, a job's checkpoint folder (every chk-<n> in it) or a checkpoint directory (every job folder in it).
// For each checkpoint: its _metadata (id, job, trigger time, type, operators, full and checkpointed size) and,
// when the run persisted them (coordinator/checkpoint_stats_json.h: written best effort next to _metadata after
// it was durable), its statistics: end-to-end, sync, async and alignment durations, start delay, persisted
// in-flight bytes, unaligned or not, and the same per subtask. Then summaries (min, avg, p50, p99, max) over
// the checkpoints that have statistics. A readable table, or with --json one JSON document.
// A chk-<n> folder without _metadata (in progress or aborted when its job stopped) is listed as incomplete.
// Columns are as wide as their widest value; subtasks are listed by vertex and subtask index.
// Exit 0; 1 when a checkpoint's _metadata is damaged, or its statistics file is unreadable, not a regular file,
// not valid statistics or of another checkpoint id (named in `problems`; the checkpoint is listed without
// statistics); 2 when PATH holds no complete checkpoint (no chk-<n> folder, or only incomplete ones).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "fs/file_system_registry.h"
#include "sluice/core/status.h"

namespace sluice::cli {

struct InspectResult {
  nlohmann::json document;  // {"checkpoints": [...], "summary": {...}, "problems": [...]}
  std::string table;        // the readable form
  int exit_code = 0;
};

// kNotFound when PATH holds no complete checkpoint (naming PATH, and the incomplete folders if any);
// kInvalidArgument for a scheme `file_systems` does not serve.
Result<InspectResult> inspect_checkpoints(const std::string& path,
                                          const fs::FileSystemRegistry& file_systems = fs::FileSystemRegistry());

}  // namespace sluice::cli
