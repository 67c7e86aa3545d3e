#include "cluster/in_process_deployer.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "cluster/attempt_network.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "sluice/core/clock.h"
#include "sluice/core/version.h"

namespace sluice::cluster {
namespace {

class InProcessTasks final : public DeployedTasks {
 public:
  struct Task {
    runtime::ExecutionAttemptId id;
    bool is_source = false;
    std::unique_ptr<runtime::StreamTask> task;
    std::thread thread;
  };

  InProcessTasks(std::vector<Task> tasks, runtime::AsyncSnapshotExecutor* executor,
                 std::optional<std::chrono::milliseconds> buffer_timeout, std::shared_ptr<std::atomic<int32_t>> deployed)
      : tasks_(std::move(tasks)), executor_(executor), deployed_(std::move(deployed)) {
    deployed_->fetch_add(1);
    for (auto& t : tasks_) t.thread = std::thread([task = t.task.get()] { task->run(); });
    if (buffer_timeout) flusher_ = std::thread([this, period = *buffer_timeout] { flush_loop(period); });
  }

  ~InProcessTasks() override {
    cancel();
    join();
    deployed_->fetch_sub(1);
  }

  // The savepoint location is already routed in the job's checkpoint storage, which these tasks share.
  void trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& /*savepoint_location*/,
                          std::map<JobVertexId, std::vector<uint8_t>> enumerator_states) override {
    for (auto& t : tasks_) {
      if (!t.is_source) continue;
      std::vector<uint8_t> es;
      if (t.id.subtask.value() == 0) {
        if (auto it = enumerator_states.find(t.id.vertex); it != enumerator_states.end()) es = std::move(it->second);
      }
      runtime::StreamTask* task = t.task.get();
      task->mailbox().put([task, barrier, es = std::move(es)]() mutable { task->trigger_checkpoint(barrier, std::move(es)); });
    }
  }
  void notify_checkpoint_complete(CheckpointId id) override {
    each([id](runtime::StreamTask* task) { task->notify_checkpoint_complete(id); });
  }
  void notify_checkpoint_aborted(CheckpointId id) override {
    each([id](runtime::StreamTask* task) { task->notify_checkpoint_aborted(id); });
  }
  void stop_sources(bool drain) override {
    for (auto& t : tasks_) {
      if (!drain) t.task->skip_end_input_on_finish();
      if (!t.is_source) continue;
      runtime::StreamTask* task = t.task.get();
      task->mailbox().put([task, drain] { task->stop_source(drain); });
    }
  }
  void resume_sources() override {
    for (auto& t : tasks_) {
      t.task->keep_end_input_on_finish();
      runtime::StreamTask* task = t.task.get();
      if (t.is_source) task->mailbox().put([task] { task->resume_source(); });
    }
  }
  void finish() override {
    each([](runtime::StreamTask* task) { task->finish(); });
  }
  void wake() override {
    for (auto& t : tasks_) t.task->mailbox().put([] {});
  }
  void fail(const runtime::ExecutionAttemptId& subtask, const Status& cause) override {
    for (auto& t : tasks_) {
      if (t.id == subtask) t.task->mailbox().put([cause] { throw StatusError(cause); });
    }
  }

  std::vector<SubtaskLocation> locations() const override {
    std::vector<SubtaskLocation> out;
    for (const auto& t : tasks_) out.push_back({t.id, kMiniClusterTaskManagerId, kMiniClusterHost});
    return out;
  }

  void cancel() override {
    {
      std::lock_guard lock(flush_mu_);
      cancelled_ = true;
    }
    flush_cv_.notify_all();
    for (auto& t : tasks_) t.task->cancel();
  }
  void join() override {
    if (flusher_.joinable()) flusher_.join();
    for (auto& t : tasks_)
      if (t.thread.joinable()) t.thread.join();
    executor_->drain();  // copy-on-write snapshots may still read the old backends
  }

 private:
  template <class Fn>
  void each(Fn fn) {
    for (auto& t : tasks_) {
      runtime::StreamTask* task = t.task.get();
      task->mailbox().put([task, fn] { fn(task); });
    }
  }

  void flush_loop(std::chrono::milliseconds period) {
    period = std::max(period, std::chrono::milliseconds(1));
    std::unique_lock lock(flush_mu_);
    while (!flush_cv_.wait_for(lock, period, [&] { return cancelled_; })) {
      for (auto& t : tasks_) t.task->request_flush();
    }
  }

  std::vector<Task> tasks_;  // fixed from construction to destruction
  runtime::AsyncSnapshotExecutor* executor_;
  std::shared_ptr<std::atomic<int32_t>> deployed_;
  std::mutex flush_mu_;
  std::condition_variable flush_cv_;
  bool cancelled_ = false;
  std::thread flusher_;
};

}  // namespace

InProcessDeployer::InProcessDeployer(JobTaskContext context)
    : context_(std::move(context)), started_at_ms_(SystemClock::shared()->now_ms()) {}

InProcessDeployer::~InProcessDeployer() { executor_.drain(); }

