#include "batch/batch_job.h"

#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "batch/blocking_exchange.h"
#include "batch/sink_commit_retry.h"
#include "batch/stage_plan.h"
#include "coordinator/job_lifecycle.h"
#include "graph/edge_topology.h"
#include "runtime/stream_task.h"
#include "sluice/metrics/metric_registry.h"
#include "sluice/operators/source_operator.h"

namespace sluice::batch {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

class BatchJob final : public BatchJobClient, public runtime::TaskListener {
 public:
  BatchJob(std::shared_ptr<const StreamGraph> sg, graph::JobGraph jg, BatchJobConfig cfg,
           std::vector<std::unique_ptr<HeldClaim>> claims)
      : sg_(std::move(sg)), jg_(std::move(jg)), cfg_(std::move(cfg)), job_id_(cfg_.job_id ? *cfg_.job_id : name_source_or_random(cfg_.names)->job_id()),
        claims_(std::move(claims)), eg_(graph::build_execution_graph(jg_)), plan_(plan_stages(*sg_, jg_)),
        lifecycle_(job_id_, jg_.job_name, cfg_.clock ? cfg_.clock : SystemClock::shared()) {
    if (!cfg_.clock) cfg_.clock = SystemClock::shared();
    std::vector<runtime::FaultInjector::Task> injectable;
    for (const auto& ev : eg_.subtasks) {
      const auto& v = jg_.vertices[static_cast<size_t>(ev.vertex)];
      uint32_t points = runtime::failure_point_bit(runtime::FailurePoint::kTask);
      bool keyed = false;
      for (int32_t node_id : v.nodes) keyed = keyed || sg_->node(node_id).keyed;
      if (v.is_source) points |= runtime::failure_point_bit(runtime::FailurePoint::kSource);
      if (keyed) points |= runtime::failure_point_bit(runtime::FailurePoint::kKeyedOperator);
      if (commits_after_stage(ev.vertex)) {
        points |= runtime::failure_point_bit(runtime::FailurePoint::kBetweenCompletionAndCommit) |
                  runtime::failure_point_bit(runtime::FailurePoint::kAfterCommit);
      }
      injectable.push_back({ev.vertex, ev.subtask_index, points});
    }
    injector_ = std::make_unique<runtime::FaultInjector>(std::move(injectable));
    stage_runs_.assign(plan_.stages.size(), 0);
    dir_ = cfg_.tmp_dir + "/sluice-batch-" + job_id_.to_hex();
  }

  ~BatchJob() override {
    cancel();
    if (control_.joinable()) control_.join();
  }

  Status init() {
    std::vector<std::string> unbounded = unbounded_sources(*sg_);
    if (!unbounded.empty()) {
      return Status::invalid_argument("execution.runtime-mode BATCH needs bounded sources, but source " +
                                      join_names(unbounded) +
                                      (unbounded.size() == 1 ? " is" : " are") +
                                      " unbounded: bound it (e.g. a Nexmark source with a number of events, a "
                                      "bounded Kafka source) or run in STREAMING");
    }
    for (const ArmedFailure& f : cfg_.failures) SLUICE_RETURN_IF_ERROR(injector_->arm(f.point, f.vertex, f.subtask, f.cause));
    SLUICE_ASSIGN_OR_RETURN(restart_, create_restart_strategy(cfg_.restart, cfg_.jitter_seed));
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return Status::io_error("creating the BATCH working folder " + dir_ + " (io.tmp.dirs): " + ec.message());
    job_metrics_ = &registry_.add_job_group(jg_.job_name.empty() ? "job" : jg_.job_name);
    return Status::ok();
  }

  Status start() {
    SLUICE_RETURN_IF_ERROR(lifecycle_.start());
    spdlog::info("job {} ({}): BATCH, {} stage(s), working folder {}", jg_.job_name, job_id_.to_hex(),
                 plan_.stages.size(), dir_);
    control_ = std::thread([this] { run_job(); });
    return Status::ok();
  }

