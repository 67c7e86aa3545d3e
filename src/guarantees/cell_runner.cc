#include "guarantees/cell_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "cluster/mini_cluster.h"
#include "guarantees/log_sources.h"
#include "guarantees/record_log.h"

namespace sluice::guarantees {
namespace {

using Clock = std::chrono::steady_clock;
using runtime::FailurePoint;

constexpr int32_t kSourceVertex = 0;  // the log source (parallelism 1)
constexpr int32_t kSinkVertex = 1;    // the running count chained with the sink (parallelism 2)
constexpr int32_t kSinkParallelism = 2;

struct RunningCount final : KeyedProcessFunction<int64_t, int64_t, KeyCount> {
  ValueState<int64_t>* count = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const int64_t&, KeyedProcessContext<int64_t>& ctx, Collector<KeyCount>& out) override {
    const int64_t n = count->value().value_or(0) + 1;
    count->update(n);
    out.collect(KeyCount{ctx.current_key(), n});
  }
};

// One job of a cell and the driver's handles on it.
class Run {
 public:
  Run(CellTarget& target, SourceKind source, SinkKind sink, const RunSettings& settings, const std::string& tag)
      : target_(target), source_(source), sink_(sink), settings_(settings), tag_(tag),
        dir_(settings.work_dir + "/" + tag), log_(std::make_shared<RecordLog>()),
        marker_crash_(std::make_shared<std::atomic<int64_t>>(0)) {}
  ~Run() {
    if (client_ && !is_globally_terminal(client_->status())) {
      client_->cancel();
      (void)client_->wait();
    }
    client_.reset();
    if (!settings_.keep) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  Status start() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    std::filesystem::create_directories(dir_, ec);
    if (ec) return Status::io_error("cannot create run folder " + dir_ + ": " + ec.message());
    SLUICE_RETURN_IF_ERROR(target_.prepare(sink_, dir_, tag_));
    Configuration config;
    // Checkpoints only when the driver triggers them (and the final one at the end of input).
    for (const auto& [k, v] : std::map<std::string, std::string>{
             {"execution.checkpointing.interval", "1h"},
             {"execution.checkpointing.dir", dir_ + "/checkpoints"},
             {"execution.buffer-timeout.interval", "2ms"},
             {"restart-strategy.type", "fixed-delay"},
             {"restart-strategy.fixed-delay.attempts", "100"},
             {"restart-strategy.fixed-delay.delay", "10ms"}}) {
      SLUICE_RETURN_IF_ERROR(config.set_string(k, v));
    }
    env_ = std::make_unique<StreamExecutionEnvironment>(config);
    env_->set_parallelism(kSinkParallelism);
    auto records = source_ == SourceKind::kReplayable
                       ? env_->from_source(replayable_log_source(log_), "log")
                       : env_->from_source(consume_once_log_source(log_), "log");
    records.set_parallelism(1).uid("log");
    const int64_t keys = settings_.keys;
    auto results = records.key_by([keys](const int64_t& v) { return v % keys; }).process(RunningCount{});
    results.name("counts").uid("counts");
    target_.add_sink(results, sink_, dir_, tag_, marker_crash_).name("sink").uid("sink");
    auto client = env_->execute_async("guarantees-" + tag_);
    if (!client.is_ok()) return client.status();
    client_ = std::move(client).value();
    cp_ = dynamic_cast<cluster::CheckpointingJobClient*>(client_.get());
    if (cp_ == nullptr) return Status::internal("the job client does not checkpoint");
    return Status::ok();
  }

  void feed(int64_t n) {
    std::vector<int64_t> batch(static_cast<size_t>(n));
    for (auto& v : batch) v = next_value_++;
    log_->append(batch);
  }
  int64_t fed() const { return next_value_; }

  // Waits until `what` holds, the job failed, or the run's timeout passed.
  template <class F>
  Status wait_for(const std::string& what, F&& done) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(settings_.timeout_ms);
    while (true) {
      // The status is read before `done` is asked: a job that ends between the two is asked once more, instead
      // of being taken for one that ended before `what` could happen.
      const JobStatus st = client_->status();
      if (done()) break;
      if (is_globally_terminal(st)) {
        return Status::failed_precondition("the job ended (" + std::string(job_status_name(st)) + ") waiting for " + what);
      }
      if (Clock::now() > deadline) return Status::timeout("timed out waiting for " + what);
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    return Status::ok();
  }
  Status wait_delivered() {
    return wait_for("the source to read " + std::to_string(fed()) + " records", [&] { return log_->delivered() >= fed(); });
  }
  bool running() const { return client_->status() == JobStatus::kRunning; }

