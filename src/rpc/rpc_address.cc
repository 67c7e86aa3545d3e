#include "rpc/rpc_address.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sluice/config/cluster_options.h"

namespace sluice::rpc {

RpcServerKeys RpcServerKeys::job_manager() {
  return {options::kJobManagerRpcAddress.key, options::kJobManagerRpcPort.key};
}

RpcServerKeys RpcServerKeys::task_manager() {
  return {options::kTaskManagerHost.key, options::kTaskManagerRpcPort.key};
}

std::string host_port(const std::string& host, int32_t port) {
  const bool ipv6_literal = !host.empty() && host.front() != '[' && host.find(':') != std::string::npos;
  return (ipv6_literal ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Status bind_failure(const std::string& host, int32_t port, const RpcServerKeys& keys) {
  const std::string where = host_port(host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Status::io_error(keys.address + " '" + host + "': cannot serve the control plane on " + where +
                            ": the address does not resolve (" + gai_strerror(rc) + ")");
  }
  int error = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    error = bind(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    close(fd);
    if (error == 0) break;
  }
  freeaddrinfo(found);
  if (error == EADDRINUSE) {
    return Status::io_error(keys.port + " " + std::to_string(port) + ": cannot serve the control plane on " + where +
                            ": " + std::strerror(error) + " (another process listens there)");
  }
  if (error != 0) {
    return Status::io_error(keys.address + " '" + host + "': cannot serve the control plane on " + where + ": " +
                            std::strerror(error) + " (expected an address of this host)");
  }
  return Status::io_error("cannot serve the control plane on " + where + " (" + keys.address + " / " + keys.port +
                          "): gRPC could not bind it");
}

}  // namespace sluice::rpc