std::vector<TaskManagerInfo> InProcessDeployer::task_managers() const {
  int32_t slots = 1;
  for (const auto& v : context_.job_graph->vertices) slots = std::max(slots, v.parallelism);
  TaskManagerInfo tm;
  tm.registration.task_manager_id = kMiniClusterTaskManagerId;
  tm.registration.host = kMiniClusterHost;
  tm.registration.num_slots = slots;
  tm.registration.sluice_version = sluice_version();
  tm.registration_id = 1;
  tm.registered_at_ms = started_at_ms_;
  tm.last_heartbeat_ms = SystemClock::shared()->now_ms();  // the TaskManager is this process, which answers
  tm.allocated_slots = deployed_->load() > 0 ? slots : 0;
  return {tm};
}

Result<std::unique_ptr<DeployedTasks>> InProcessDeployer::deploy(AttemptDeployment attempt) {
  const graph::JobGraph& jg = *context_.job_graph;
  const MiniClusterConfig& cfg = *context_.config;
  std::optional<AttemptRestoreAssignment> restore;
  if (attempt.restore) {
    SLUICE_ASSIGN_OR_RETURN(restore, AttemptRestoreAssignment::build(*attempt.restore, *cfg.storage,
                                                                     *context_.stream_graph, jg));
  }
  if (attempt.placement) {
    // This TaskManager's share: exactly the subtasks the placement puts here (a channel to a missing one would hang).
    SLUICE_RETURN_IF_ERROR(check_placement(jg, *attempt.placement));
    size_t local = 0;
    for (const auto& v : jg.vertices)
      for (int32_t i = 0; i < v.parallelism; ++i) local += attempt.placement->is_local(v.id, i) ? 1 : 0;
    for (const SubtaskDeployment& s : attempt.subtasks) {
      if (!attempt.placement->is_local(s.id.vertex.value(), s.id.subtask.value())) {
        return Status::invalid_argument(s.id.to_string() + " is deployed here, the placement puts it on TaskManager " +
                                        std::to_string(attempt.placement->task_manager_of[static_cast<size_t>(
                                            s.id.vertex.value())][static_cast<size_t>(s.id.subtask.value())]));
      }
    }
    if (local != attempt.subtasks.size()) {
      return Status::invalid_argument("the placement puts " + std::to_string(local) + " subtasks here, " +
                                      std::to_string(attempt.subtasks.size()) + " are deployed");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(AttemptNetwork net, build_attempt_network(jg, cfg.network, cfg.clock,
                                                                    attempt.placement ? &*attempt.placement : nullptr));
  std::vector<InProcessTasks::Task> tasks;
  for (SubtaskDeployment& s : attempt.subtasks) {
    const auto& v = jg.vertices[static_cast<size_t>(s.id.vertex.value())];
    const auto vi = static_cast<size_t>(v.id), si = static_cast<size_t>(s.id.subtask.value());
    runtime::TaskDeployment d;
    d.stream_graph = context_.stream_graph;
    d.job_graph = &jg;
    d.vertex = v.id;
    d.subtask_index = s.id.subtask.value();
    d.attempt_number = s.id.attempt_number;
    d.key_group_range = s.key_group_range;
    d.outputs = std::move(net.outputs[vi][si]);
    d.notifier = net.notifiers[vi][si];
    if (!v.is_source) d.input_gate = std::make_unique<runtime::InputGate>(std::move(net.input_channels[vi][si]), d.notifier.get());
    d.source_coordinator = attempt.source_coordinators[vi];
    d.job_metrics = context_.job_metrics;
    d.clock = cfg.clock.get();
    d.state_backend_type = cfg.state_backend_type;
    d.rocksdb = cfg.rocksdb;
    d.incremental_checkpoints = cfg.incremental_checkpoints;
    d.job_id = context_.job_id;
    d.lineage_job_ids = context_.lineage_job_ids;
    d.file_systems = cfg.file_systems;
    d.fault_injector = context_.fault_injector;
    d.auto_watermark_interval_ms = cfg.auto_watermark_interval_ms;
    if (context_.checkpoint_responder) {
      d.checkpoint_responder = context_.checkpoint_responder;
      d.periodic_checkpoints = cfg.checkpointing;
      d.at_least_once = cfg.at_least_once;
      d.checkpoints_after_tasks_finish = cfg.checkpoints_after_tasks_finish;
      if (cfg.records_after_barrier_hook) d.records_after_barrier_hook = &cfg.records_after_barrier_hook;
      d.checkpoint_storage = cfg.storage;
      d.async_executor = &executor_;
      d.unaligned = cfg.unaligned;
    }
    if (restore) {
      SLUICE_ASSIGN_OR_RETURN(SubtaskRestoreState state, restore->take(s.id, s.key_group_range));
      d.restored = true;
      d.restore = std::move(state.operators);
      d.restored_channel_state = std::move(state.channel_state);
    }
    InProcessTasks::Task t;
    t.id = s.id;
    t.is_source = v.is_source;
    t.task = std::make_unique<runtime::StreamTask>(std::move(d), context_.listener);
    tasks.push_back(std::move(t));
  }
  std::optional<std::chrono::milliseconds> flush;
  if (cfg.buffer_timeout_enabled) flush = cfg.buffer_timeout;
  return std::unique_ptr<DeployedTasks>(std::make_unique<InProcessTasks>(std::move(tasks), &executor_, flush, deployed_));
}

}  // namespace sluice::cluster
