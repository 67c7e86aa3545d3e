#include "rpc/job_master_service.h"

#include <span>
#include <string>

#include <spdlog/spdlog.h>

#include "checkpoint/metadata_codec.h"
#include "rpc/report_codec.h"

namespace sluice::rpc {

JobMasterService::JobMasterService(runtime::TaskListener* listener, runtime::CheckpointResponder* responder,
                                   uint64_t leader_epoch,
                                   std::function<bool(const runtime::ExecutionAttemptId&)> is_current)
    : listener_(listener), responder_(responder), leader_epoch_(leader_epoch), is_current_(std::move(is_current)) {}

grpc::Status JobMasterService::admit(const v1::TaskManagerSession& session, const v1::ExecutionAttempt& attempt,
                                     bool* drop) const {
  if (session.leader_epoch() != leader_epoch_) {
    return grpc::Status(grpc::StatusCode::ABORTED, "TaskManager '" + session.task_manager_id() +
                                                       "' reported under leader epoch " +
                                                       std::to_string(session.leader_epoch()) +
                                                       ", this JobManager leads epoch " + std::to_string(leader_epoch_));
  }
  const runtime::ExecutionAttemptId id = from_proto(attempt);
  *drop = !is_current_(id);
  if (*drop) spdlog::debug("dropping a report of {}: not the current attempt", id.to_string());
  return grpc::Status::OK;
}

grpc::Status JobMasterService::UpdateTaskState(grpc::ServerContext*, const v1::TaskStateChange* request,
                                               v1::ReportAccepted*) {
  bool drop = false;
  if (grpc::Status s = admit(request->session(), request->attempt(), &drop); !s.ok() || drop) return s;
  const int32_t vertex = request->attempt().vertex(), subtask = request->attempt().subtask();
  switch (request->event()) {
    case v1::TASK_END_OF_DATA: listener_->on_task_end_of_data(vertex, subtask); break;
    case v1::TASK_FINISHED: listener_->on_task_finished(vertex, subtask); break;
    case v1::TASK_CANCELLED: listener_->on_task_cancelled(vertex, subtask); break;
    case v1::TASK_FAILED: {
      Status cause = from_proto(request->failure());
      if (cause.is_ok()) cause = Status::internal("a task failed without a cause");
      listener_->on_task_failed(vertex, subtask, cause);
      break;
    }
    default:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "unknown task event " + std::to_string(static_cast<int>(request->event())));
  }
  return grpc::Status::OK;
}

grpc::Status JobMasterService::AcknowledgeCheckpoint(grpc::ServerContext*,
                                                     const v1::AcknowledgeCheckpointRequest* request,
                                                     v1::ReportAccepted*) {
  bool drop = false;
  if (grpc::Status s = admit(request->session(), request->attempt(), &drop); !s.ok() || drop) return s;
  const runtime::ExecutionAttemptId id = from_proto(request->attempt());
  const CheckpointId checkpoint(request->checkpoint_id());
  const std::string& bytes = request->subtask_states();
  auto states = checkpoint::decode_subtask_states(
      std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
      "the acknowledgement of checkpoint " + std::to_string(checkpoint.value()) + " by " + id.to_string());
  if (!states.is_ok()) {
    spdlog::warn("{}", states.status().to_string());
    responder_->decline(id.vertex.value(), id.subtask.value(), checkpoint, states.status());
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, states.status().message());
  }
  responder_->acknowledge(id.vertex.value(), id.subtask.value(), checkpoint, std::move(*states),
                          from_proto(request->stats()));
  return grpc::Status::OK;
}

grpc::Status JobMasterService::DeclineCheckpoint(grpc::ServerContext*, const v1::DeclineCheckpointRequest* request,
                                                 v1::ReportAccepted*) {
  bool drop = false;
  if (grpc::Status s = admit(request->session(), request->attempt(), &drop); !s.ok() || drop) return s;
  Status reason = from_proto(request->reason());
  if (reason.is_ok()) reason = Status::internal("a checkpoint was declined without a reason");
  responder_->decline(request->attempt().vertex(), request->attempt().subtask(), CheckpointId(request->checkpoint_id()),
                      reason);
  return grpc::Status::OK;
}

}  // namespace sluice::rpc
