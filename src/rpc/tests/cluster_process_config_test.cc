// The cluster options of one process (rpc/cluster_process.h): Flink's keys, their defaults, and the values refused.
#include "rpc/cluster_process.h"

#include <gtest/gtest.h>

#include "sluice/config/configuration.h"

namespace sluice::rpc {
namespace {

Result<ClusterProcessConfig> from(std::initializer_list<std::pair<const char*, const char*>> values) {
  Configuration config;
  for (const auto& [key, value] : values) {
    Status s = config.set_string(key, value);
    if (!s.is_ok()) return s;
  }
  return ClusterProcessConfig::from(config);
}

TEST(ClusterProcessConfig, FlinksDefaults) {
  auto c = from({});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->jobmanager_port, 6123);
  EXPECT_EQ(c->heartbeats.interval_ms, 10'000);
  EXPECT_EQ(c->heartbeats.timeout_ms, 50'000);
  EXPECT_EQ(c->slot_request_timeout_ms, 300'000);
  EXPECT_EQ(c->ask_timeout_ms, 10'000);
}

TEST(ClusterProcessConfig, TheAskTimeoutUnderItsKeyAndItsDeprecatedOne) {
  auto c = from({{"pekko.ask.timeout", "3s"}});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->ask_timeout_ms, 3'000);
  c = from({{"akka.ask.timeout", "250ms"}});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->ask_timeout_ms, 250);
  c = from({{"pekko.ask.timeout", "0s"}});
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("pekko.ask.timeout"), std::string::npos) << c.status().to_string();
}

TEST(ClusterProcessConfig, ATaskManagerHostThatIsNoIpAddressAndHeartbeatsThatCannotWorkAreRefused) {
  auto c = from({{"taskmanager.host", "worker-1.example"}});
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("taskmanager.host 'worker-1.example': expected an IP address"), std::string::npos)
      << c.status().to_string();
  c = from({{"heartbeat.interval", "5s"}, {"heartbeat.timeout", "5s"}});
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("heartbeat.timeout"), std::string::npos) << c.status().to_string();
}

}  // namespace
}  // namespace sluice::rpc
