#include "job_endpoint.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <utility>

#include "checkpoint/savepoint_files.h"
#include "cluster/job_placement.h"
#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "rest/job_registry.h"
#include "rest/rest_server.h"
#include "sluice/config/derived_options.h"
#include "sluice/config/options.h"
#include "sluice/core/clock.h"

namespace sluice::api {
namespace {

// The job's savepoint and stop-with-savepoint requests: the accepted stop, if any, and every accepted request whose
// outcome no client read yet (the endpoint stays up for them when the job ends, a few seconds at most).
struct StopTracking {
  std::mutex mu;
  std::condition_variable cv;
  std::string trigger_id;             // the accepted stop request
  std::set<std::string> unreported;   // accepted requests whose outcome was not read as final yet
  cluster::CheckpointingJobClient* client = nullptr;  // set by serve() when the job takes savepoints
};

// The RestJob over the tool's JobClient and its CheckpointingJobClient side: savepoints for every STREAMING job,
// checkpoint statistics when it checkpoints.
class ClientRestJob final : public rest::RestJob {
 public:
  ClientRestJob(rest::RestJobOverview overview, JobClient& client, bool checkpointing,
                std::shared_ptr<std::atomic<bool>> cancel_requested, std::string default_savepoint_dir,
                std::shared_ptr<StopTracking> stop)
      : overview_(std::move(overview)),
        client_(client),
        checkpointing_(checkpointing ? dynamic_cast<cluster::CheckpointingJobClient*>(&client) : nullptr),
        savepoints_(dynamic_cast<cluster::CheckpointingJobClient*>(&client)),
        placement_(dynamic_cast<const cluster::JobPlacementView*>(&client)),
        cancel_requested_(std::move(cancel_requested)),
        default_savepoint_dir_(std::move(default_savepoint_dir)),
        stop_(std::move(stop)) {}

  const rest::RestJobOverview& overview() const override { return overview_; }
  std::string state() const override { return job_status_name(client_.status()); }

  std::optional<rest::CheckpointView> checkpoint_view() const override {
    if (checkpointing_ == nullptr) return std::nullopt;
    rest::CheckpointView view;
    view.stats = checkpointing_->checkpoint_stats();
    const auto initial = checkpointing_->initial_restore();
    if (initial) {
      ++view.num_restored;
      view.latest_restored = rest::RestoredCheckpoint{initial->first, initial->second, false};
    }
    for (const auto& [checkpoint_id, ms] : checkpointing_->recoveries()) {
      if (checkpoint_id <= 0) continue;  // a recovery from the start restored nothing
      ++view.num_restored;
      view.latest_restored = rest::RestoredCheckpoint{checkpoint_id, location_of(view.stats, checkpoint_id), false};
    }
    return view;
  }

  void cancel() override {
    cancel_requested_->store(true);
    client_.cancel();
  }

