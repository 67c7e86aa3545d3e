// The output folder of `sluice demo`: which part files a run may remove, known from a record of the demo's own runs
// kept in that folder. A job never deletes what it did not create: part files of any other job (a user's program
// with the same file sink, writing the same part-<job id>-... names) stay, and a fresh demo run refuses to start
// beside them, since its --verify would count them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_system.h"
#include "fs/file_system_registry.h"
#include "sluice/core/status.h"

namespace sluice::cli {

// The record: in the output folder, one job id a line (32 lowercase hex digits), '#' lines are comments. Written
// whole (FileSystem::write_file publishes atomically on every scheme), before the run's job starts, so the part
// files of a run killed at any point carry a recorded id.
inline constexpr std::string_view kDemoRunsFileName = ".sluice-demo-runs";

// The job ids the record's text lists, in order. kCorruption naming `path` and the line for a line that is neither
// a comment nor a job id.
Result<std::vector<std::string>> parse_demo_runs(std::string_view text, const std::string& path);
// The record's text: a comment saying what the file is, then `job_ids`, one a line.
std::string format_demo_runs(const std::vector<std::string>& job_ids);

// The finished part files (file sink names, is_part_file_name) of a folder's listing, split by job id.
struct OutputCleanup {
  std::vector<std::string> demo_files;     // of a recorded demo run: a fresh run removes them
  std::vector<std::string> foreign_files;  // of any other job: never removed
};
OutputCleanup plan_output_cleanup(const std::vector<fs::DirEntry>& entries,
                                  const std::vector<std::string>& demo_job_ids);

enum class OutputStart : uint8_t {
  kFresh,     // the run starts the output afresh: earlier demo runs' part files are removed
  kRestored,  // the run continues a checkpoint's output (--restore): every part file stays
};

struct DemoOutputRun {
  std::string output_dir;
  std::string checkpoint_dir;  // execution.checkpointing.dir; empty: none
  std::string job_id;          // the run's own, fixed before its job starts ($internal.pipeline.job-id)
  // kRestored: the runs the restored checkpoint descends from (its job id and lineage): a restore commits their
  // pending part files into the folder, under their names.
  std::vector<std::string> restored_job_ids;
  OutputStart start = OutputStart::kFresh;
};

// Prepares the output folder before the run's job starts, on any filesystem the job's configuration serves (a
// local path, file://, s3://). Local checkpoint and output folders are locked first, so a folder a running job
// writes to is refused (naming that job) before anything is read or removed; the job takes the locks again when it
// is submitted. Then the run's ids are added to the record, and a fresh run removes the recorded runs' part files.
// A fresh run beside another job's part files is refused (kFailedPrecondition naming the folder, one such file and
// its job id) with nothing removed and nothing written. Errors name the folder (output or checkpoint).
Status prepare_demo_output(const fs::FileSystemRegistry& file_systems, const DemoOutputRun& run);

}  // namespace sluice::cli
