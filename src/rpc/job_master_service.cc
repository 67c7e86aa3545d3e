#include "rpc/job_master_service.h"

#include <span>
#include <string>

#include <spdlog/spdlog.h>

#include "checkpoint/metadata_codec.h"
#include "rpc/report_codec.h"

namespace sluice::rpc {

void JobMasterService::bind(runtime::TaskListener* listener, runtime::CheckpointResponder* responder,
                            IsCurrent is_current) {
  std::unique_lock lock(mu_);
  target_ = Target{listener, responder, std::move(is_current)};
  std::lock_guard seen(seen_mu_);
  seen_.clear();
}

void JobMasterService::unbind() {
  std::unique_lock lock(mu_);
  target_ = Target{};
  std::lock_guard seen(seen_mu_);
  seen_.clear();
}

bool JobMasterService::first_time(const v1::TaskStateChange& change) {
  std::lock_guard lock(seen_mu_);
  return seen_.insert({change.attempt().vertex(), change.attempt().subtask(), change.attempt().attempt_number(),
                       static_cast<int32_t>(change.event())})
      .second;
}

grpc::Status JobMasterService::admit(const v1::TaskManagerSession& session, const v1::ExecutionAttempt& attempt,
                                     Target* out) const {
  if (session.leader_epoch() != leader_epoch_) {
    return grpc::Status(grpc::StatusCode::ABORTED, "TaskManager '" + session.task_manager_id() +
                                                       "' reported under leader epoch " +
                                                       std::to_string(session.leader_epoch()) +
                                                       ", this JobManager leads epoch " + std::to_string(leader_epoch_));
  }
  if (!target_.listener) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "no job runs on this JobManager yet");
  const runtime::ExecutionAttemptId id = from_proto(attempt);
  const TaskManagerSessionId from{session.leader_epoch(), session.task_manager_id(), session.registration_id()};
  if (!target_.is_current(from, id)) {
    spdlog::debug("dropping a report of {} from TaskManager '{}' (registration {}): not the current attempt there",
                  id.to_string(), from.task_manager_id, from.registration_id);
    *out = Target{};
    return grpc::Status::OK;
  }
  *out = target_;
  return grpc::Status::OK;
}

grpc::Status JobMasterService::UpdateTaskState(grpc::ServerContext*, const v1::TaskStateChange* request,
                                               v1::ReportAccepted*) {
  std::shared_lock lock(mu_);
  Target t;
  if (grpc::Status s = admit(request->session(), request->attempt(), &t); !s.ok() || !t.listener) return s;
  const int32_t vertex = request->attempt().vertex(), subtask = request->attempt().subtask();
  if (!first_time(*request)) return grpc::Status::OK;
  switch (request->event()) {
    case v1::TASK_END_OF_DATA: t.listener->on_task_end_of_data(vertex, subtask); break;
    case v1::TASK_FINISHED: t.listener->on_task_finished(vertex, subtask); break;
    case v1::TASK_CANCELLED: t.listener->on_task_cancelled(vertex, subtask); break;
    case v1::TASK_FAILED: {
      Status cause = from_proto(request->failure());
      if (cause.is_ok()) cause = Status::internal("a task failed without a cause");
      t.listener->on_task_failed(vertex, subtask, cause);
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
  std::shared_lock lock(mu_);
  Target t;
  if (grpc::Status s = admit(request->session(), request->attempt(), &t); !s.ok() || !t.listener) return s;
  const runtime::ExecutionAttemptId id = from_proto(request->attempt());
  const CheckpointId checkpoint(request->checkpoint_id());
  const std::string& bytes = request->subtask_states();
  auto states = checkpoint::decode_subtask_states(
      std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
      "the acknowledgement of checkpoint " + std::to_string(checkpoint.value()) + " by " + id.to_string());
  if (!states.is_ok()) {
    spdlog::warn("{}", states.status().to_string());
    t.responder->decline(checkpoint, id.vertex, id.subtask, states.status());
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, states.status().message());
  }
  t.responder->acknowledge(checkpoint, id.vertex, id.subtask, std::move(*states), from_proto(request->stats()));
  return grpc::Status::OK;
}

grpc::Status JobMasterService::DeclineCheckpoint(grpc::ServerContext*, const v1::DeclineCheckpointRequest* request,
                                                 v1::ReportAccepted*) {
  std::shared_lock lock(mu_);
  Target t;
  if (grpc::Status s = admit(request->session(), request->attempt(), &t); !s.ok() || !t.listener) return s;
  Status reason = from_proto(request->reason());
  if (reason.is_ok()) reason = Status::internal("a checkpoint was declined without a reason");
  const runtime::ExecutionAttemptId id = from_proto(request->attempt());
  t.responder->decline(CheckpointId(request->checkpoint_id()), id.vertex, id.subtask, reason);
  return grpc::Status::OK;
}

}  // namespace sluice::rpc