  // Triggers a checkpoint (retrying while the coordinator refuses) and returns its id.
  Result<CheckpointId> trigger() {
    Result<CheckpointId> id = Status::internal("not triggered");
    SLUICE_RETURN_IF_ERROR(wait_for("a checkpoint to be triggered", [&] {
      if (!running()) return false;
      id = cp_->trigger_checkpoint();
      return id.is_ok();
    }));
    return id;
  }
  // Triggers a checkpoint and waits for its completion; kFailedPrecondition when it failed.
  Status checkpoint() {
    SLUICE_ASSIGN_OR_RETURN(CheckpointId id, trigger());
    bool failed = false;
    SLUICE_RETURN_IF_ERROR(wait_for("checkpoint " + std::to_string(id.value()), [&] {
      const auto stats = cp_->checkpoint_stats();
      if (stats.latest_completed && stats.latest_completed->id.value() >= id.value()) return true;
      for (const auto& h : stats.history) failed = failed || (h.id == id && h.status == coordinator::CheckpointStatus::kFailed);
      return failed;
    }));
    if (failed) return Status::failed_precondition("checkpoint " + std::to_string(id.value()) + " failed");
    return Status::ok();
  }
  Status arm(FailurePoint point, int32_t vertex, int32_t subtask, int64_t from_checkpoint_id = 0) {
    return cp_->arm_failure(point, vertex, subtask, "guarantees " + tag_, from_checkpoint_id);
  }
  // The next checkpoint's id: the adversarial failures are armed for it, not for the notification of the one that
  // just completed, which a sink may not have run yet.
  int64_t next_checkpoint_id() const {
    const auto stats = cp_->checkpoint_stats();
    return stats.latest_completed ? stats.latest_completed->id.value() + 1 : 1;
  }
  void arm_marker_crash(int64_t from_checkpoint_id) { marker_crash_->store(from_checkpoint_id); }
  // Waits until `restarts` recoveries happened and the job runs again, triggering checkpoints meanwhile (the
  // armed point may need one to be reached).
  Status recover(int32_t restarts, bool trigger_checkpoints) {
    return wait_for("recovery " + std::to_string(restarts), [&] {
      if (cp_->restarts() >= restarts) return running();
      if (trigger_checkpoints && running() && cp_->checkpoint_stats().num_in_progress == 0) (void)cp_->trigger_checkpoint();
      return false;
    });
  }
  int64_t failures() const { return cp_->restarts(); }

  Result<RunResult> finish() {
    log_->close();
    SLUICE_RETURN_IF_ERROR(wait_for("the end of the job", [&] { return is_globally_terminal(client_->status()); }));
    const JobExecutionResult r = client_->wait();
    if (r.status != JobStatus::kFinished) {
      return Status::failed_precondition(std::string("the job ended ") + job_status_name(r.status) + ": " + r.error.to_string());
    }
    SLUICE_ASSIGN_OR_RETURN(TargetContents got, target_.read(sink_, dir_, tag_));
    RunResult result = compare_with_failure_free(got, fed(), settings_.keys);
    result.failures = cp_->restarts();
    return result;
  }

 private:
  CellTarget& target_;
  SourceKind source_;
  SinkKind sink_;
  const RunSettings& settings_;
  std::string tag_, dir_;
  std::shared_ptr<RecordLog> log_;
  std::shared_ptr<std::atomic<int64_t>> marker_crash_;
  std::unique_ptr<StreamExecutionEnvironment> env_;
  std::unique_ptr<JobClient> client_;
  cluster::CheckpointingJobClient* cp_ = nullptr;
  int64_t next_value_ = 0;
};

std::string run_tag(SourceKind source, SinkKind sink, const std::string& what) {
  static std::atomic<int64_t> counter{0};
  std::string s = std::string(source == SourceKind::kReplayable ? "replayable" : "not-replayable") + "-" +
                  std::to_string(static_cast<int>(sink)) + "-" + what + "-" + std::to_string(::getpid()) + "-" +
                  std::to_string(counter++);
  return s;
}

}  // namespace

