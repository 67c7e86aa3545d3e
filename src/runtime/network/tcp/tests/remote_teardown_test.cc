// Teardown of remote channels: a peer that dies mid-stream, a consumer that releases its channel, a producer
// that cancels, and a manager shut down under load.
#include <gtest/gtest.h>

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
using testing::TwoTaskManagers;

TEST(RemoteTeardown, PeerDyingMidStreamFailsItsChannelsAtOnce) {
  TwoTaskManagers tms;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(2, bound_config(), &producer_n);
  const RemoteChannelId a{1, 0, 0, 0}, b{1, 0, 1, 0};
  InputGate gate_a({tms.connect(a, partition.channel(0))}, &consumer_n);
  InputGate gate_b({tms.connect(b, partition.channel(1))}, &consumer_n);
  std::atomic<int64_t> emitted{0};
  ProducerThread producer(partition, [&] { emit_until_cancelled(partition, kRecordBytes, emitted); });
  int received = 0;
  while (received < 20) {  // mid-stream: data is flowing
    std::optional<BufferOrEvent> next = gate_a.poll_next();
    if (!next) {
      ASSERT_TRUE(consumer_n.wait(20s));
      continue;
    }
    gate_a.recycle(std::move(next->buffer()));
    ++received;
  }
  const auto died = std::chrono::steady_clock::now();
  tms.tm1.reset();  // TaskManager 1's data plane goes away: its sockets close
  std::optional<Status> failed_a = tms.log2.wait_channel_failure(a);
  std::optional<Status> failed_b = tms.log2.wait_channel_failure(b);
  const auto reported_after = std::chrono::steady_clock::now() - died;
  ASSERT_TRUE(failed_a.has_value());
  ASSERT_TRUE(failed_b.has_value());
  EXPECT_EQ(failed_a->code(), StatusCode::kIOError);
  EXPECT_NE(failed_a->message().find("the peer closed the connection"), std::string::npos) << failed_a->to_string();
  EXPECT_LT(reported_after, 5s) << "reported when the socket closed, not after some timeout";
  auto connection = tms.log2.wait_connection_failure("closed");
  ASSERT_TRUE(connection.has_value());
  EXPECT_EQ(connection->first, 1);
  // The producer's side was detached with its data plane: it drops instead of blocking.
  EXPECT_TRUE(eventually([&] { return partition.is_available(); }));
  producer.join();
}