  // ---- JobClient ----
  JobId job_id() const override { return job_id_; }
  JobStatus status() const override { return lifecycle_.status(); }
  void cancel() override {
    {
      std::lock_guard lock(stage_mu_);
      cancel_requested_ = true;
    }
    stage_cv_.notify_all();
  }
  JobExecutionResult wait() override { return lifecycle_.wait(); }
  const MetricRegistry& metrics() const override { return registry_; }

  // ---- BatchJobClient ----
  std::vector<int32_t> stage_runs() const override {
    std::lock_guard lock(mu_);
    return stage_runs_;
  }
  int32_t num_stages() const override { return static_cast<int32_t>(plan_.stages.size()); }
  int32_t stage_of_vertex(int32_t vertex) const override {
    return plan_.stage_of_vertex.at(static_cast<size_t>(vertex));
  }
  Status arm_failure(runtime::FailurePoint point, int32_t vertex, int32_t subtask, const std::string& cause) override {
    return injector_->arm(point, vertex, subtask, cause);
  }
  std::vector<runtime::InjectedFailure> injected_failures() const override { return injector_->injected(); }
  BatchStats batch_stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

  // ---- TaskListener (task threads) ----
  // A task whose sinks commit after the stage pre-committed (its committables, kept for a commit retry) ...
  void on_task_precommitted(int32_t vertex, int32_t subtask, std::vector<runtime::BatchPrecommit> sinks) override {
    std::lock_guard lock(stage_mu_);
    precommits_[{vertex, subtask}] = std::move(sinks);
  }
  // ... and waits for the stage (batch_commit_after_stage).
  void on_task_end_of_data(int32_t, int32_t) override {
    {
      std::lock_guard lock(stage_mu_);
      ++waiting_tasks_;
    }
    stage_cv_.notify_all();
  }
  void on_task_finished(int32_t vertex, int32_t subtask) override {
    {
      std::lock_guard lock(stage_mu_);
      ++finished_tasks_;
      finished_.insert({vertex, subtask});
    }
    stage_cv_.notify_all();
  }
  void on_task_cancelled(int32_t, int32_t) override {}
  void on_task_failed(int32_t, int32_t, const Status& cause) override { fail_stage(cause); }

 private:
  struct TaskSlot {
    std::unique_ptr<runtime::StreamTask> task;
    std::thread thread;
    bool commits_after_stage = false;
  };
  // How a run of a stage ended.
  struct StageResult {
    Status status;
    // The failure came after every task finished or pre-committed: retry the commit (pending_commits_), not the
    // stage.
    bool in_commit_phase = false;
  };
  // One run of one stage: what it deployed.
  struct StageRun {
    std::vector<std::unique_ptr<SourceCoordinatorBase>> coordinators;
    std::vector<std::unique_ptr<InputReplayer>> replayers;
    std::unique_ptr<ExchangeSpiller> spiller;
    std::vector<TaskSlot> tasks;
  };

  void fail_stage(const Status& cause) {
    {
      std::lock_guard lock(stage_mu_);
      if (failure_.is_ok()) failure_ = cause;
    }
    stage_cv_.notify_all();
  }
  void wake() { stage_cv_.notify_all(); }

  // The vertex's chain holds a sink that commits once its stage succeeded.
  bool commits_after_stage(int32_t vertex) const {
    bool any = false;
    for (int32_t node_id : jg_.vertices[static_cast<size_t>(vertex)].nodes)
      any = any || sg_->node(node_id).commits_on_checkpoint_complete;
    return any;
  }

  std::string exchange_file(int32_t edge, int32_t producer, int32_t subpartition) const {
    return dir_ + "/exchange-e" + std::to_string(edge) + "-p" + std::to_string(producer) + "-s" +
           std::to_string(subpartition) + ".data";
  }
  int32_t edge_index(const graph::JobEdge* e) const { return static_cast<int32_t>(e - jg_.edges.data()); }

