// The commit retry of a BATCH stage (docs/batch.md, "Failure recovery"; Flink's committer recovery, our own code).
//
// Once every task of a stage finished or pre-committed (TaskDeployment::batch_commit_after_stage), the
// committables are durable - the job keeps what each sink's snapshot returned (runtime::BatchPrecommit), as a
// completed checkpoint keeps them in STREAMING. A failure after that point (a sink whose commit throws, any task
// failing while the sinks commit) does not re-run the stage: the job retries the commit of exactly those
// committables, as a restore from a checkpoint does. For each task that had not finished, a fresh instance of each
// of its sinks is set up as that subtask, restores the snapshot's operator state and opens -
// TwoPhaseCommitSinkOperator commits its restored committables there (committing a committed one is a no-op),
// WriteAheadSinkOperator writes the batches whose marker is missing - and closes. No records, no other operator
// of the chain, no exchange output: the stage's data output was complete before the commit phase began.
//
// Errors: the first sink that throws (also an injected kBetweenCompletionAndCommit / kAfterCommit failure of that
// task) ends the retry with its error; the caller asks the restart strategy and retries again. Thread-safety: one
// call at a time per task; runs on the caller's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/job_graph.h"
#include "runtime/fault_injection.h"
#include "runtime/stream_task.h"
#include "sluice/api/stream_graph.h"
#include "sluice/core/clock.h"
#include "sluice/metrics/metric_group.h"

namespace sluice::batch {

// One task whose sinks must commit again.
struct TaskCommits {
  int32_t vertex = -1;
  int32_t subtask = 0;
  KeyGroupRange key_group_range;
  std::vector<runtime::BatchPrecommit> sinks;
};

struct CommitRetryContext {
  const StreamGraph* stream_graph = nullptr;
  const graph::JobGraph* job_graph = nullptr;
  const Clock* clock = nullptr;
  MetricGroup* job_metrics = nullptr;
  std::string job_id;                            // the run's JobId (hex): the sinks name their artifacts by it
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;  // the job's filesystems (null: local disk only)
  int32_t attempt_number = 0;                    // for TaskInfo and recorded injected failures
  runtime::FaultInjector* fault_injector = nullptr;  // null: none
};

Status retry_sink_commits(const CommitRetryContext& ctx, const TaskCommits& task);

}  // namespace sluice::batch
