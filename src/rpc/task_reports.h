// TaskReports: what the tasks of one attempt on a TaskManager report to their JobMaster, sent over the
// JobMasterGateway (proto/job_master.proto). It is the runtime::TaskListener and runtime::CheckpointResponder those
// tasks are deployed with, exactly where in-process tasks have the JobMaster itself, so tasks do not know where
// their JobMaster runs.
//
// Each report is one blocking call on the reporting thread (a task thread, or the asynchronous snapshot thread for
// acknowledgements), retried every 100 ms while the JobManager is unreachable, for up to `report_timeout_ms`
// (heartbeat.timeout: by then the TaskManager counts its JobManager as lost and cancels its tasks). A refusal
// under another leader epoch is not retried (the TaskManager registers again and its tasks are cancelled). A report
// that cannot be delivered is logged with its attempt; the JobMaster then learns of the task through the
// TaskManager's loss, and an undelivered acknowledgement lets the checkpoint expire (Flink behaves the same).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"
#include "rpc/task_manager_session.h"
#include "runtime/stream_task.h"

namespace sluice::rpc {


class TaskReports final : public runtime::TaskListener, public runtime::CheckpointResponder {
 public:
  // `jobmanager_address`: "host:port" of the JobManager's control plane. `attempt_number`: the attempt whose tasks
  // report through this object. `before_finished` (may be empty): called on the task's thread before a task's
  // FINISHED report is sent, so the JobManager has the task's final metrics before it learns that the task finished.
  TaskReports(const std::string& jobmanager_address, TaskManagerSessionId session, int32_t attempt_number,
              int64_t report_timeout_ms, std::function<void()> before_finished = {});
  ~TaskReports() override;

  void on_task_end_of_data(int32_t vertex, int32_t subtask) override;
  void on_task_finished(int32_t vertex, int32_t subtask) override;
  void on_task_failed(int32_t vertex, int32_t subtask, const Status& cause) override;
  void on_task_cancelled(int32_t vertex, int32_t subtask) override;

  void acknowledge(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask,
                   std::map<std::string, checkpoint::OperatorSubtaskState> state,
                   runtime::SubtaskSnapshotStats stats) override;
  void decline(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask, const Status& reason) override;

  // The attempt is being cancelled here: reports in retry give up now and later ones are sent once, so cancelling
  // does not wait for a JobManager that is gone.
  void abandon();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::rpc
