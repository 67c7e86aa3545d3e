// RpcServer and TaskManager::start when the control-plane address cannot be listened on: a port another server
// holds (gRPC's SO_REUSEPORT is off, so the second bind fails), an address not on this host, a name that does not
// resolve. Each fails with kIOError naming the config key to change, and a TaskManager that cannot bind returns
// its error instead of crashing while it tears down what it had started.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rpc/resource_manager_service.h"
#include "rpc/task_manager.h"

namespace sluice::rpc {
namespace {

constexpr const char* kNotOnThisHost = "192.0.2.1";  // TEST-NET-1 (RFC 5737): never a local address

// A service to serve: gRPC refuses to build a server without one.
struct Served {
  Served() : rm("0.1.0", 42, cluster::HeartbeatSettings{100, 3'000, 5}, SystemClock::shared().get()), service(&rm, 1) {}
  ~Served() { service.shutdown(); }
  std::vector<grpc::Service*> services() { return {&service}; }

  cluster::ResourceManager rm;
  ResourceManagerService service;
};

bool has_ipv6_loopback() {
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

TEST(RpcServer, ASecondServerOnTheSamePortFailsNamingThePortKey) {
  Served served;
  auto first = RpcServer::start("127.0.0.1", 0, served.services());
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const int32_t port = (*first)->port();
  auto second = RpcServer::start("127.0.0.1", port, served.services());
  ASSERT_FALSE(second.is_ok()) << "a second server bound port " << port << ", which the first one serves";
  EXPECT_EQ(second.status().code(), StatusCode::kIOError);
  const std::string message = second.status().to_string();
  EXPECT_NE(message.find("jobmanager.rpc.port " + std::to_string(port)), std::string::npos) << message;
  EXPECT_NE(message.find("Address already in use"), std::string::npos) << message;
}

TEST(RpcServer, APortInUseIsNamedByTheKeysItCameFrom) {
  Served served;
  auto first = RpcServer::start("127.0.0.1", 0, served.services());
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const int32_t port = (*first)->port();
  auto second = RpcServer::start("127.0.0.1", port, served.services(), RpcServerKeys::task_manager());
  ASSERT_FALSE(second.is_ok());
  const std::string message = second.status().to_string();
  EXPECT_NE(message.find("taskmanager.rpc.port " + std::to_string(port)), std::string::npos) << message;
  EXPECT_EQ(message.find("jobmanager"), std::string::npos) << message;
}

TEST(RpcServer, AnAddressNotOnThisHostFailsNamingTheAddressKey) {
  Served served;
  auto server = RpcServer::start(kNotOnThisHost, 0, served.services());
  ASSERT_FALSE(server.is_ok());
  EXPECT_EQ(server.status().code(), StatusCode::kIOError);
  const std::string message = server.status().to_string();
  EXPECT_NE(message.find(std::string("jobmanager.rpc.address '") + kNotOnThisHost + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("Cannot assign requested address"), std::string::npos) << message;
}

TEST(RpcServer, ANameThatDoesNotResolveFailsNamingTheAddressKey) {
  Served served;
  auto server = RpcServer::start("abc.invalid", 0, served.services());
  ASSERT_FALSE(server.is_ok());
  const std::string message = server.status().to_string();
  EXPECT_NE(message.find("jobmanager.rpc.address 'abc.invalid'"), std::string::npos) << message;
  EXPECT_NE(message.find("does not resolve"), std::string::npos) << message;
}

TEST(RpcServer, AnIpv6LiteralIsServed) {
  // What is under test is that an IPv6 literal reaches gRPC bracketed ("[::1]:port"); that needs a host with an IPv6
  // loopback, which containers and CI machines may switch off (net.ipv6.conf.all.disable_ipv6). Without one the test
  // says so and skips; the IPv4 paths are covered by every other test here.
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  Served served;
  auto server = RpcServer::start("::1", 0, served.services());
  ASSERT_TRUE(server.is_ok()) << server.status().to_string();
  EXPECT_GT((*server)->port(), 0);
  EXPECT_EQ(host_port("::1", 6123), "[::1]:6123");
  EXPECT_EQ(host_port("127.0.0.1", 6123), "127.0.0.1:6123");
}

// What TaskManager::start needs before it binds; registering never starts, since the bind fails first.
TaskManagerConfig unbindable_task_manager(const std::string& host, int32_t port) {
  TaskManagerConfig c;
  c.bind_address = host;
  c.rpc_port = port;
  c.task_manager_id = "tm-1";
  c.executor.jobmanager_address = "127.0.0.1:1";
  return c;
}

TEST(TaskManagerStart, APortInUseFailsNamingTaskManagerRpcPortInsteadOfCrashing) {
  Served served;
  auto taken = RpcServer::start("127.0.0.1", 0, served.services());
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  const int32_t port = (*taken)->port();
  auto tm = TaskManager::start(unbindable_task_manager("127.0.0.1", port), SystemClock::shared().get());
  ASSERT_FALSE(tm.is_ok());
  EXPECT_EQ(tm.status().code(), StatusCode::kIOError);
  const std::string message = tm.status().to_string();
  EXPECT_NE(message.find("taskmanager.rpc.port " + std::to_string(port)), std::string::npos) << message;
}

TEST(TaskManagerStart, AHostNotOnThisMachineFailsNamingTaskManagerHostInsteadOfCrashing) {
  auto tm = TaskManager::start(unbindable_task_manager(kNotOnThisHost, 0), SystemClock::shared().get());
  ASSERT_FALSE(tm.is_ok());
  const std::string message = tm.status().to_string();
  EXPECT_NE(message.find(std::string("taskmanager.host '") + kNotOnThisHost + "'"), std::string::npos) << message;
}

}  // namespace
}  // namespace sluice::rpc
