// TaskManagerDataPlane: one data plane per TaskManager process on its taskmanager.data.port, shared by every deployment;
// opened again only under a new identity and when no deployment uses it; a peer registered again replaces its former
// id.
#include "rpc/task_manager_data_plane.h"

#include <gtest/gtest.h>

#include "rpc/tests/remote_cluster_util.h"
#include "runtime/network/tcp/data_connection_manager.h"

namespace sluice::rpc {
namespace {

constexpr uint64_t kFingerprint = 0xfeedULL;

TEST(TaskManagerDataPlane, OneFixedPortServesEveryDeployment) {
  const uint16_t port = remote_test::free_port();
  ASSERT_NE(port, 0);
  TaskManagerDataPlane plane("127.0.0.1", port);
  EXPECT_EQ(plane.manager(), nullptr) << "opened lazily";
  Result<uint16_t> first = plane.open(1, kFingerprint);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_EQ(*first, port);
  plane.track(10, std::make_shared<ChannelFailures>(nullptr, 0));
  runtime::tcp::DataConnectionManager* manager = plane.manager();
  // A second deployment of the same registration gets the same data plane on the same port.
  Result<uint16_t> second = plane.open(1, kFingerprint);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  EXPECT_EQ(*second, port);
  EXPECT_EQ(plane.manager(), manager);
  plane.track(11, std::make_shared<ChannelFailures>(nullptr, 0));
  plane.release(10);
  EXPECT_EQ(plane.manager(), manager) << "a deployment's end leaves the data plane to the others";
  EXPECT_TRUE(remote_test::listening(port));
}

// A data plane on a fixed port, open as TaskManager 1 with deployment 10 on it.
class FixedPortDataPlane : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(port, 0);
    ASSERT_TRUE(plane.open(1, kFingerprint).is_ok());
    plane.track(10, std::make_shared<ChannelFailures>(nullptr, 0));
  }
  const uint16_t port = remote_test::free_port();
  TaskManagerDataPlane plane{"127.0.0.1", port};
};

TEST_F(FixedPortDataPlane, AnotherIdentityWaitsUntilNoDeploymentUsesIt) {
  Result<uint16_t> other = plane.open(2, kFingerprint + 1);
  ASSERT_FALSE(other.is_ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition) << other.status().to_string();
  plane.release(10);
  // Unused now: started again under the new identity, on the same fixed port.
  Result<uint16_t> again = plane.open(2, kFingerprint + 1);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(*again, port);
  EXPECT_EQ(plane.manager()->taskmanager_id(), 2);
}

TEST_F(FixedPortDataPlane, AResetClosesThePortAndOpensAgain) {
  plane.reset();  // the registration ended
  EXPECT_EQ(plane.manager(), nullptr);
  EXPECT_FALSE(remote_test::listening(port));
  plane.release(10);  // a deployment that goes after the reset: nothing to do
  Result<uint16_t> again = plane.open(4, kFingerprint);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(*again, port);
}

TEST(TaskManagerDataPlane, APeerRegisteredAgainReplacesItsFormerId) {
  TaskManagerDataPlane plane("127.0.0.1", 0);
  EXPECT_EQ(plane.declare_peers({{2, "tm-b", "127.0.0.1", 1}}).code(), StatusCode::kFailedPrecondition)
      << "not open yet";
  ASSERT_TRUE(plane.open(1, kFingerprint).is_ok());
  ASSERT_TRUE(plane.declare_peers({{1, "tm-a", "127.0.0.1", 1}, {2, "tm-b", "127.0.0.1", 2}}).is_ok());
  ASSERT_TRUE(plane.declare_peers({{2, "tm-b", "127.0.0.1", 2}}).is_ok()) << "declared again by the next deployment";
  runtime::NetworkConfig config;
  EXPECT_TRUE(plane.manager()->register_input(runtime::tcp::RemoteChannelId{0, 0, 0, 0}, 2, config, 10).is_ok());
  // tm-b registered again: registration 3. Its former id is no peer any more.
  ASSERT_TRUE(plane.declare_peers({{3, "tm-b", "127.0.0.1", 3}}).is_ok());
  EXPECT_EQ(plane.manager()->register_input(runtime::tcp::RemoteChannelId{0, 0, 0, 1}, 2, config, 11).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(plane.manager()->register_input(runtime::tcp::RemoteChannelId{0, 0, 0, 1}, 3, config, 11).is_ok());
}

}  // namespace
}  // namespace sluice::rpc
