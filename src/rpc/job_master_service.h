// JobMasterService: the JobManager's side of the JobMasterGateway (proto/job_master.proto). It hands a
// TaskManager's task reports to the JobMaster through the same interfaces in-process tasks use
// (runtime::TaskListener, runtime::CheckpointResponder), so the JobMaster does not know where its tasks run.
//
// Fencing: a report under another leader epoch is refused with ABORTED (the TaskManager registers again); a report
// from an attempt that is no longer current, or from another TaskManager registration than the one the attempt was
// deployed to (`is_current` false), is accepted and dropped, as Flink drops updates for unknown ExecutionAttemptIDs. An acknowledgement whose state does not decode declines the
// checkpoint for that subtask (kCorruption), so the checkpoint fails at once instead of at its timeout.
// The service is served before a job runs and bound to the job's JobMaster when it starts (bind); until then, and
// after unbind, reports are refused with UNAVAILABLE (the TaskManager retries).
// Thread-safety: gRPC calls it from its threads; bind/unbind from any thread; the bound `listener`, `responder`
// and `is_current` must be thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <shared_mutex>
#include <tuple>

#include <grpcpp/grpcpp.h>

#include "proto/job_master.grpc.pb.h"
#include "rpc/task_manager_session.h"
#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"
#include "runtime/execution_attempt_id.h"
#include "runtime/stream_task.h"

namespace sluice::rpc {

class JobMasterService final : public v1::JobMasterGateway::Service {
 public:
  explicit JobMasterService(uint64_t leader_epoch) : leader_epoch_(leader_epoch) {}

  // Reports go to `listener` and `responder` from now on, those `is_current` accepts (by the reporting session and
  // attempt). Both pointers must stay valid until unbind() returned.
  using IsCurrent = std::function<bool(const TaskManagerSessionId&, const runtime::ExecutionAttemptId&)>;
  void bind(runtime::TaskListener* listener, runtime::CheckpointResponder* responder, IsCurrent is_current);
  void unbind();

  grpc::Status UpdateTaskState(grpc::ServerContext* context, const v1::TaskStateChange* request,
                               v1::ReportAccepted* response) override;
  grpc::Status AcknowledgeCheckpoint(grpc::ServerContext* context, const v1::AcknowledgeCheckpointRequest* request,
                                     v1::ReportAccepted* response) override;
  grpc::Status DeclineCheckpoint(grpc::ServerContext* context, const v1::DeclineCheckpointRequest* request,
                                 v1::ReportAccepted* response) override;

 private:
  struct Target {
    runtime::TaskListener* listener = nullptr;
    runtime::CheckpointResponder* responder = nullptr;
    IsCurrent is_current;
  };
  // The bound target when the report counts; ABORTED for another epoch, UNAVAILABLE when unbound; a target with a
  // null listener for an attempt that is not current (the report is dropped).
  grpc::Status admit(const v1::TaskManagerSession& session, const v1::ExecutionAttempt& attempt, Target* out) const;

  // A state change delivered twice (a retried call whose first try arrived) counts once: the JobMaster counts
  // finished tasks and ends of data.
  bool first_time(const v1::TaskStateChange& change);

  const uint64_t leader_epoch_;
  mutable std::shared_mutex mu_;  // held shared while a report is handed over, so unbind waits for it
  Target target_;
  std::mutex seen_mu_;
  std::set<std::tuple<int32_t, int32_t, int32_t, int32_t>> seen_;  // (vertex, subtask, attempt, event) delivered
};

}  // namespace sluice::rpc
