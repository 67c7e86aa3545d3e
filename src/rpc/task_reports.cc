#include "rpc/task_reports.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "checkpoint/metadata_codec.h"
#include "proto/job_master.grpc.pb.h"
#include "rpc/report_codec.h"

namespace sluice::rpc {

struct TaskReports::Impl {
  std::unique_ptr<v1::JobMasterGateway::Stub> stub;
  TaskManagerSessionId session;
  int32_t attempt_number;
  int64_t report_timeout_ms;
  std::function<void()> before_finished;
  std::atomic<bool> abandoned{false};

  void fill(v1::TaskManagerSession* s) const {
    s->set_leader_epoch(session.leader_epoch);
    s->set_task_manager_id(session.task_manager_id);
    s->set_registration_id(session.registration_id);
  }
  runtime::ExecutionAttemptId attempt(int32_t vertex, int32_t subtask) const {
    return runtime::ExecutionAttemptId{JobVertexId(vertex), SubtaskIndex(subtask), attempt_number};
  }

  // Calls `call` (one RPC with its own context) until it succeeds, is refused, or report_timeout_ms passed.
  void deliver(const std::string& what, const std::function<grpc::Status(grpc::ClientContext*)>& call) const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(report_timeout_ms);
    grpc::Status s;
    while (true) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(std::min<int64_t>(report_timeout_ms, 10'000)));
      s = call(&ctx);
      if (s.ok()) return;
      const bool retry = s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
      if (!retry || abandoned.load() || std::chrono::steady_clock::now() >= give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    spdlog::warn("TaskManager '{}': {} was not delivered to the JobMaster: {}", session.task_manager_id, what,
                 s.error_message());
  }

  void state_change(int32_t vertex, int32_t subtask, v1::TaskEvent event, const Status* failure) const {
    v1::TaskStateChange req;
    fill(req.mutable_session());
    to_proto(attempt(vertex, subtask), req.mutable_attempt());
    req.set_event(event);
    if (failure) to_proto(*failure, req.mutable_failure());
    v1::ReportAccepted resp;
    deliver("the state of " + attempt(vertex, subtask).to_string() + " (" + v1::TaskEvent_Name(event) + ")",
            [&](grpc::ClientContext* ctx) { return stub->UpdateTaskState(ctx, req, &resp); });
  }
};

TaskReports::TaskReports(const std::string& jobmanager_address, TaskManagerSessionId session, int32_t attempt_number,
                         int64_t report_timeout_ms, std::function<void()> before_finished)
    : impl_(std::make_unique<Impl>()) {
  impl_->stub = v1::JobMasterGateway::NewStub(grpc::CreateChannel(jobmanager_address, grpc::InsecureChannelCredentials()));
  impl_->session = std::move(session);
  impl_->attempt_number = attempt_number;
  impl_->report_timeout_ms = report_timeout_ms;
  impl_->before_finished = std::move(before_finished);
}

TaskReports::~TaskReports() = default;

void TaskReports::abandon() { impl_->abandoned.store(true); }

void TaskReports::on_task_end_of_data(int32_t vertex, int32_t subtask) {
  impl_->state_change(vertex, subtask, v1::TASK_END_OF_DATA, nullptr);
}
void TaskReports::on_task_finished(int32_t vertex, int32_t subtask) {
  if (impl_->before_finished && !impl_->abandoned.load()) impl_->before_finished();
  impl_->state_change(vertex, subtask, v1::TASK_FINISHED, nullptr);
}
void TaskReports::on_task_failed(int32_t vertex, int32_t subtask, const Status& cause) {
  impl_->state_change(vertex, subtask, v1::TASK_FAILED, &cause);
}
void TaskReports::on_task_cancelled(int32_t vertex, int32_t subtask) {
  impl_->state_change(vertex, subtask, v1::TASK_CANCELLED, nullptr);
}

void TaskReports::acknowledge(CheckpointId id, JobVertexId vertex_id, SubtaskIndex subtask_index,
                              std::map<std::string, checkpoint::OperatorSubtaskState> state,
                              runtime::SubtaskSnapshotStats stats) {
  const int32_t vertex = vertex_id.value();
  const int32_t subtask = subtask_index.value();
  v1::AcknowledgeCheckpointRequest req;
  impl_->fill(req.mutable_session());
  to_proto(impl_->attempt(vertex, subtask), req.mutable_attempt());
  req.set_checkpoint_id(id.value());
  const std::vector<uint8_t> bytes = checkpoint::encode_subtask_states(state);
  req.set_subtask_states(bytes.data(), bytes.size());
  to_proto(stats, req.mutable_stats());
  v1::ReportAccepted resp;
  impl_->deliver("the acknowledgement of checkpoint " + std::to_string(id.value()) + " by " +
                     impl_->attempt(vertex, subtask).to_string(),
                 [&](grpc::ClientContext* ctx) { return impl_->stub->AcknowledgeCheckpoint(ctx, req, &resp); });
}

void TaskReports::decline(CheckpointId id, JobVertexId vertex_id, SubtaskIndex subtask_index, const Status& reason) {
  const int32_t vertex = vertex_id.value();
  const int32_t subtask = subtask_index.value();
  v1::DeclineCheckpointRequest req;
  impl_->fill(req.mutable_session());
  to_proto(impl_->attempt(vertex, subtask), req.mutable_attempt());
  req.set_checkpoint_id(id.value());
  to_proto(reason, req.mutable_reason());
  v1::ReportAccepted resp;
  impl_->deliver("the decline of checkpoint " + std::to_string(id.value()) + " by " +
                     impl_->attempt(vertex, subtask).to_string(),
                 [&](grpc::ClientContext* ctx) { return impl_->stub->DeclineCheckpoint(ctx, req, &resp); });
}

}  // namespace sluice::rpc
