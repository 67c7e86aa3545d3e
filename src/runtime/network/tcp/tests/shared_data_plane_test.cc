// One data plane shared by several owners (a TaskManager's deployments): their channels share one connection per
// pair of TaskManagers, a release unregisters one owner's channels and leaves the others flowing, failures name
// their owner, and a peer that registered again under a new id, or dialled again, replaces its stale connection.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tcp/tests/tcp_test_util.h"
#include "runtime/network/tests/back_pressure_util.h"
#include "runtime/network/tests/test_util.h"

namespace sluice::runtime::tcp {
namespace {

using namespace std::chrono_literals;
using runtime::testing::bound_config;
using runtime::testing::emit_until_cancelled;
using runtime::testing::eventually;
using runtime::testing::kRecordBytes;
using runtime::testing::ProducerThread;
using testing::FailureLog;
using testing::RawPeer;
using testing::TwoTaskManagers;

constexpr uint64_t kDeploymentA = 7;
constexpr uint64_t kDeploymentB = 8;

// One owner's channel from TaskManager 1 to TaskManager 2, with a producer that emits until cancelled.
struct OwnedChannel {
  OwnedChannel(TwoTaskManagers& tms, const RemoteChannelId& id, uint64_t owner)
      : partition(1, bound_config(), &producer_n) {
    EXPECT_TRUE(tms.tm1->register_output(id, 2, partition.channel(0), owner).is_ok());
    Result<std::shared_ptr<Channel>> input = tms.tm2->register_input(id, 1, bound_config(), owner);
    EXPECT_TRUE(input.is_ok()) << input.status().to_string();
    gate = std::make_unique<InputGate>(std::vector<std::shared_ptr<Channel>>{input.value()}, &consumer_n);
    producer = std::make_unique<ProducerThread>(partition, [this] {
      emit_until_cancelled(partition, kRecordBytes, emitted);
    });
  }
  // Takes and recycles `buffers` data buffers; false if none came for 20 s.
  bool receive(int buffers) {
    for (int got = 0; got < buffers;) {
      std::optional<BufferOrEvent> next = gate->poll_next();
      if (!next) {
        if (!consumer_n.wait(20s)) return false;
        continue;
      }
      if (!next->is_buffer()) continue;
      gate->recycle(std::move(next->buffer()));
      ++got;
    }
    return true;
  }

