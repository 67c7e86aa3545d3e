#include "task_manager_run.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/job_signals.h"
#include "cluster/task_manager_job_client.h"
#include "rest/metrics_server.h"
#include "runtime/fault_injection.h"
#include "sluice/config/cluster_options.h"
#include "sluice/config/options.h"

namespace sluice::cli {

int run_task_manager(StreamExecutionEnvironment& env, const std::string& job_name, const std::string& kill_at) {
  api::JobSignalScope signals;  // SIGINT / SIGTERM cancel the job cleanly (api/job_signals.h)
  auto client = env.execute_async(job_name);
  if (!client.is_ok()) {
    signals.set_cancel({});
    std::fprintf(stderr, "error: %s\n", client.status().to_string().c_str());
    return 2;
  }
  if (!kill_at.empty()) {
    const size_t at = kill_at.find('@');
    const std::optional<runtime::FailurePoint> point = runtime::parse_failure_point(kill_at.substr(0, at));
    int64_t from_checkpoint = 0;
    bool ok = point.has_value();
    if (ok && at != std::string::npos) {
      const std::string n = kill_at.substr(at + 1);
      ok = !n.empty() && n.size() < 10 && n.find_first_not_of("0123456789") == std::string::npos;
      if (ok) from_checkpoint = std::stoll(n);
    }
    auto* tm = dynamic_cast<cluster::TaskManagerJobClient*>(client->get());
    Status armed = ok && tm != nullptr ? tm->arm_process_kill(*point, -1, -1, from_checkpoint)
                      : Status::invalid_argument("--kill-at '" + kill_at + "': expected POINT[@CHECKPOINT] with a failure "
                                                 "point (task, source, keyed-operator, sink, "
                                                 "between-sync-and-async-snapshot, between-completion-and-commit, "
                                                 "after-commit, restore) and a checkpoint id");
    if (!armed.is_ok()) {
      (*client)->cancel();
      (void)(*client)->wait();
      signals.set_cancel({});
      std::fprintf(stderr, "error: %s\n", armed.to_string().c_str());
      return 2;
    }
  }
  // metrics.reporter.prom.port: this process's task metrics for Prometheus (a TaskManager has no REST endpoint).
  std::unique_ptr<rest::MetricsServer> metrics;
  if (const int32_t port = env.configuration().get(options::kMetricsPrometheusPort); port >= 0) {
    const std::string host = env.configuration().get(options::kTaskManagerHost);
    auto started = rest::MetricsServer::start(host, port, [c = client->get(), host] {
      return std::vector<rest::JobMetrics>{{{{"job_id", c->job_id().to_hex()}, {"host", host}}, c->metrics().snapshot()}};
    });
    if (!started.is_ok()) {
      (*client)->cancel();
      (void)(*client)->wait();
      signals.set_cancel({});
      std::fprintf(stderr, "error: %s\n", started.status().to_string().c_str());
      return 2;
    }
    metrics = std::move(*started);
    std::printf("TaskManager metrics: http://%s:%d/metrics\n", host.c_str(), metrics->port());
    std::fflush(stdout);
  }
  signals.set_cancel([c = client->get()] { c->cancel(); });
  JobExecutionResult result = (*client)->wait();
  if (metrics) metrics->stop();  // before the JobClient its requests read goes away
  signals.set_cancel({});
  std::printf("TaskManager ended: job %s%s%s\n", job_status_name(result.status), result.error.is_ok() ? "" : ": ",
              result.error.is_ok() ? "" : result.error.to_string().c_str());
  if (int sig = signals.received()) return 128 + sig;
  return result.status == JobStatus::kFinished ? 0 : 1;
}

}  // namespace sluice::cli