RunResult compare_with_failure_free(const TargetContents& got, int64_t records, int32_t keys) {
  std::map<int64_t, int64_t> want_final;  // key -> count
  for (int64_t v = 0; v < records; ++v) ++want_final[v % keys];
  RunResult r;
  if (got.upserted) {
    std::map<int64_t, int64_t> have;
    for (const auto& row : got.rows) have[row.key] = row.count;
    for (const auto& [k, n] : want_final) {
      r.expected += n;
      const auto it = have.find(k);
      const int64_t h = it == have.end() ? 0 : it->second;
      if (h < n) r.lost += n - h;
      if (h > n) r.duplicated += h - n;  // counted more records than there were
    }
    for (const auto& [k, h] : have) {
      if (!want_final.count(k)) r.duplicated += h;
    }
    return r;
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> seen;
  for (const auto& row : got.rows) ++seen[{row.key, row.count}];
  for (const auto& [k, n] : want_final) {
    r.expected += n;
    for (int64_t i = 1; i <= n; ++i) {
      const auto it = seen.find({k, i});
      if (it == seen.end()) {
        ++r.lost;
        continue;
      }
      r.duplicated += it->second - 1;
      seen.erase(it);
    }
  }
  for (const auto& [row, times] : seen) r.duplicated += times;  // results the failure-free run never had
  return r;
}

std::string adversarial_scenario(SourceKind source, SinkKind sink) {
  if (source == SourceKind::kNotReplayable) return "a task fails after the source took records no checkpoint covers";
  switch (sink) {
    case SinkKind::kPlain:
    case SinkKind::kIdempotent:
      return "the sink wrote at a barrier whose checkpoint then failed (between sync and async snapshot)";
    case SinkKind::kWriteAheadLog: return "the sink fails after a batch's data, before its marker";
    case SinkKind::kTwoPhaseCommit: return "the sink fails after its checkpoint completed, before committing";
  }
  return "";
}

Result<RunResult> run_adversarial(CellTarget& target, SourceKind source, SinkKind sink, const RunSettings& settings) {
  Run run(target, source, sink, settings, run_tag(source, sink, "adversarial"));
  SLUICE_RETURN_IF_ERROR(run.start());
  const int64_t phase = settings.records_per_phase;
  run.feed(phase);
  SLUICE_RETURN_IF_ERROR(run.wait_delivered());
  SLUICE_RETURN_IF_ERROR(run.checkpoint());
  run.feed(phase);
  SLUICE_RETURN_IF_ERROR(run.wait_delivered());
  if (source == SourceKind::kNotReplayable) {
    SLUICE_RETURN_IF_ERROR(run.arm(FailurePoint::kTask, kSinkVertex, 0));
    SLUICE_RETURN_IF_ERROR(run.recover(1, /*trigger_checkpoints=*/false));
  } else if (sink == SinkKind::kWriteAheadLog) {
    run.arm_marker_crash(run.next_checkpoint_id());
    (void)run.checkpoint();  // completes; the failure comes with its notification
    SLUICE_RETURN_IF_ERROR(run.recover(1, false));
  } else {
    const bool after_completion = sink == SinkKind::kTwoPhaseCommit;
    SLUICE_RETURN_IF_ERROR(run.arm(after_completion ? FailurePoint::kBetweenCompletionAndCommit
                                                    : FailurePoint::kBetweenSyncAndAsyncSnapshot,
                                   kSinkVertex, -1, run.next_checkpoint_id()));
    SLUICE_RETURN_IF_ERROR(run.trigger().status());
    SLUICE_RETURN_IF_ERROR(run.recover(1, false));
  }
  run.feed(phase);
  return run.finish();
}

Result<RunResult> run_seeded(CellTarget& target, SourceKind source, SinkKind sink, uint64_t seed,
                             const RunSettings& settings) {
  std::mt19937_64 rng(seed);
  Run run(target, source, sink, settings, run_tag(source, sink, "seed" + std::to_string(seed)));
  SLUICE_RETURN_IF_ERROR(run.start());
  const int32_t phases = 3 + static_cast<int32_t>(rng() % 3);
  std::vector<FailurePoint> classes(std::begin(runtime::kFailureClasses), std::end(runtime::kFailureClasses));
  std::shuffle(classes.begin(), classes.end(), rng);
  const int32_t num_failures = 1 + static_cast<int32_t>(rng() % 2);
  std::vector<bool> fail_at(static_cast<size_t>(phases), false);
  for (int32_t i = 0; i < num_failures; ++i) fail_at[rng() % static_cast<uint64_t>(phases)] = true;
  int32_t failures = 0;
  for (int32_t p = 0; p < phases; ++p) {
    const int64_t size = settings.records_per_phase / 2 + static_cast<int64_t>(rng() % static_cast<uint64_t>(settings.records_per_phase));
    if (fail_at[static_cast<size_t>(p)]) {
      const FailurePoint point = classes[static_cast<size_t>(failures) % classes.size()];
      const int32_t vertex = point == FailurePoint::kSource ? kSourceVertex
                             : point == FailurePoint::kBetweenSyncAndAsyncSnapshot ? static_cast<int32_t>(rng() % 2)
                                                                                   : kSinkVertex;
      const int32_t subtask = vertex == kSourceVertex ? 0 : static_cast<int32_t>(rng() % kSinkParallelism);
      SLUICE_RETURN_IF_ERROR(run.arm(point, vertex, subtask));
      run.feed(size);
      SLUICE_RETURN_IF_ERROR(run.recover(++failures, /*trigger_checkpoints=*/true));
    } else {
      run.feed(size);
      if (rng() % 2 == 0) {
        SLUICE_RETURN_IF_ERROR(run.wait_delivered());
        SLUICE_RETURN_IF_ERROR(run.checkpoint());
      }
    }
  }
  return run.finish();
}

}  // namespace sluice::guarantees