  TaskNotifier producer_n, consumer_n;
  ResultPartition partition;
  std::unique_ptr<InputGate> gate;
  std::atomic<int64_t> emitted{0};
  std::unique_ptr<ProducerThread> producer;
};

TEST(SharedDataPlane, ReleasingOneOwnerLeavesTheOthersChannelsFlowing) {
  TwoTaskManagers tms;
  // The same logical channel in two concurrent deployments (different attempts), and another one.
  OwnedChannel a(tms, RemoteChannelId{1, 0, 0, 3}, kDeploymentA);
  OwnedChannel b(tms, RemoteChannelId{1, 0, 0, 4}, kDeploymentB);
  OwnedChannel b2(tms, RemoteChannelId{2, 1, 0, 4}, kDeploymentB);
  ASSERT_TRUE(a.receive(20));
  ASSERT_TRUE(b.receive(20));
  ASSERT_TRUE(b2.receive(20));

  // Deployment A ends on the consumer's TaskManager first, its producer still emitting: the producer is told
  // (CLOSE_CHANNEL) and drops from then on, as for a released gate.
  tms.tm2->release(kDeploymentA);
  ASSERT_TRUE(eventually(
      [&] { return a.partition.is_available() && !a.partition.channel(0)->stats().sender_blocked; }));
  const int64_t after_release = a.emitted.load();
  ASSERT_TRUE(eventually([&] { return a.emitted.load() > after_release + 10'000; })) << "A's producer still blocks";
  tms.tm1->release(kDeploymentA);
  a.producer->join();

  // B's channels go on over the same connection, and nothing was reported as failed on either side.
  ASSERT_TRUE(b.receive(200));
  ASSERT_TRUE(b2.receive(200));
  EXPECT_EQ(tms.log1.channel_failures() + tms.log2.channel_failures(), 0u) << "a release is not a failure";

  // Deployment B ends on the producer's side first: the consumer's channels end as cancelled, which is reported
  // with B as their owner (a TaskManager ignores cancellations: the deployment is going away).
  tms.tm1->release(kDeploymentB);
  ASSERT_TRUE(tms.log2.wait_channel_failure(RemoteChannelId{1, 0, 0, 4}).has_value());
  ASSERT_TRUE(tms.log2.wait_channel_failure(RemoteChannelId{2, 1, 0, 4}).has_value());
  for (uint64_t owner : tms.log2.failed_owners()) EXPECT_EQ(owner, kDeploymentB);
  tms.tm2->release(kDeploymentB);
  b.producer->join();
  b2.producer->join();

  // The connection stayed open: a new deployment's channel flows at once, and no connection failed.
  OwnedChannel c(tms, RemoteChannelId{1, 0, 0, 5}, 9);
  ASSERT_TRUE(c.receive(20));
  EXPECT_FALSE(tms.log1.wait_connection_failure("", 1s).has_value());
  EXPECT_FALSE(tms.log2.wait_connection_failure("", 1s).has_value());
}

TEST(SharedDataPlane, ALostConnectionFailsTheChannelsOfEveryOwnerWithTheirOwner) {
  TwoTaskManagers tms;
  OwnedChannel a(tms, RemoteChannelId{1, 0, 0, 0}, kDeploymentA);
  OwnedChannel b(tms, RemoteChannelId{2, 0, 0, 1}, kDeploymentB);
  ASSERT_TRUE(a.receive(5));
  ASSERT_TRUE(b.receive(5));
  tms.tm1.reset();  // TaskManager 1's process goes: both deployments lost their peer
  ASSERT_TRUE(tms.log2.wait_channel_failure(RemoteChannelId{1, 0, 0, 0}).has_value());
  ASSERT_TRUE(tms.log2.wait_channel_failure(RemoteChannelId{2, 0, 0, 1}).has_value());
  std::vector<uint64_t> owners = tms.log2.failed_owners();
  std::sort(owners.begin(), owners.end());
  EXPECT_EQ(owners, (std::vector<uint64_t>{kDeploymentA, kDeploymentB}));
}

TEST(SharedDataPlane, DeclaringAPeerAgainAtTheSameAddressChangesNothing) {
  TwoTaskManagers tms;
  EXPECT_TRUE(tms.tm1->add_peer(2, "127.0.0.1", tms.tm2->port()).is_ok());
  const Status moved = tms.tm1->add_peer(2, "127.0.0.1", static_cast<uint16_t>(tms.tm2->port() + 1));
  EXPECT_EQ(moved.code(), StatusCode::kInvalidArgument) << moved.to_string();
}

// A TaskManager that registered again (a new process, or the same after losing its JobManager) is a new peer id;
// the former one is removed, its connection closed and its channels failed, and the new one is reached.
TEST(SharedDataPlane, APeerRegisteredAgainUnderANewIdIsReachedAndTheFormerOneRemoved) {
  TwoTaskManagers tms;
  OwnedChannel a(tms, RemoteChannelId{1, 0, 0, 0}, kDeploymentA);
  ASSERT_TRUE(a.receive(5));
  FailureLog log3;
  std::unique_ptr<DataConnectionManager> tm3 = testing::start_manager(3, log3);
  ASSERT_NE(tm3, nullptr);
  ASSERT_TRUE(tm3->add_peer(2, "127.0.0.1", tms.tm2->port()).is_ok());
  ASSERT_TRUE(tms.tm2->add_peer(3, "127.0.0.1", tm3->port()).is_ok());
  tms.tm2->remove_peer(1);
  std::optional<Status> failed = tms.log2.wait_channel_failure(RemoteChannelId{1, 0, 0, 0});
  ASSERT_TRUE(failed.has_value());
  EXPECT_NE(failed->message().find("no longer a peer"), std::string::npos) << failed->to_string();
  a.producer->join();

  // TaskManager 2 (the smaller id) dials 3; the channel of the next attempt flows.
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, NetworkConfig{}, &producer_n);
  const RemoteChannelId id{1, 0, 0, 1};
  ASSERT_TRUE(tms.tm2->register_output(id, 3, partition.channel(0), kDeploymentB).is_ok());
  Result<std::shared_ptr<Channel>> input = tm3->register_input(id, 2, NetworkConfig{}, kDeploymentB);
  ASSERT_TRUE(input.is_ok());
  InputGate gate({input.value()}, &consumer_n);
  std::vector<uint8_t> record(16, 9);
  partition.emit_record(0, record.data(), record.size());
  partition.flush_all();
  std::optional<BufferOrEvent> delivered;
  while (!(delivered = gate.poll_next())) ASSERT_TRUE(consumer_n.wait(20s));
  ASSERT_TRUE(delivered->is_buffer());
  EXPECT_EQ(delivered->buffer().bytes, record);
  gate.recycle(std::move(delivered->buffer()));
  EXPECT_EQ(log3.channel_failures(), 0u);
  EXPECT_FALSE(tms.tm2->register_output(RemoteChannelId{1, 0, 0, 2}, 1, partition.channel(0)).is_ok())
      << "the removed peer is no longer declared";
}

// A peer dials only when it has no live connection, so a second HELLO under the same id means the first
// connection is stale: it is closed (reported), and the new one is answered.
TEST(SharedDataPlane, APeerDiallingAgainReplacesItsStaleConnection) {
  FailureLog log;
  std::unique_ptr<DataConnectionManager> tm = testing::start_manager(2, log);
  ASSERT_NE(tm, nullptr);
  ASSERT_TRUE(tm->add_peer(1, "127.0.0.1", 1).is_ok());  // the raw peer dials, so its port is never used
  RawPeer first(tm->port());
  ASSERT_TRUE(first.connected());
  first.send_hello(1);
  auto hello = first.read_frame();
  ASSERT_TRUE(hello.has_value());
  EXPECT_EQ(hello->first.type, FrameType::kHello);
  RawPeer second(tm->port());
  ASSERT_TRUE(second.connected());
  second.send_hello(1);
  auto answer = second.read_frame();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->first.type, FrameType::kHello);
  EXPECT_EQ(answer->first.taskmanager_id, 2);
  EXPECT_TRUE(first.closed_by_peer());
  auto replaced = log.wait_connection_failure("connected again");
  ASSERT_TRUE(replaced.has_value());
  EXPECT_EQ(replaced->first, 1);
}

}  // namespace
}  // namespace sluice::runtime::tcp
