// The listening side shared by the REST endpoint (rest_server.h) and the TaskManager's metrics endpoint
// (metrics_server.h): a cpp-httplib server bound to one address and port, answering on a small worker pool from a
// thread of its own, one request per connection, stopped and joined once. Internal to src/rest.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "sluice/core/status.h"

namespace sluice::rest {

class HttpListener {
 public:
  HttpListener();
  ~HttpListener();  // stop()
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Install the routes on server() first, then start: binds `bind_address`:`port` (0: a port the kernel chooses)
  // and serves. kIoError naming the address and `keys` (the configuration keys that set them) when it cannot bind.
  [[nodiscard]] Status start(const std::string& bind_address, int32_t port, const std::string& keys);
  httplib::Server& server() { return server_; }
  int32_t port() const { return port_; }
  // Stops accepting requests and waits for those in flight. Idempotent.
  void stop();

 private:
  httplib::Server server_;
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
  int32_t port_ = 0;
  std::once_flag stopped_;
};

}  // namespace sluice::rest
