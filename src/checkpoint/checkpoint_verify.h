// Verifying retained checkpoints (`sluice checkpoint verify PATH`): for each checkpoint, `_metadata` decodes
// (frame, checksum, version, structure) and every state handle it refers to - the shared and private files of
// incremental handles included - is intact (file present, size and
// XXH3-64 checksum as recorded; inline bytes likewise).
//
// PATH may be a chk-<n> folder or its `_metadata` file (one checkpoint), a job folder <dir>/<job-id> (each chk-<n>
// in it), or a checkpoint directory <dir> (each chk-<n> of each job folder). A chk-<n> without `_metadata` found
// by scanning a folder is reported as incomplete (a checkpoint in progress, aborted, or cut short by a crash;
// never restored) and is not a problem; named directly, it is one.
//
// Thread-safety: functions; safe to call concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "fs/file_system_registry.h"
#include "fs/path.h"
#include "sluice/core/ids.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

struct VerifyProblem {
  std::string file;     // the bad file (state file or `_metadata`), or "<_metadata> (inline)" for inline state
  std::string problem;  // what is wrong, and whose state it is
  bool operator==(const VerifyProblem&) const = default;
};

struct CheckpointVerification {
  std::string location;                      // the chk-<n> folder
  std::optional<CheckpointId> checkpoint_id;  // from the metadata (or the folder name if it does not decode)
  bool incomplete = false;                   // no `_metadata`, found by a folder scan
  uint64_t state_size_bytes = 0;             // as recorded in the metadata
  size_t files_checked = 0;
  size_t inline_handles_checked = 0;
  std::vector<VerifyProblem> problems;
};

struct VerifyReport {
  std::vector<CheckpointVerification> checkpoints;  // by folder path
  bool ok() const { return problem_count() == 0; }
  size_t problem_count() const;
  // One line per checkpoint, one indented line per problem, and a summary line.
  std::string to_string() const;
};

// Errors only when PATH holds no checkpoint at all or only incomplete ones (kNotFound naming it: "no complete
// checkpoint (chk-<n> with _metadata) found under PATH"), or cannot be listed; damage inside a checkpoint is
// reported in the VerifyReport. `file_systems`: the filesystem of PATH's URI scheme (default: the local disk
// only); an unsupported scheme is kInvalidArgument naming it. Where that filesystem injects entropy
// (fs/entropy_injection.h), the marker is removed from PATH first (the checkpoint directory as configured works);
// data files recorded by absolute URI are checked where they are.
Result<VerifyReport> verify_checkpoint(const std::string& path,
                                       const fs::FileSystemRegistry& file_systems = fs::FileSystemRegistry());

}  // namespace sluice::checkpoint
