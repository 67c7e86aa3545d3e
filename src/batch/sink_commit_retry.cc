#include "batch/sink_commit_retry.h"

#include <memory>

#include "sluice/operators/stream_operator.h"

namespace sluice::batch {
namespace {

// An armed failure of this task at `point` fires here (the retry's own pass of the commit points).
Status injected(const CommitRetryContext& ctx, const TaskCommits& task, runtime::FailurePoint point,
                const StreamOperator& op) {
  if (ctx.fault_injector == nullptr) return Status::ok();
  const std::atomic<uint32_t>* mask = ctx.fault_injector->armed_points(task.vertex, task.subtask);
  if (mask == nullptr || (mask->load(std::memory_order_relaxed) & runtime::failure_point_bit(point)) == 0) {
    return Status::ok();
  }
  auto message = ctx.fault_injector->claim(point, task.vertex, task.subtask, ctx.attempt_number,
                                           runtime::kBatchCommitCheckpoint);
  if (!message) return Status::ok();
  return Status::user_function(OperatorFailure(op.info(), *message).what());
}

// After a failure: closing must not mask the cause.
void close_quietly(StreamOperator& op) noexcept {
  try {
    op.close();
  } catch (...) {
  }
}

}  // namespace

Status retry_sink_commits(const CommitRetryContext& ctx, const TaskCommits& task) {
  const std::string task_name = runtime::subtask_name(*ctx.job_graph, task.vertex, task.subtask);
  for (const runtime::BatchPrecommit& pre : task.sinks) {
    const StreamNode& node = ctx.stream_graph->node(pre.node_id);
    std::unique_ptr<StreamOperator> op = node.create_operator();
    OperatorSetup s;
    s.info = runtime::operator_task_info(*ctx.job_graph, node, task.vertex, task.subtask, ctx.attempt_number);
    s.metrics = &ctx.job_metrics->add_operator_group(node.name).add_subtask_group(SubtaskIndex(task.subtask));
    s.clock = ctx.clock;
    s.key_group_range = task.key_group_range;
    s.checkpointing = true;  // keeps what it would commit, as in the stage
    s.job_id = ctx.job_id;
    s.file_systems = ctx.file_systems;
    OperatorRestoreState restored;
    restored.checkpoint_id = CheckpointId(runtime::kBatchCommitCheckpoint);
    restored.operator_state = pre.operator_state;
    try {
      op->setup(s);
      op->initialize_state(&restored);
      SLUICE_RETURN_IF_ERROR(injected(ctx, task, runtime::FailurePoint::kBetweenCompletionAndCommit, *op));
      op->open();  // recover-and-commit: the restored committables are committed (again)
      op->close();
    } catch (const OperatorFailure& e) {
      close_quietly(*op);
      return Status::user_function(e.what()).with_context("retrying the commit of task " + task_name);
    } catch (const StatusError& e) {
      close_quietly(*op);
      return e.status().with_context("retrying the commit of task " + task_name);
    } catch (const std::exception& e) {
      close_quietly(*op);
      return Status::internal(e.what()).with_context("retrying the commit of task " + task_name);
    }
    SLUICE_RETURN_IF_ERROR(injected(ctx, task, runtime::FailurePoint::kAfterCommit, *op));
  }
  return Status::ok();
}

}  // namespace sluice::batch
