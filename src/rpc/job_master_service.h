// JobMasterService: the JobManager's side of the JobMasterGateway (proto/job_master.proto). It hands a
// TaskManager's task reports to the JobMaster through the same interfaces in-process tasks use
// (runtime::TaskListener, runtime::CheckpointResponder), so the JobMaster does not know where its tasks run.
//
// Fencing: a report under another leader epoch is refused with ABORTED (the TaskManager registers again); a report
// from an attempt that is no longer current (`is_current` false: a failover cancelled it) is accepted and dropped, as
// Flink drops updates for unknown ExecutionAttemptIDs. An acknowledgement whose state does not decode declines the
// checkpoint for that subtask (kCorruption), so the checkpoint fails at once instead of at its timeout.
// Thread-safety: gRPC calls it from its threads; `listener`, `responder` and `is_current` must be thread-safe.
#pragma once

#include <cstdint>
#include <functional>

#include <grpcpp/grpcpp.h>

#include "proto/job_master.grpc.pb.h"
#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"
#include "runtime/execution_attempt_id.h"
#include "runtime/stream_task.h"

namespace sluice::rpc {

class JobMasterService final : public v1::JobMasterGateway::Service {
 public:
  // Every pointer must outlive the service.
  JobMasterService(runtime::TaskListener* listener, runtime::CheckpointResponder* responder, uint64_t leader_epoch,
                   std::function<bool(const runtime::ExecutionAttemptId&)> is_current);

  grpc::Status UpdateTaskState(grpc::ServerContext* context, const v1::TaskStateChange* request,
                               v1::ReportAccepted* response) override;
  grpc::Status AcknowledgeCheckpoint(grpc::ServerContext* context, const v1::AcknowledgeCheckpointRequest* request,
                                     v1::ReportAccepted* response) override;
  grpc::Status DeclineCheckpoint(grpc::ServerContext* context, const v1::DeclineCheckpointRequest* request,
                                 v1::ReportAccepted* response) override;

 private:
  // OK when the report counts; ABORTED for another epoch; *drop set for an attempt that is not current.
  grpc::Status admit(const v1::TaskManagerSession& session, const v1::ExecutionAttempt& attempt, bool* drop) const;

  runtime::TaskListener* listener_;
  runtime::CheckpointResponder* responder_;
  const uint64_t leader_epoch_;
  std::function<bool(const runtime::ExecutionAttemptId&)> is_current_;
};

}  // namespace sluice::rpc
