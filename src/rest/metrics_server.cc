#include "rest/metrics_server.h"

#include <utility>

#include "rest/http_listener.h"

namespace sluice::rest {

MetricsServer::MetricsServer() : listener_(std::make_unique<HttpListener>()) {}

MetricsServer::~MetricsServer() { stop(); }

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& bind_address, int32_t port,
                                                            std::function<std::vector<JobMetrics>()> metrics) {
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->metrics_ = std::move(metrics);
  MetricsServer* raw = s.get();
  s->listener_->server().Get("/metrics", [raw](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(prometheus_text(raw->metrics_()), "text/plain; version=0.0.4; charset=utf-8");
  });
  SLUICE_RETURN_IF_ERROR(
      s->listener_->start(bind_address, port, "taskmanager.host, metrics.reporter.prom.port").with_context("the metrics endpoint"));
  return s;
}

int32_t MetricsServer::port() const { return listener_->port(); }

void MetricsServer::stop() { listener_->stop(); }

}  // namespace sluice::rest
