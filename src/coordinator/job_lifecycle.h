// JobLifecycle: the status of one job run as an explicit state machine, and its result once terminal. Every job
// runner (the streaming job of the MiniCluster, the BATCH job) moves its status only through it, so each state
// means the same everywhere and a caller cannot, say, finish a job that is restarting.
//
// The transitions are Flink's (docs "Jobs and Scheduling", JobStatus):
//   CREATED    -> RUNNING
//   RUNNING    -> RESTARTING | FAILING | CANCELLING | FINISHED
//   RESTARTING -> RUNNING | FAILING | CANCELLING      (the restart strategy gave up; cancelled during the backoff)
//   FAILING    -> FAILED
//   CANCELLING -> CANCELED
// FINISHED, FAILED and CANCELED are terminal (is_globally_terminal). Unlike Flink, a failure that will be
// restarted goes RUNNING -> RESTARTING directly, and FAILING always ends in FAILED (the restart strategy is asked
// while RESTARTING, with the failed attempt's tasks already cancelled).
//
// Thread-safety: all members are thread-safe; status() and the waits may be called from any thread while one
// control thread moves the status.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "sluice/api/job_client.h"
#include "sluice/api/job_run_meter.h"
#include "sluice/core/clock.h"
#include "sluice/core/status.h"

namespace sluice::coordinator {

class JobLifecycle {
 public:
  // `clock`: the job's clock (its monotonic time measures the run; required). `job_name`: for messages. The run's
  // wall clock and CPU time (JobExecutionResult) start here: construct it when the job is submitted.
  JobLifecycle(JobId job_id, std::string job_name, std::shared_ptr<Clock> clock);

  // Whether Flink's state machine (above) allows `from` -> `to`.
  static bool allowed(JobStatus from, JobStatus to);

  JobStatus status() const;

  // CREATED -> RUNNING, once the first attempt is deployed.
  [[nodiscard]] Status start();

  // Moves to a non-terminal state. kFailedPrecondition naming both states when the move is not allowed (the
  // status stays); kInvalidArgument for a terminal `next` (use terminate).
  [[nodiscard]] Status transition(JobStatus next);

  // Ends the run in `terminal` (FINISHED, FAILED or CANCELED), passing through FAILING or CANCELLING when the job is
  // not there yet, records the result (`error`: why it failed, else ok) and wakes every waiter. The job always ends
  // up terminal, so no waiter hangs; kFailedPrecondition when the path was not allowed (logged; a runner's bug),
  // or when the job was terminal already (then nothing changes); kInvalidArgument for a non-terminal `terminal`.
  [[nodiscard]] Status terminate(JobStatus terminal, Status error);

  // Blocks until the job is terminal; returns its result.
  JobExecutionResult wait() const;
  // Waits up to `timeout` for a terminal state; true once terminal.
  bool wait_terminal_for(std::chrono::nanoseconds timeout) const;

 private:
  Status move_locked(JobStatus next);  // mu_ held

  const JobId job_id_;
  const std::string job_name_;
  const std::shared_ptr<Clock> clock_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  JobStatus status_ = JobStatus::kCreated;
  JobRunMeter run_meter_;
  JobExecutionResult result_;
};

}  // namespace sluice::coordinator