  Result<std::string> trigger_savepoint(const std::string& target_dir, checkpoint::SavepointFormatType format) override {
    SLUICE_RETURN_IF_ERROR(savepoints_possible());
    SLUICE_ASSIGN_OR_RETURN(std::string dir, directory(target_dir));
    SLUICE_ASSIGN_OR_RETURN(std::string trigger_id, savepoints_->trigger_savepoint(dir, format));
    std::lock_guard lock(stop_->mu);
    stop_->unreported.insert(trigger_id);
    return trigger_id;
  }
  Result<std::string> stop_with_savepoint(const std::string& target_dir, bool drain,
                                          checkpoint::SavepointFormatType format) override {
    SLUICE_RETURN_IF_ERROR(savepoints_possible());
    SLUICE_ASSIGN_OR_RETURN(std::string dir, directory(target_dir));
    SLUICE_ASSIGN_OR_RETURN(std::string trigger_id, savepoints_->stop_with_savepoint(dir, drain, format));
    std::lock_guard lock(stop_->mu);
    stop_->trigger_id = trigger_id;
    stop_->unreported.insert(trigger_id);
    return trigger_id;
  }
  std::vector<rest::RestTaskManager> task_managers() const override {
    std::vector<rest::RestTaskManager> out;
    if (placement_ == nullptr) return out;  // a job that is not deployed on slots (BATCH)
    for (const cluster::TaskManagerInfo& tm : placement_->task_managers()) {
      const cluster::TaskManagerRegistration& r = tm.registration;
      out.push_back({r.task_manager_id, r.host, r.rpc_port, r.data_port, r.num_slots, r.num_slots - tm.allocated_slots,
                     tm.last_heartbeat_ms});
    }
    return out;
  }
  std::vector<MetricValue> metrics() const override { return client_.metrics().snapshot(); }
  std::vector<rest::RestException> exceptions() const override {
    std::vector<rest::RestException> out;
    if (savepoints_ == nullptr) return out;  // a BATCH job keeps no exception history
    for (const cluster::JobException& e : savepoints_->exception_history()) {
      out.push_back({e.timestamp_ms, e.exception_name, e.message, e.task_name, e.location, e.task_manager_id});
    }
    return out;
  }
  int64_t num_exceptions() const override { return savepoints_ == nullptr ? 0 : savepoints_->num_exceptions(); }
  std::vector<rest::RestSubtask> subtasks() const override {
    std::vector<rest::RestSubtask> out;
    if (placement_ == nullptr) return out;
    for (const cluster::SubtaskLocation& l : placement_->subtask_locations()) {
      out.push_back({l.id.vertex.value(), l.id.subtask.value(), l.id.attempt_number, l.host, l.task_manager_id});
    }
    return out;
  }

  std::optional<rest::RestSavepointStatus> savepoint_status(const std::string& trigger_id) override {
    if (savepoints_ == nullptr) return std::nullopt;
    std::optional<cluster::SavepointRequestStatus> st = savepoints_->savepoint_status(trigger_id);
    if (!st) return std::nullopt;
    rest::RestSavepointStatus out;
    out.in_progress = st->state == cluster::SavepointRequestStatus::State::kInProgress;
    out.location = st->location;
    if (st->state == cluster::SavepointRequestStatus::State::kFailed) out.failure = st->cause;
    if (!out.in_progress) {
      std::lock_guard lock(stop_->mu);
      stop_->unreported.erase(trigger_id);
      stop_->cv.notify_all();
    }
    return out;
  }

 private:
  // Where completed checkpoint `id` is, if the statistics still hold it.
  static std::string location_of(const coordinator::CheckpointStatsSnapshot& stats, int64_t id) {
    if (stats.latest_completed && stats.latest_completed->id.value() == id) return stats.latest_completed->location;
    for (const auto& e : stats.history) {
      if (e.id.value() == id) return e.location;
    }
    return "";
  }

  Status savepoints_possible() const {
    if (savepoints_ != nullptr) return Status::ok();
    return Status::failed_precondition("job " + overview_.job_id.to_hex() +
                                       " has no checkpoint coordinator, which takes savepoints (a BATCH job takes "
                                       "none)");
  }
  Result<std::string> directory(const std::string& target_dir) const {
    if (!target_dir.empty()) return target_dir;
    if (!default_savepoint_dir_.empty()) return default_savepoint_dir_;
    return checkpoint::no_savepoint_directory("savepoint of job " + overview_.job_id.to_hex());
  }

