#include "cluster/job_status_metrics.h"

#include "sluice/metrics/metric_names.h"

namespace sluice {

JobStatusMetrics::JobStatusMetrics(MetricGroup* job, const Clock* clock)
    : clock_(clock != nullptr ? clock : SystemClock::shared().get()) {
  if (job == nullptr) return;
  auto f = figures_;
  job->gauge(metric_names::kNumRestarts, [f] { return static_cast<double>(f->restarts.load()); });
  job->gauge(metric_names::kUptime, [f, clock = clock_] {
    switch (f->phase.load()) {
      case 1: return static_cast<double>((clock->monotonic_ns() - f->running_since_ns.load()) / 1'000'000);
      case 2: return -1.0;
      default: return 0.0;
    }
  });
}

void JobStatusMetrics::on_status(JobStatus status) {
  if (is_globally_terminal(status)) {
    figures_->phase.store(2);
  } else if (status == JobStatus::kRunning) {
    if (figures_->phase.load() == 1) return;  // still running: the uptime goes on
    figures_->running_since_ns.store(clock_->monotonic_ns());
    figures_->phase.store(1);
  } else {
    figures_->phase.store(0);
  }
}

void JobStatusMetrics::on_restart() { figures_->restarts.fetch_add(1); }

}  // namespace sluice
