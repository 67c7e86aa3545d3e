// Savepoints of a running job from the program itself: Flink's JobClient#triggerSavepoint and
// JobClient#stopWithSavepoint (docs/savepoints.md). For a job started with StreamExecutionEnvironment::
// execute_async(); `sluice savepoint JOB DIR` and `sluice stop JOB --savepoint-dir DIR` do the same from another
// process, through the job's REST endpoint.
//
//   auto job = env.execute_async("my-job");
//   ...
//   auto folder = sluice::stop_with_savepoint(**job, "/var/lib/my-job/savepoints");   // FINISHED; restore with
//   // --restore *folder (or execution.state-recovery.path) in the changed program
//
// A savepoint is aligned, self-contained, commits no side effects by itself (a stop's sinks commit on it) and is
// never deleted by the job. Every STREAMING job takes them, with or without periodic checkpoints
// (execution.checkpointing.interval 0 keeps the coordinator, without periodic trigger, as in Flink). Both functions
// block until the request ended, or `timeout_ms` passed.
// Errors: kInvalidArgument for an empty target_dir while the job has no execution.checkpointing.savepoint-dir
// (state.savepoints.dir); kFailedPrecondition for a BATCH job (it takes none), a job that is not RUNNING, a stop
// already in progress, a task that already finished (its input ended), or a refusal of the coordinator; kIOError
// when the folder cannot be created; kTimeout when timeout_ms passed first (the request goes on: the savepoint may
// still complete); otherwise the reason the savepoint failed.
// Thread-safety: call from any thread while the JobClient lives; one stop at a time.
#pragma once

#include <cstdint>
#include <string>

#include "sluice/api/job_client.h"
#include "sluice/core/status.h"

namespace sluice {

// CANONICAL: portable (restores into another state backend, and with --rehash-key-groups at another max
// parallelism). NATIVE: the state backend's own files (faster to take and restore; the same backend only).
enum class SavepointFormat { kCanonical, kNative };

struct SavepointOptions {
  SavepointFormat format = SavepointFormat::kCanonical;
  int64_t timeout_ms = 600'000;
};

// Takes a savepoint into a new folder savepoint-<job id prefix>-<random> under `target_dir` (created if missing;
// empty: the job's execution.checkpointing.savepoint-dir) and returns that folder once it completed. The job runs on.
[[nodiscard]] Result<std::string> trigger_savepoint(JobClient& job, const std::string& target_dir,
                                                    const SavepointOptions& options = {});

// Stop-with-savepoint: the sources stop (with `drain`: their input ends first - windows and timers fire), a final
// savepoint is taken, the sinks commit on it and the job FINISHES; returns the folder once the job finished. If the
// savepoint fails the stop fails: without drain the job runs on. Without periodic checkpoints a drained job's sinks
// commit when the input ends, before the savepoint (as without checkpointing).
[[nodiscard]] Result<std::string> stop_with_savepoint(JobClient& job, const std::string& target_dir, bool drain = false,
                                                      const SavepointOptions& options = {});

}  // namespace sluice
