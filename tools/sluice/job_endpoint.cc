#include "job_endpoint.h"

#include <cstdio>
#include <utility>

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "rest/job_registry.h"
#include "rest/rest_server.h"
#include "sluice/config/derived_options.h"
#include "sluice/config/options.h"
#include "sluice/core/clock.h"

namespace sluice::cli {
namespace {

// The RestJob over the tool's JobClient (and, when checkpointing, its CheckpointingJobClient side).
class ClientRestJob final : public rest::RestJob {
 public:
  ClientRestJob(rest::RestJobOverview overview, JobClient& client, bool checkpointing,
                std::shared_ptr<std::atomic<bool>> cancel_requested)
      : overview_(std::move(overview)),
        client_(client),
        checkpointing_(checkpointing ? dynamic_cast<cluster::CheckpointingJobClient*>(&client) : nullptr),
        cancel_requested_(std::move(cancel_requested)) {}

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

 private:
  // Where completed checkpoint `id` is, if the statistics still hold it.
  static std::string location_of(const coordinator::CheckpointStatsSnapshot& stats, int64_t id) {
    if (stats.latest_completed && stats.latest_completed->id.value() == id) return stats.latest_completed->location;
    for (const auto& e : stats.history) {
      if (e.id.value() == id) return e.location;
    }
    return "";
  }

  rest::RestJobOverview overview_;
  JobClient& client_;
  cluster::CheckpointingJobClient* checkpointing_;
  std::shared_ptr<std::atomic<bool>> cancel_requested_;
};

}  // namespace

struct JobEndpoint::State {
  std::unique_ptr<rest::RestServer> server;
  rest::RestJobOverview overview;
  bool checkpointing = false;
  std::unique_ptr<rest::ScopedJobRegistration> registration;
  bool serving = false;
};

JobEndpoint::JobEndpoint(std::unique_ptr<State> state) : state_(std::move(state)) {}

JobEndpoint::~JobEndpoint() { close(); }

Result<std::unique_ptr<JobEndpoint>> JobEndpoint::open(const Configuration& config) {
  SLUICE_ASSIGN_OR_RETURN(rest::RestServerConfig rc, rest::rest_server_config_of(config));
  auto state = std::make_unique<State>();
  SLUICE_ASSIGN_OR_RETURN(state->server, rest::RestServer::start(rc));
  state->checkpointing = checkpointing_enabled(config);
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
  for (const graph::JobVertex& v : jg->vertices) state_->overview.vertices.push_back({v.id, v.name, v.parallelism});
}

void JobEndpoint::serve(JobClient& client) {
  State& s = *state_;
  s.overview.job_id = client.job_id();
  s.overview.start_time_ms = SystemClock::shared()->now_ms();
  s.server->add_job(std::make_shared<ClientRestJob>(s.overview, client, s.checkpointing, cancel_requested_));
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
  std::printf("job %s: REST endpoint http://%s:%d/jobs/%s\n", r.job_id.to_hex().c_str(), r.address.c_str(), r.port,
              r.job_id.to_hex().c_str());
  std::fflush(stdout);
}

void JobEndpoint::close() {
  if (!state_) return;
  if (state_->registration) state_->registration->release();
  if (state_->serving) state_->server->remove_job(state_->overview.job_id);
  state_->server->stop();
  state_->serving = false;
}

}  // namespace sluice::cli