TEST(RemoteTeardown, ReleasedConsumerMakesTheProducerDrop) {
  TwoTaskManagers tms;
  const NetworkConfig config = bound_config();
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  auto gate = std::make_unique<InputGate>(
      std::vector<std::shared_ptr<Channel>>{tms.connect(RemoteChannelId{2, 0, 0, 0}, partition.channel(0))},
      &consumer_n);
  std::atomic<int64_t> emitted{0};
  ProducerThread producer(partition, [&] { emit_until_cancelled(partition, kRecordBytes, emitted); });
  ASSERT_TRUE(eventually([&] { return partition.channel(0)->stats().sender_blocked; })) << "back-pressured";
  const int64_t blocked_at = emitted.load();
  gate.reset();  // the consumer task ends early: CLOSE_CHANNEL reaches the producer's TaskManager
  ASSERT_TRUE(eventually([&] { return emitted.load() > blocked_at + 100'000; })) << "the producer still blocks";
  EXPECT_TRUE(partition.is_available());
  producer.join();
  EXPECT_EQ(tms.log1.channel_failures() + tms.log2.channel_failures(), 0u) << "a release is not a failure";
}

TEST(RemoteTeardown, CancelledProducerFailsTheConsumersChannelAsCancelled) {
  TwoTaskManagers tms;
  NetworkConfig config;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  const RemoteChannelId id{3, 0, 0, 0};
  InputGate gate({tms.connect(id, partition.channel(0))}, &consumer_n);
  std::vector<uint8_t> record(16, 5);
  partition.emit_record(0, record.data(), record.size());
  partition.flush_all();
  std::optional<BufferOrEvent> delivered;
  while (!(delivered = gate.poll_next())) ASSERT_TRUE(consumer_n.wait(20s));
  partition.cancel();
  std::optional<Status> failed = tms.log2.wait_channel_failure(id);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->code(), StatusCode::kCancelled);
  EXPECT_NE(failed->message().find("cancelled"), std::string::npos) << failed->to_string();
  ASSERT_TRUE(delivered->is_buffer()) << "what was delivered before stays readable";
  EXPECT_EQ(delivered->buffer().bytes, record);
  gate.recycle(std::move(delivered->buffer()));
  EXPECT_EQ(tms.log1.channel_failures(), 0u) << "the producer's own side is not reported";
}

TEST(RemoteTeardown, ShutdownUnderLoadJoinsCleanly) {
  TwoTaskManagers tms;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, bound_config(), &producer_n);
  InputGate gate({tms.connect(RemoteChannelId{4, 0, 0, 0}, partition.channel(0))}, &consumer_n);
  std::atomic<int64_t> emitted{0};
  ProducerThread producer(partition, [&] { emit_until_cancelled(partition, kRecordBytes, emitted); });
  std::atomic<bool> stop{false};
  std::thread consumer([&] {
    while (!stop.load()) {
      if (auto next = gate.poll_next()) {
        if (next->is_buffer()) gate.recycle(std::move(next->buffer()));
      } else {
        consumer_n.wait(10ms);
      }
    }
  });
  ASSERT_TRUE(eventually([&] { return emitted.load() > 10'000; }));
  tms.tm2->shutdown();  // the consumer's side first, while data flows both ways
  tms.tm1->shutdown();
  tms.tm2->shutdown();  // idempotent
  EXPECT_TRUE(eventually([&] { return partition.is_available(); })) << "the producer was released";
  stop = true;
  consumer.join();
  producer.join();
  EXPECT_EQ(tms.log2.channel_failures(), 0u) << "a shutdown reports nothing on its own side";
  EXPECT_FALSE(tms.tm1->register_output(RemoteChannelId{4, 0, 0, 1}, 2, partition.channel(0)).is_ok());
}

// Failover: after TaskManager 1 died, its replacement (same id, new port) connects again and channels of the
// next attempt flow, while TaskManager 2 kept running.
TEST(RemoteTeardown, ReplacementTaskManagerReconnectsAfterAFailure) {
  TwoTaskManagers tms;
  NetworkConfig config;
  auto exchange = [&](DataConnectionManager& producer_tm, const RemoteChannelId& id) {
    TaskNotifier producer_n, consumer_n;
    ResultPartition partition(1, config, &producer_n);
    ASSERT_TRUE(producer_tm.register_output(id, 2, partition.channel(0)).is_ok());
    Result<std::shared_ptr<Channel>> input = tms.tm2->register_input(id, 1, config);
    ASSERT_TRUE(input.is_ok());
    InputGate gate({input.value()}, &consumer_n);
    std::vector<uint8_t> record(8, 1);
    for (int i = 0; i < 100; ++i) partition.emit_record(0, record.data(), record.size());
    partition.finish();
    int32_t records = 0;
    while (!gate.is_finished()) {
      std::optional<BufferOrEvent> next = gate.poll_next();
      if (!next) {
        ASSERT_TRUE(consumer_n.wait(20s));
        continue;
      }
      if (!next->is_buffer()) continue;
      records += next->buffer().num_records;
      gate.recycle(std::move(next->buffer()));
    }
    EXPECT_EQ(records, 100);
  };
  exchange(*tms.tm1, RemoteChannelId{6, 0, 0, 0});
  tms.tm1.reset();
  ASSERT_TRUE(tms.log2.wait_connection_failure("the peer closed the connection").has_value());
  testing::FailureLog log1b;
  std::unique_ptr<DataConnectionManager> replacement = testing::start_manager(1, log1b);
  ASSERT_NE(replacement, nullptr);
  ASSERT_TRUE(replacement->add_peer(2, "127.0.0.1", tms.tm2->port()).is_ok());
  exchange(*replacement, RemoteChannelId{6, 0, 0, 1});
  EXPECT_EQ(log1b.channel_failures(), 0u);
}

}  // namespace
}  // namespace sluice::runtime::tcp
