// MetricsServer: GET /metrics of a process without a REST endpoint - a TaskManager (metrics.reporter.prom.port,
// the key of Flink's Prometheus reporter) - in the same format as the REST endpoint's (prometheus_text.h). Other
// paths answer 404.
// Thread-safety: `metrics` is called from the server's worker threads, concurrently; it must be thread-safe and
// outlive the server (stop() or destruction first).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rest/prometheus_text.h"
#include "sluice/core/status.h"

namespace sluice::rest {

class HttpListener;

class MetricsServer {
 public:
  // Binds `bind_address`:`port` (0: a port the kernel chooses) and serves what `metrics` returns at each request.
  // kIoError naming the address and metrics.reporter.prom.port when it cannot bind.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& bind_address, int32_t port,
                                                      std::function<std::vector<JobMetrics>()> metrics);
  ~MetricsServer();  // stop()
  int32_t port() const;
  void stop();  // idempotent

 private:
  MetricsServer();
  std::function<std::vector<JobMetrics>()> metrics_;
  std::unique_ptr<HttpListener> listener_;  // after metrics_: its handler uses it until stopped
};

}  // namespace sluice::rest
