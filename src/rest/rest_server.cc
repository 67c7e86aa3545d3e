#include "rest/rest_server.h"

#include <mutex>

#include "rest/http_listener.h"
#include "rest/rest_routes.h"
#include "sluice/config/options.h"

namespace sluice::rest {

Result<RestServerConfig> rest_server_config_of(const Configuration& config) {
  RestServerConfig out;
  const std::string address = config.get(options::kRestAddress);
  const std::string bind = config.get(options::kRestBindAddress);
  out.bind_address = !bind.empty() ? bind : !address.empty() ? address : "127.0.0.1";
  out.address = !address.empty() ? address
                : (out.bind_address == "0.0.0.0" || out.bind_address == "::") ? "127.0.0.1"
                                                                              : out.bind_address;
  out.port = config.get(options::kRestPort);
  return out;
}

struct RestServer::Impl {
  RestServerConfig config;
  RestRoutes routes;     // before the listener: it outlives the handlers installed on its server
  HttpListener listener;
  std::once_flag stopped;
};

RestServer::RestServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RestServer::~RestServer() { stop(); }

Result<std::unique_ptr<RestServer>> RestServer::start(const RestServerConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->routes.set_advertised_address(config.address);
  impl->routes.install(impl->listener.server());
  SLUICE_RETURN_IF_ERROR(impl->listener.start(config.bind_address, config.port,
                                              "rest.bind-address / rest.address, rest.port")
                             .with_context("the REST endpoint"));
  return std::unique_ptr<RestServer>(new RestServer(std::move(impl)));
}

int32_t RestServer::port() const { return impl_->listener.port(); }
const RestServerConfig& RestServer::config() const { return impl_->config; }

void RestServer::add_job(std::shared_ptr<RestJob> job) { impl_->routes.add_job(std::move(job)); }

void RestServer::remove_job(const JobId& job_id) { impl_->routes.remove_job(job_id); }

void RestServer::stop() {
  std::call_once(impl_->stopped, [this] {
    impl_->listener.stop();
    impl_->routes.clear();
  });
}

}  // namespace sluice::rest
