// What the JobClient of a TaskManager process adds in cluster mode (docs/cluster.md): failures armed for the
// subtasks the process runs that kill the whole process at their point (runtime/fault_injection.h,
// InjectedFailureEffect::kKillProcess). This is how the failure tests lose a machine at an exact step of the
// checkpoint protocol - between a snapshot and its acknowledgement, between a checkpoint's completion and the
// sinks' commit, during a restore - instead of at a random time.
// Thread-safety: any method from any thread.
#pragma once

#include <cstdint>

#include "runtime/fault_injection.h"
#include "sluice/api/job_client.h"
#include "sluice/core/status.h"

namespace sluice::cluster {

class TaskManagerJobClient : public JobClient {
 public:
  // Arms one kill: the first subtask deployed here, of (vertex, subtask) (-1: any), that reaches `point` - for a
  // checkpoint id >= from_checkpoint_id when that is > 0 - kills this process with SIGKILL, in whichever attempt
  // that happens. kInvalidArgument (naming the point and what it needs) when no subtask of the job can reach it.
  virtual Status arm_process_kill(runtime::FailurePoint point, int32_t vertex, int32_t subtask,
                                  int64_t from_checkpoint_id) = 0;
};

}  // namespace sluice::cluster
