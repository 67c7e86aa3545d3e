// BatchJob: runs a JobGraph in execution.runtime-mode BATCH (docs/batch.md; Flink's batch scheduling of
// blocking exchanges, our own design) in this process.
//
// The job runs stage by stage (stage_plan.h). A stage's tasks are the ordinary StreamTasks; their network
// outputs feed an ExchangeSpiller that writes one file per (edge, producer subtask, subpartition) under
// `<tmp_dir>/sluice-batch-<job id>/`, and their inputs come from InputReplayers over the previous stages' files
// (sorted by key for keyed heads). No checkpoints, barriers or CheckpointCoordinator. A stage is done when every
// task finished and every output file is committed; the next stage starts then, and the files the stage read are
// deleted.
//
// Failure recovery (Flink's region failover for blocking exchanges): a failed task cancels its stage's tasks;
// after the restart strategy's backoff only that stage runs again - from its sources' start (bounded sources
// replay their whole input; the enumerators start afresh) or from the files of the earlier stages, which stay
// until their consumers' stage finished. Earlier stages never run again (stage_runs() shows it). Once every task
// of the stage finished or pre-committed its sinks, the stage's output is complete and its committables are kept
// (sink_commit_retry.h): a failure after that point does not re-run the stage but retries the commit of exactly
// those committables (BatchStats::commit_retries), so the output counts once. The restart strategy paces both and
// gives up: the job FAILS. A failure no restart can heal, or restart-strategy.max-identical-failures identical
// failures in a row within one stage, fails the job at once (restart/failure_classifier.h).
//
// Lifecycle: CREATED -> RUNNING -> FINISHED / FAILED / CANCELED (cancel() stops the running stage). The job's
// folder is removed when it ends. Thread-safety: the client is thread-safe; one control thread runs the stages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/job_graph.h"
#include "restart/restart_strategy_factory.h"
#include "runtime/fault_injection.h"
#include "runtime/network/network_config.h"
#include "sluice/api/job_client.h"
#include "sluice/api/stream_graph.h"
#include "sluice/core/clock.h"

namespace sluice::batch {

struct ArmedFailure {
  runtime::FailurePoint point = runtime::FailurePoint::kTask;
  int32_t vertex = -1;   // -1: any
  int32_t subtask = -1;  // -1: any
  std::string cause;
};

struct BatchJobConfig {
  runtime::NetworkConfig network;
  std::shared_ptr<Clock> clock;  // null: the system clock
  // The job's filesystems by URI scheme (OperatorSetup::file_systems); null: the local disk only.
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;
  // Where the job id comes from (and so the working folder's name); null: a random source. `job_id` fixes the id
  // itself ($internal.pipeline.job-id).
  std::shared_ptr<NameSource> names;
  std::optional<JobId> job_id;
  std::string tmp_dir = "/tmp";  // io.tmp.dirs (first entry)
  int64_t sort_memory_bytes = 64 << 20;  // execution.sorted-inputs.memory
  int64_t auto_watermark_interval_ms = 200;
  RestartStrategyConfig restart;  // what a failed stage does
  uint64_t jitter_seed = 1;
  // Armed before the first stage starts (runtime/fault_injection.h; kTask, kSource and kKeyedOperator apply, and
  // for tasks with a sink that commits after the stage kBetweenCompletionAndCommit and kAfterCommit - passed in the
  // stage's commit phase and again in each commit retry).
  std::vector<ArmedFailure> failures;
};

struct BatchStats {
  int64_t exchange_bytes_written = 0;  // blocking exchange files, all stages and runs
  int64_t sorted_records = 0;          // records that went through the input sorters, all runs (a re-run sorts again)
  int64_t sort_spilled_runs = 0;       // sorted runs spilled to disk, all runs
  int64_t sort_spilled_bytes = 0;
  int64_t sort_merge_passes = 0;       // intermediate merge passes (more runs than the merge fan-in), all runs
  int64_t sort_peak_memory_bytes = 0;  // the largest in-memory run of any sorter
  int64_t commit_retries = 0;          // commit retries after a failure in a stage's commit phase, all stages
};

class BatchJobClient : public JobClient {
 public:
  // How often each stage ran (1 + its restarts), by stage index; 0 for stages not started yet.
  virtual std::vector<int32_t> stage_runs() const = 0;
  virtual int32_t num_stages() const = 0;
  virtual int32_t stage_of_vertex(int32_t vertex) const = 0;
  // Fault injection (runtime/fault_injection.h) while the job runs: the failure fires in the first matching task
  // that reaches `point` from now on - in the running stage or a later one. kInvalidArgument when no task of the job
  // can reach it (in BATCH: kTask, kSource, kKeyedOperator; kBetweenCompletionAndCommit, kAfterCommit for tasks
  // whose sinks commit after the stage).
  virtual Status arm_failure(runtime::FailurePoint point, int32_t vertex, int32_t subtask, const std::string& cause) = 0;
  virtual std::vector<runtime::InjectedFailure> injected_failures() const = 0;
  virtual BatchStats batch_stats() const = 0;
};

// Checks the job (every source bounded, else kInvalidArgument naming the unbounded ones), then starts it. The
// StreamGraph must outlive the client. `claims`: the job's exclusive claims (cluster/job_claims.h), released when
// the job reaches a terminal state, before wait() returns.
Result<std::unique_ptr<BatchJobClient>> submit_batch_job(std::shared_ptr<const StreamGraph> stream_graph,
                                                         graph::JobGraph job_graph, const BatchJobConfig& config,
                                                         std::vector<std::unique_ptr<HeldClaim>> claims = {});

}  // namespace sluice::batch