  rest::RestJobOverview overview_;
  JobClient& client_;
  cluster::CheckpointingJobClient* checkpointing_;  // checkpoint statistics: only with checkpointing on
  cluster::CheckpointingJobClient* savepoints_;     // every job with a checkpoint coordinator (not BATCH)
  const cluster::JobPlacementView* placement_;  // null for a job not placed on slots
  std::shared_ptr<std::atomic<bool>> cancel_requested_;
  std::string default_savepoint_dir_;
  std::shared_ptr<StopTracking> stop_;
};

// The checkpointing settings as GET /jobs/:jobid/checkpoints/config reports them, with Flink's class names.
rest::RestCheckpointConfig checkpoint_config_of(const Configuration& config) {
  rest::RestCheckpointConfig c;
  c.exactly_once = config.get(options::kCheckpointingMode) == CheckpointingMode::kExactlyOnce;
  c.interval_ms = config.get(options::kCheckpointingInterval).count();
  c.timeout_ms = config.get(options::kCheckpointingTimeout).count();
  c.min_pause_ms = config.get(options::kCheckpointingMinPause).count();
  c.max_concurrent = config.get(options::kMaxConcurrentCheckpoints);
  const ExternalizedCheckpointRetention retention = config.get(options::kExternalizedCheckpointRetention);
  c.externalized = retention != ExternalizedCheckpointRetention::kNoExternalizedCheckpoints;
  c.delete_on_cancellation = retention == ExternalizedCheckpointRetention::kDeleteOnCancellation;
  const bool rocksdb = state_backend_kind_of(config) == StateBackendType::kRocksDB;
  c.state_backend = rocksdb ? "EmbeddedRocksDBStateBackend" : "HashMapStateBackend";
  auto storage = checkpoint_storage_type(config);
  const bool in_memory = storage.is_ok() && *storage == CheckpointStorageType::kJobManager;
  c.checkpoint_storage = in_memory ? "JobManagerCheckpointStorage" : "FileSystemCheckpointStorage";
  c.unaligned = config.get(options::kUnalignedCheckpoints);
  c.tolerable_failed_checkpoints = config.get(options::kTolerableFailedCheckpoints);
  c.aligned_checkpoint_timeout_ms = config.get(options::kAlignedCheckpointTimeout).count();
  c.checkpoints_after_tasks_finish = config.get(options::kCheckpointsAfterTasksFinish);
  return c;
}

}  // namespace

struct JobEndpoint::State {
  std::unique_ptr<rest::RestServer> server;
  rest::RestJobOverview overview;
  bool checkpointing = false;
  std::string default_savepoint_dir;
  std::shared_ptr<StopTracking> stop = std::make_shared<StopTracking>();
  std::unique_ptr<rest::ScopedJobRegistration> registration;
  bool serving = false;
  std::string url;
};

JobEndpoint::JobEndpoint(std::unique_ptr<State> state) : state_(std::move(state)) {}

JobEndpoint::~JobEndpoint() { close(); }

Result<std::unique_ptr<JobEndpoint>> JobEndpoint::open(const Configuration& config) {
  SLUICE_ASSIGN_OR_RETURN(rest::RestServerConfig rc, rest::rest_server_config_of(config));
  auto state = std::make_unique<State>();
  SLUICE_ASSIGN_OR_RETURN(state->server, rest::RestServer::start(rc));
  state->checkpointing = checkpointing_enabled(config);
  state->default_savepoint_dir = config.get(options::kSavepointDirectory);
  if (state->checkpointing) state->overview.checkpoint_config = checkpoint_config_of(config);
  for (const auto& [key, value] : config.to_map()) {
    state->overview.configuration[key] = is_sensitive_key(key) ? std::string(kRedacted) : value;
  }
  return std::unique_ptr<JobEndpoint>(new JobEndpoint(std::move(state)));
}

void JobEndpoint::describe(const StreamExecutionEnvironment& env, const std::string& job_name) {
  const std::string configured = env.configuration().get(options::kPipelineName);
  state_->overview.name = configured.empty() ? job_name : configured;
  graph::JobGraphOptions options;
  options.job_name = state_->overview.name;
  options.default_parallelism = env.parallelism();
  options.max_parallelism = env.max_parallelism();
  auto jg = graph::build_job_graph(env.stream_graph(), options);
  if (!jg.is_ok()) return;  // execute_async reports the same error
  state_->overview.max_parallelism = jg->max_parallelism;
  state_->overview.parallelism = env.parallelism();
  const StreamGraph& sg = env.stream_graph();
  for (const graph::JobVertex& v : jg->vertices) {
    rest::RestVertex rv{v.id, v.name, v.parallelism, {}, {}, {}, {}};
    for (int32_t node : v.nodes) rv.operators.push_back(sg.node(node).name);
    for (const graph::JobEdge& e : jg->edges) {
      if (e.target_vertex == v.id) rv.inputs.push_back({e.source_vertex, partitioning_name(e.partitioning)});
    }
    // A source's head reads no network input; the vertex's output is what its operators send over job edges.
    if (!v.is_source) rv.input_operator = sg.node(v.head_node).name;
    for (const graph::JobEdge* e : jg->outputs_of(v.id)) {
      const std::string& name = sg.node(sg.edges.at(static_cast<size_t>(e->stream_edge)).source_id).name;
      if (std::find(rv.output_operators.begin(), rv.output_operators.end(), name) == rv.output_operators.end()) {
        rv.output_operators.push_back(name);
      }
    }
    state_->overview.vertices.push_back(std::move(rv));
  }
}

void JobEndpoint::serve(JobClient& client) {
  State& s = *state_;
  s.overview.job_id = client.job_id();
  s.overview.start_time_ms = SystemClock::shared()->now_ms();
  s.server->add_job(std::make_shared<ClientRestJob>(s.overview, client, s.checkpointing, cancel_requested_,
                                                   s.default_savepoint_dir, s.stop));
  {
    std::lock_guard lock(s.stop->mu);
    s.stop->client = dynamic_cast<cluster::CheckpointingJobClient*>(&client);
  }
  s.serving = true;

  rest::JobRegistration r;
  r.job_id = s.overview.job_id;
  r.pid = rest::current_pid();
  r.pid_start_ticks = rest::process_start_ticks(r.pid);
  r.address = s.server->config().address;
  r.port = s.server->port();
  r.name = s.overview.name;
  r.start_time_ms = s.overview.start_time_ms;
  rest::JobRegistry registry(rest::default_runtime_dir());
  s.registration = std::make_unique<rest::ScopedJobRegistration>(registry, r);
  if (!s.registration->status().is_ok()) {
    std::fprintf(stderr, "warning: the job is not in the job registry, so `sluice list` will not show it: %s\n",
                 s.registration->status().to_string().c_str());
  }
  s.url = "http://" + r.address + ":" + std::to_string(r.port) + "/jobs/" + r.job_id.to_hex();
}

std::string JobEndpoint::url() const { return state_->url; }

std::optional<std::string> JobEndpoint::stopped_with_savepoint() const {
  std::string trigger_id;
  cluster::CheckpointingJobClient* client = nullptr;
  {
    std::lock_guard lock(state_->stop->mu);
    trigger_id = state_->stop->trigger_id;
    client = state_->stop->client;
  }
  if (trigger_id.empty() || client == nullptr) return std::nullopt;
  auto st = client->savepoint_status(trigger_id);
  if (!st || st->state != cluster::SavepointRequestStatus::State::kCompleted) return std::nullopt;
  return st->location;
}

void JobEndpoint::close() {
  if (!state_) return;
  {
    // A stop-with-savepoint ends the job, and a savepoint requested meanwhile ends with it: keep serving until every
    // accepted request's requester read its outcome (`sluice stop` and `sluice savepoint` poll it), for a few seconds
    // at most.
    std::unique_lock lock(state_->stop->mu);
    if (!state_->stop->unreported.empty()) {
      state_->stop->cv.wait_for(lock, std::chrono::seconds(5), [&] { return state_->stop->unreported.empty(); });
    }
  }
  if (state_->registration) state_->registration->release();
  if (state_->serving) state_->server->remove_job(state_->overview.job_id);
  state_->server->stop();
  state_->serving = false;
}

}  // namespace sluice::api
