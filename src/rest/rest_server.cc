#include "rest/rest_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "rest/rest_routes.h"
#include "sluice/config/options.h"

namespace sluice::rest {
namespace {

// Control requests are rare and small: two workers answer them (httplib's default pool is 8+ threads).
constexpr size_t kWorkerThreads = 2;

}  // namespace

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
  RestRoutes routes;  // before the server: it outlives the handlers installed on the server
  httplib::Server server;
  std::thread listener;
  std::atomic<bool> listener_done{false};
  int32_t port = 0;
  std::once_flag stopped;
};

RestServer::RestServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RestServer::~RestServer() { stop(); }

Result<std::unique_ptr<RestServer>> RestServer::start(const RestServerConfig& config) {
  if (config.port < 0 || config.port > 65535) {
    return Status::invalid_argument("rest.port " + std::to_string(config.port) + " is not a port: expected 0..65535");
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  // httplib's default also sets SO_REUSEPORT, which lets a second process bind a port in use and share its
  // connections: a fixed rest.port taken by another job must fail instead. SO_REUSEADDR alone still allows a
  // restart while old connections linger in TIME_WAIT.
  impl->server.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // One request per connection: stop() then never waits on an idle keep-alive connection.
  impl->server.set_keep_alive_max_count(1);
  impl->server.set_read_timeout(std::chrono::seconds(5));
  impl->server.set_write_timeout(std::chrono::seconds(5));
  impl->routes.install(impl->server);
  if (config.port == 0) {
    impl->port = impl->server.bind_to_any_port(config.bind_address);
    if (impl->port < 0) impl->port = 0;
  } else if (impl->server.bind_to_port(config.bind_address, config.port)) {
    impl->port = config.port;
  }
  if (impl->port <= 0) {
    return Status::io_error("cannot bind the REST endpoint to " + config.bind_address + ":" +
                            (config.port == 0 ? std::string("<ephemeral port>") : std::to_string(config.port)) +
                            " (rest.bind-address / rest.address, rest.port): the address is not local or the port "
                            "is in use");
  }
  Impl* raw = impl.get();
  impl->listener = std::thread([raw] {
    raw->server.listen_after_bind();
    raw->listener_done = true;
  });
  // listen_after_bind() marks the server running before it accepts; the socket already queues connections, so
  // a request sent meanwhile waits rather than fails. Wait anyway, so that stop() right after start() is safe.
  while (!raw->server.is_running() && !raw->listener_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<RestServer>(new RestServer(std::move(impl)));
}

int32_t RestServer::port() const { return impl_->port; }
const RestServerConfig& RestServer::config() const { return impl_->config; }

void RestServer::add_job(std::shared_ptr<RestJob> job) { impl_->routes.add_job(std::move(job)); }

void RestServer::remove_job(const JobId& job_id) { impl_->routes.remove_job(job_id); }

void RestServer::stop() {
  std::call_once(impl_->stopped, [this] {
    impl_->server.stop();
    if (impl_->listener.joinable()) impl_->listener.join();  // its worker pool is joined before it returns
    impl_->routes.clear();
  });
}

}  // namespace sluice::rest
