#include "rest/http_listener.h"

#include <sys/socket.h>

#include <chrono>

namespace sluice::rest {
namespace {

// Requests are rare and small: two workers answer them (httplib's default pool is 8+ threads).
constexpr size_t kWorkerThreads = 2;

}  // namespace

HttpListener::HttpListener() {
  server_.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  // httplib's default also sets SO_REUSEPORT, which lets a second process bind a port in use and share its
  // connections: a fixed port taken by another process must fail instead. SO_REUSEADDR alone still allows a
  // restart while old connections linger in TIME_WAIT.
  server_.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // One request per connection: stop() then never waits on an idle keep-alive connection.
  server_.set_keep_alive_max_count(1);
  server_.set_read_timeout(std::chrono::seconds(5));
  server_.set_write_timeout(std::chrono::seconds(5));
}

HttpListener::~HttpListener() { stop(); }

Status HttpListener::start(const std::string& bind_address, int32_t port, const std::string& keys) {
  if (port < 0 || port > 65535) {
    return Status::invalid_argument(keys + ": " + std::to_string(port) + " is not a port: expected 0..65535");
  }
  if (port == 0) {
    port_ = server_.bind_to_any_port(bind_address);
    if (port_ < 0) port_ = 0;
  } else if (server_.bind_to_port(bind_address, port)) {
    port_ = port;
  }
  if (port_ <= 0) {
    return Status::io_error("cannot bind to " + bind_address + ":" +
                            (port == 0 ? std::string("<ephemeral port>") : std::to_string(port)) + " (" + keys +
                            "): the address is not local or the port is in use");
  }
  listener_ = std::thread([this] {
    server_.listen_after_bind();
    listener_done_ = true;
  });
  // listen_after_bind() marks the server running before it accepts; the socket already queues connections, so
  // a request sent meanwhile waits rather than fails. Wait anyway, so that stop() right after start() is safe.
  while (!server_.is_running() && !listener_done_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::ok();
}

void HttpListener::stop() {
  std::call_once(stopped_, [this] {
    server_.stop();
    if (listener_.joinable()) listener_.join();  // its worker pool is joined before it returns
  });
}

}  // namespace sluice::rest