  void run_job() {
    Status error = Status::ok();
    JobStatus terminal = JobStatus::kFinished;
    for (size_t s = 0; s < plan_.stages.size() && terminal == JobStatus::kFinished; ++s) {
      bool commit_pending = false;  // the stage's output is complete; its sinks' commit failed
      while (true) {
        Status st;
        if (commit_pending) {
          st = retry_commits();
        } else {
          {
            std::lock_guard lock(mu_);
            ++stage_runs_[s];
          }
          StageResult r = run_stage(static_cast<int32_t>(s));
          st = r.status;
          commit_pending = !st.is_ok() && r.in_commit_phase;
        }
        if (st.is_ok()) break;
        if (cancel_requested()) {
          terminal = JobStatus::kCanceled;
          break;
        }
        spdlog::warn("job {}: stage {} failed{}: {}", jg_.job_name, s,
                     commit_pending ? " while its sinks committed" : "", st.to_string());
        // Progress for the count of identical failures is a completed stage: the index of the stage that failed.
        RestartDecision d = decide_restart(*restart_, st, cfg_.clock->now_ms(), Status::ok(), &identical_failures_,
                                           static_cast<int64_t>(s));
        if (!d.restart) {
          error = job_failure(d, st);
          terminal = JobStatus::kFailed;
          break;
        }
        {
          std::unique_lock lock(stage_mu_);
          stage_cv_.wait_for(lock, std::chrono::milliseconds(d.backoff_ms), [&] { return cancel_requested_; });
        }
        if (cancel_requested()) {
          terminal = JobStatus::kCanceled;
          break;
        }
        if (commit_pending) {
          spdlog::info("job {}: retrying the commit of stage {} ({} task(s))", jg_.job_name, s, pending_commits_.size());
        } else {
          spdlog::info("job {}: re-running stage {} (run {})", jg_.job_name, s, stage_runs()[s] + 1);
        }
      }
      if (terminal == JobStatus::kFinished) delete_inputs_of(static_cast<int32_t>(s));
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    claims_.clear();  // nothing of this job writes any more
    // Only this thread moves the status: RUNNING to the terminal state (through FAILING or CANCELLING).
    Status ended = lifecycle_.terminate(terminal, error);
    if (!ended.is_ok()) spdlog::error("{}", ended.to_string());
  }

  bool cancel_requested() {
    std::lock_guard lock(stage_mu_);
    return cancel_requested_;
  }

  // The files a stage read are not needed any more once it finished.
  void delete_inputs_of(int32_t stage) {
    for (int32_t v : plan_.stages[static_cast<size_t>(stage)]) {
      for (const graph::JobEdge* e : jg_.inputs_of(v)) {
        const auto& src = jg_.vertices[static_cast<size_t>(e->source_vertex)];
        for (int32_t i = 0; i < src.parallelism; ++i) {
          const int32_t subs = graph::consumers_of_producer(jg_, *e, i).size();
          for (int32_t j = 0; j < subs; ++j) {
            std::error_code ec;
            std::filesystem::remove(exchange_file(edge_index(e), i, j), ec);
          }
        }
      }
    }
  }

  Status deploy_stage(int32_t stage, StageRun* run, int32_t* num_tasks) {
    const std::vector<int32_t>& vertices = plan_.stages[static_cast<size_t>(stage)];
    run->coordinators.resize(jg_.vertices.size());
    std::vector<SpillTarget> spill_targets;
    for (int32_t vid : vertices) {
      const auto& v = jg_.vertices[static_cast<size_t>(vid)];
      if (!v.is_source) continue;
      try {
        run->coordinators[static_cast<size_t>(vid)] = sg_->node(v.head_node).create_source_coordinator();
        run->coordinators[static_cast<size_t>(vid)]->start(v.parallelism, nullptr);  // bounded: from the start
      } catch (const std::exception& e) {
        return Status::invalid_argument(e.what()).with_context("starting the split enumerator of source '" +
                                                               sg_->node(v.head_node).name + "'");
      }
    }
    for (const auto& ev : eg_.subtasks) {
      if (plan_.stage_of_vertex[static_cast<size_t>(ev.vertex)] != stage) continue;
      const auto& v = jg_.vertices[static_cast<size_t>(ev.vertex)];
      runtime::TaskDeployment d;
      d.stream_graph = sg_.get();
      d.job_graph = &jg_;
      d.vertex = v.id;
      d.subtask_index = ev.subtask_index;
      d.attempt_number = stage_runs()[static_cast<size_t>(stage)] - 1;
      d.key_group_range = ev.key_group_range;
      d.notifier = std::make_shared<runtime::TaskNotifier>();
      for (const graph::JobEdge* e : jg_.outputs_of(v.id)) {
        // One subpartition (and exchange file) per consumer this subtask feeds (graph/edge_topology.h).
        const int32_t subs = graph::consumers_of_producer(jg_, *e, ev.subtask_index).size();
        auto partition = std::make_shared<runtime::ResultPartition>(subs, cfg_.network, d.notifier.get(), cfg_.clock);
        for (int32_t j = 0; j < subs; ++j) {
          spill_targets.push_back({partition->channel(j), exchange_file(edge_index(e), ev.subtask_index, j)});
        }
        runtime::TaskOutput out{e, partition};
        out.blocking = true;
        out.sorted_by_key = e->partitioning == Partitioning::kHash && plan_.sorted_input[static_cast<size_t>(e->target_vertex)];
        d.outputs.push_back(std::move(out));
      }
      if (!v.is_source) {
        // Gate channel order as the StreamTask expects: input edges in job-graph order, then producer subtasks.
        // A sorted two-input head: each file's input (the edge's type number), so the sorted entries carry it.
        ReplayConfig rc;
        rc.sorted = plan_.sorted_input[static_cast<size_t>(v.id)];
        const bool tag_inputs = rc.sorted && sg_->node(v.head_node).kind == StreamNode::Kind::kTwoInput;
        std::vector<std::string> files;
        for (const graph::JobEdge* e : jg_.inputs_of(v.id)) {
          // Producer i wrote this subtask's records into its subpartition (this subtask - its first consumer).
          const graph::SubtaskRange producers = graph::producers_of_consumer(jg_, *e, ev.subtask_index);
          for (int32_t i = producers.begin; i < producers.end; ++i) {
            const int32_t subpartition = ev.subtask_index - graph::consumers_of_producer(jg_, *e, i).begin;
            files.push_back(exchange_file(edge_index(e), i, subpartition));
          }
          if (tag_inputs) rc.file_inputs.resize(files.size(), e->type_number == 2 ? 2 : 1);
          rc.file_timestamps.resize(files.size(), e->carries_timestamps ? 1 : 0);
        }
        rc.network = cfg_.network;
        rc.clock = cfg_.clock;
        rc.sort_memory_bytes = cfg_.sort_memory_bytes;
        rc.spill_dir = dir_;
        rc.spill_prefix = "sort-v" + std::to_string(v.id) + "-t" + std::to_string(ev.subtask_index);
        run->replayers.push_back(std::make_unique<InputReplayer>(std::move(files), rc, [this] { wake(); }));
        d.input_gate = std::make_unique<runtime::InputGate>(run->replayers.back()->channels(), d.notifier.get());
        d.batch_sorted_input = rc.sorted;
      }
      d.source_coordinator = run->coordinators[static_cast<size_t>(v.id)].get();
      d.job_metrics = job_metrics_;
      d.clock = cfg_.clock.get();
      d.state_backend_type = "HASHMAP";  // BATCH keeps its state on the heap, whatever state.backend.type says
      d.job_id = job_id_.to_hex();
      d.file_systems = cfg_.file_systems;
      d.fault_injector = injector_.get();
      d.auto_watermark_interval_ms = cfg_.auto_watermark_interval_ms;
      // Sinks that commit on checkpoint completion commit once the stage's output is complete, so a stage re-run
      // never finds output committed (a failure after that point retries the commit instead).
      d.batch_commit_after_stage = commits_after_stage(v.id);
      TaskSlot slot;
      slot.commits_after_stage = d.batch_commit_after_stage;
      slot.task = std::make_unique<runtime::StreamTask>(std::move(d), this);
      run->tasks.push_back(std::move(slot));
    }
    run->spiller = std::make_unique<ExchangeSpiller>(std::move(spill_targets), [this] { wake(); });
    *num_tasks = static_cast<int32_t>(run->tasks.size());
    return Status::ok();
  }

  StageResult run_stage(int32_t stage) {
    {
      std::lock_guard lock(stage_mu_);
      finished_tasks_ = 0;
      waiting_tasks_ = 0;
      failure_ = Status::ok();
      precommits_.clear();
      finished_.clear();
    }
    pending_commits_.clear();
    StageRun run;
    int32_t num_tasks = 0;
    if (Status st = deploy_stage(stage, &run, &num_tasks); !st.is_ok()) return StageResult{st, false};
    run.spiller->start();
    for (auto& r : run.replayers) r->start();
    for (auto& t : run.tasks) t.thread = std::thread([task = t.task.get()] { task->run(); });

    // Done when every task finished and every output file is committed; failed on the first error anywhere.
    Status outcome = Status::ok();
    bool commit_sent = false;
    {
      std::unique_lock lock(stage_mu_);
      while (true) {
        if (!failure_.is_ok()) {
          outcome = failure_;
          break;
        }
        if (cancel_requested_) {
          outcome = Status::cancelled("the job was cancelled");
          break;
        }
        lock.unlock();
        Status helpers = helper_failure(run);
        lock.lock();
        if (!helpers.is_ok()) {
          outcome = helpers;
          break;
        }
        if (finished_tasks_ == num_tasks && run.spiller->status().code() != StatusCode::kCancelled) {
          outcome = run.spiller->status();
          break;
        }
        if (!commit_sent && waiting_tasks_ > 0 && finished_tasks_ + waiting_tasks_ == num_tasks &&
            run.spiller->status().is_ok()) {
          // Every task is done, every output file committed and the sinks pre-committed (their committables are
          // in precommits_): now they commit, then end. From here on a failure retries the commit.
          commit_sent = true;
          for (auto& t : run.tasks) {
            if (!t.commits_after_stage) continue;
            runtime::StreamTask* task = t.task.get();
            task->mailbox().put([task] {
              task->notify_checkpoint_complete(CheckpointId(runtime::kBatchCommitCheckpoint));
              task->finish();
            });
          }
        }
        stage_cv_.wait_for(lock, std::chrono::milliseconds(100));
      }
    }
    if (!outcome.is_ok()) {
      for (auto& t : run.tasks) t.task->cancel();
      for (auto& r : run.replayers) r->cancel();
      run.spiller->cancel();
    }
    for (auto& t : run.tasks)
      if (t.thread.joinable()) t.thread.join();
    for (auto& r : run.replayers) r->join();
    run.spiller->join();
    for (auto& c : run.coordinators)
      if (c) c->close();
    record_stats(run);
    if (!outcome.is_ok() && commit_sent && outcome.code() != StatusCode::kCancelled) {
      // The tasks that did not finish may not have committed: their sinks commit again from what they
      // pre-committed. (A finished task's sinks committed.)
      std::lock_guard lock(stage_mu_);
      for (const auto& ev : eg_.subtasks) {
        auto it = precommits_.find({ev.vertex, ev.subtask_index});
        if (it == precommits_.end() || finished_.count({ev.vertex, ev.subtask_index}) != 0) continue;
        pending_commits_.push_back(TaskCommits{ev.vertex, ev.subtask_index, ev.key_group_range, it->second});
      }
    }
    return StageResult{outcome, commit_sent && outcome.code() != StatusCode::kCancelled};
  }

  // The commit retry (sink_commit_retry.h) of the tasks in pending_commits_; those that commit are done.
  Status retry_commits() {
    CommitRetryContext ctx;
    ctx.stream_graph = sg_.get();
    ctx.job_graph = &jg_;
    ctx.clock = cfg_.clock.get();
    ctx.job_metrics = job_metrics_;
    ctx.job_id = job_id_.to_hex();
    ctx.file_systems = cfg_.file_systems;
    ctx.fault_injector = injector_.get();
    {
      std::lock_guard lock(mu_);
      ++stats_.commit_retries;
      ctx.attempt_number = static_cast<int32_t>(stats_.commit_retries);
    }
    while (!pending_commits_.empty()) {
      SLUICE_RETURN_IF_ERROR(retry_sink_commits(ctx, pending_commits_.back()));
      pending_commits_.pop_back();
    }
    return Status::ok();
  }

  // A replayer or the spiller that ended with an error (not a cancellation).
  static Status helper_failure(const StageRun& run) {
    for (const auto& r : run.replayers) {
      Status st = r->status();
      if (!st.is_ok() && st.code() != StatusCode::kCancelled) return st.with_context("replaying a blocking exchange");
    }
    Status st = run.spiller->status();
    if (!st.is_ok() && st.code() != StatusCode::kCancelled) return st.with_context("writing a blocking exchange");
    return Status::ok();
  }

  void record_stats(const StageRun& run) {
    std::lock_guard lock(mu_);
    stats_.exchange_bytes_written += run.spiller->bytes_written();
    for (const auto& r : run.replayers) {
      const SorterStats s = r->sorter_stats();
      stats_.sorted_records += s.records;
      stats_.sort_spilled_runs += s.spilled_runs;
      stats_.sort_spilled_bytes += s.spilled_bytes;
      stats_.sort_merge_passes += s.merge_passes;
      stats_.sort_peak_memory_bytes = std::max(stats_.sort_peak_memory_bytes, s.peak_memory_bytes);
    }
  }

  std::shared_ptr<const StreamGraph> sg_;
  graph::JobGraph jg_;
  BatchJobConfig cfg_;
  JobId job_id_;
  std::vector<std::unique_ptr<HeldClaim>> claims_;  // held until the job ends
  graph::ExecutionGraph eg_;
  StagePlan plan_;
  std::string dir_;
  MetricRegistry registry_;
  MetricGroup* job_metrics_ = nullptr;
  std::unique_ptr<runtime::FaultInjector> injector_;
  std::unique_ptr<RestartBackoffTimeStrategy> restart_;
  IdenticalFailureCounter identical_failures_{cfg_.restart.max_identical_failures};
  std::thread control_;
  std::vector<TaskCommits> pending_commits_;  // control thread: tasks whose sinks must commit again

  // The running stage (stage_mu_).
  std::mutex stage_mu_;
  std::condition_variable stage_cv_;
  int32_t finished_tasks_ = 0;
  int32_t waiting_tasks_ = 0;  // at the end of their input, waiting to commit
  std::set<std::pair<int32_t, int32_t>> finished_;  // (vertex, subtask) of the finished tasks
  // (vertex, subtask) -> what its sinks pre-committed, in the running stage.
  std::map<std::pair<int32_t, int32_t>, std::vector<runtime::BatchPrecommit>> precommits_;
  Status failure_;
  bool cancel_requested_ = false;

  mutable std::mutex mu_;  // stage_runs_, stats_
  std::vector<int32_t> stage_runs_;
  BatchStats stats_;
  coordinator::JobLifecycle lifecycle_;  // the job's status and, once terminal, its result
};

}  // namespace

Result<std::unique_ptr<BatchJobClient>> submit_batch_job(std::shared_ptr<const StreamGraph> stream_graph,
                                                         graph::JobGraph job_graph, const BatchJobConfig& config,
                                                         std::vector<std::unique_ptr<HeldClaim>> claims) {
  auto job = std::make_unique<BatchJob>(std::move(stream_graph), std::move(job_graph), config, std::move(claims));
  SLUICE_RETURN_IF_ERROR(job->init());
  SLUICE_RETURN_IF_ERROR(job->start());
  return std::unique_ptr<BatchJobClient>(std::move(job));
}

}  // namespace sluice::batch
