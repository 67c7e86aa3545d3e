// A tool command (`sluice demo`, `sluice nexmark`) started as a TaskManager process of a cluster
// (-D execution.process-role=taskmanager; docs/cluster.md): it builds the same program as the JobManager and serves
// its slots until the JobManager's job ends.
// Thread-safety: called once, from the command's thread.
#pragma once

#include <string>

#include "sluice/api/environment.h"

namespace sluice::cli {

// Runs the program in `env` (named `job_name`, as the JobManager names it) as a TaskManager until the JobManager's
// job ends, the JobManager refuses it, or SIGINT/SIGTERM stops it. `kill_at` ("" for none; --kill-at
// POINT[@CHECKPOINT]): the first subtask here that reaches that failure point - for a checkpoint id >= CHECKPOINT
// when given - kills this process (runtime/fault_injection.h). Returns the exit code: 0 when the job FINISHED, 1
// when it ended otherwise, 2 for a start that failed or a --kill-at it refused (printed on stderr), 128 + signal.
int run_task_manager(StreamExecutionEnvironment& env, const std::string& job_name, const std::string& kill_at);

}  // namespace sluice::cli
