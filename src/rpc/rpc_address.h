// Where a gRPC server listens and a channel dials: `host:port` with an IPv6 literal in brackets, and the reason a
// listening address could not be bound, named by its config keys (jobmanager.rpc.* or taskmanager.host /
// taskmanager.rpc.port).
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstdint>
#include <string>

#include "sluice/core/status.h"

namespace sluice::rpc {

// The config keys a server's address and port come from, so a bind error names what to change.
struct RpcServerKeys {
  std::string address;  // e.g. "jobmanager.rpc.address"
  std::string port;     // e.g. "jobmanager.rpc.port"

  static RpcServerKeys job_manager();   // jobmanager.rpc.address / jobmanager.rpc.port
  static RpcServerKeys task_manager();  // taskmanager.host / taskmanager.rpc.port
};

// "host:port", or "[host]:port" for an IPv6 literal (gRPC's URI form, RFC 3986).
[[nodiscard]] std::string host_port(const std::string& host, int32_t port);

// Why `host`:`port` (0: an ephemeral port) cannot be listened on, found by binding a plain socket there the way
// gRPC does (SO_REUSEADDR, no SO_REUSEPORT): kIOError naming the port key for a port in use ("Address already in
// use"), the address key for an address that does not resolve or is not on this host. Call it after a server
// failed to bind; it holds the socket only for the check.
[[nodiscard]] Status bind_failure(const std::string& host, int32_t port, const RpcServerKeys& keys);

}  // namespace sluice::rpc
