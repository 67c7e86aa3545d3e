// Bad peers, played by a raw socket as TaskManager 0 against TaskManager 2: each case closes that connection
// only, with a callback that names the reason, and TaskManager 2 keeps serving a good peer (TaskManager 1).
#include <gtest/gtest.h>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tcp/tests/tcp_test_util.h"
#include "runtime/network/tests/test_util.h"

namespace sluice::runtime::tcp {
namespace {

using namespace std::chrono_literals;
using runtime::testing::make_record;
using runtime::testing::parse_records;
using testing::FailureLog;
using testing::kFingerprint;
using testing::RawPeer;
using testing::start_manager;

class BadPeer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(tm1_, nullptr);
    ASSERT_NE(tm2_, nullptr);
    ASSERT_TRUE(tm2_->add_peer(0, "127.0.0.1", 1).is_ok());  // the raw peer: it dials, so its port is never used
    ASSERT_TRUE(tm2_->add_peer(1, "127.0.0.1", tm1_->port()).is_ok());
    ASSERT_TRUE(tm1_->add_peer(2, "127.0.0.1", tm2_->port()).is_ok());
  }

  // The raw peer's HELLO as TaskManager 0, and TaskManager 2's answer.
  void handshake(RawPeer& peer) {
    ASSERT_TRUE(peer.connected());
    peer.send_hello(0);
    auto reply = peer.read_frame();
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->first.type, FrameType::kHello);
    EXPECT_EQ(reply->first.taskmanager_id, 2);
    EXPECT_EQ(reply->first.job_fingerprint, kFingerprint);
  }

  // The connection failure TaskManager 2 reported whose reason contains `text`; the peer saw it close.
  void expect_refused(RawPeer& peer, const std::string& text, int32_t expected_peer) {
    auto failure = log2_.wait_connection_failure(text);
    ASSERT_TRUE(failure.has_value()) << "no connection failure mentioning '" << text << "'";
    EXPECT_EQ(failure->first, expected_peer);
    EXPECT_TRUE(peer.closed_by_peer()) << "the connection stays open";
  }

  // A few records from TaskManager 1 to 2 on a fresh channel, end to end.
  void expect_serves_good_peer() {
    NetworkConfig config;  // 32 KiB buffers: the records fit without a consumer thread
    TaskNotifier producer_n, consumer_n;
    ResultPartition partition(1, config, &producer_n);
    const RemoteChannelId id{100 + next_edge_++, 0, 0, 0};
    ASSERT_TRUE(tm1_->register_output(id, 2, partition.channel(0)).is_ok());
    Result<std::shared_ptr<Channel>> input = tm2_->register_input(id, 1, config);
    ASSERT_TRUE(input.is_ok());
    InputGate gate({input.value()}, &consumer_n);
    std::vector<uint8_t> record;
    for (uint32_t s = 0; s < 50; ++s) {
      make_record(1, s, 8, &record);
      partition.emit_record(0, record.data(), record.size());
    }
    partition.finish();
    uint32_t next_seq = 0;
    while (!gate.is_finished()) {
      std::optional<BufferOrEvent> next = gate.poll_next();
      if (!next) {
        ASSERT_TRUE(consumer_n.wait(20s)) << "TaskManager 2 stopped serving TaskManager 1";
        continue;
      }
      if (!next->is_buffer()) continue;
      for (const auto& r : parse_records(next->buffer())) EXPECT_EQ(r.seq, next_seq++);
      gate.recycle(std::move(next->buffer()));
    }
    EXPECT_EQ(next_seq, 50u);
  }

  std::vector<uint8_t> data_frame(const RemoteChannelId& id, uint8_t fill) {
    FrameHead data;
    data.type = FrameType::kData;
    data.channel = id;
    data.num_records = 1;
    const std::vector<uint8_t> bytes(16, fill);
    return encode_frame(data, bytes.data(), bytes.size());
  }

  FailureLog log1_, log2_;
  std::unique_ptr<DataConnectionManager> tm1_ = start_manager(1, log1_);
  std::unique_ptr<DataConnectionManager> tm2_ = start_manager(2, log2_);
  int32_t next_edge_ = 0;
};

TEST_F(BadPeer, GarbageInsteadOfHello) {
  RawPeer peer(tm2_->port());
  ASSERT_TRUE(peer.connected());
  peer.send(std::vector<uint8_t>(64, 0xff));
  expect_refused(peer, "expected a frame type in [1, 7], got 255", -1);
  expect_serves_good_peer();
}

TEST_F(BadPeer, WrongJobFingerprint) {
  RawPeer peer(tm2_->port());
  ASSERT_TRUE(peer.connected());
  peer.send_hello(0, /*fingerprint=*/0xbadULL);
  expect_refused(peer, "job fingerprint 0x5eed5eed expected, the peer sent 0xbad", 0);
  expect_serves_good_peer();
}

TEST_F(BadPeer, WrongProtocolVersion) {
  RawPeer peer(tm2_->port());
  ASSERT_TRUE(peer.connected());
  peer.send_hello(0, kFingerprint, /*version=*/99);
  expect_refused(peer, "protocol version 1 expected, the peer speaks 99", 0);
  expect_serves_good_peer();
}

TEST_F(BadPeer, UnexpectedTaskManagerId) {
  RawPeer peer(tm2_->port());
  ASSERT_TRUE(peer.connected());
  peer.send_hello(7);
  expect_refused(peer, "unexpected TaskManager 7: TaskManager 2 accepts only [0, 1]", 7);
  expect_serves_good_peer();
}

TEST_F(BadPeer, GarbageAfterTheHandshake) {
  RawPeer peer(tm2_->port());
  handshake(peer);
  FrameHead credit;
  credit.type = FrameType::kAddCredit;
  credit.credits = 0;
  peer.send(encode_frame(credit, nullptr, 0));
  expect_refused(peer, "ADD_CREDIT expects a positive credit, got 0", 0);
  expect_serves_good_peer();
}

TEST_F(BadPeer, DataForAChannelNotRegistered) {
  RawPeer peer(tm2_->port());
  handshake(peer);
  peer.send(data_frame(RemoteChannelId{9, 9, 9, 0}, 1));
  expect_refused(peer, "DATA for channel edge 9 subtask 9->9 attempt 0, which is not registered here", 0);
  expect_serves_good_peer();
}

TEST_F(BadPeer, DataBeyondCreditFailsItsChannels) {
  NetworkConfig config;
  config.credits_per_channel = 2;
  const RemoteChannelId id{4, 0, 1, 0};
  Result<std::shared_ptr<Channel>> input = tm2_->register_input(id, 0, config);
  ASSERT_TRUE(input.is_ok());
  TaskNotifier consumer_n;
  InputGate gate({input.value()}, &consumer_n);
  RawPeer peer(tm2_->port());
  handshake(peer);
  auto credit = peer.read_frame();
  ASSERT_TRUE(credit.has_value());
  EXPECT_EQ(credit->first.type, FrameType::kAddCredit);
  EXPECT_EQ(credit->first.channel, id);
  EXPECT_EQ(credit->first.credits, 2);
  for (uint8_t i = 0; i < 3; ++i) peer.send(data_frame(id, i));
  std::optional<Status> failed = log2_.wait_channel_failure(id);
  ASSERT_TRUE(failed.has_value());
  EXPECT_NE(failed->message().find("DATA beyond credit on channel edge 4 subtask 0->1 attempt 0"), std::string::npos)
      << failed->to_string();
  expect_refused(peer, "beyond credit", 0);
  // What arrived within credit stays readable.
  int buffers = 0;
  while (auto next = gate.poll_next()) {
    ASSERT_TRUE(next->is_buffer());
    gate.recycle(std::move(next->buffer()));
    ++buffers;
  }
  EXPECT_EQ(buffers, 2);
  expect_serves_good_peer();
}

TEST(BadPeerHandshake, SilentSocketIsClosedAfterTheHandshakeTimeout) {
  FailureLog log;
  DataPlaneConfig config;
  config.taskmanager_id = 2;
  config.job_fingerprint = kFingerprint;
  config.handshake_timeout_ms = 200;
  Result<std::unique_ptr<DataConnectionManager>> tm = DataConnectionManager::start(config, log.callbacks());
  ASSERT_TRUE(tm.is_ok());
  RawPeer peer(tm.value()->port());
  ASSERT_TRUE(peer.connected());  // and says nothing
  auto failure = log.wait_connection_failure("no HELLO within 200 ms");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->second.code(), StatusCode::kTimeout);
  EXPECT_TRUE(peer.closed_by_peer());
}

// Fencing by attempt: frames of an older attempt of a channel are dropped without failing anything.
TEST_F(BadPeer, FramesOfAnOldAttemptAreDropped) {
  NetworkConfig config;
  const RemoteChannelId attempt1{5, 0, 0, 1};
  Result<std::shared_ptr<Channel>> input = tm2_->register_input(attempt1, 0, config);
  ASSERT_TRUE(input.is_ok());
  TaskNotifier consumer_n;
  InputGate gate({input.value()}, &consumer_n);
  RawPeer peer(tm2_->port());
  handshake(peer);
  ASSERT_TRUE(peer.read_frame().has_value());  // the initial credit
  peer.send(data_frame(RemoteChannelId{5, 0, 0, 0}, 7));  // attempt 0: dropped
  peer.send(data_frame(attempt1, 8));
  std::optional<BufferOrEvent> next;
  while (!(next = gate.poll_next())) ASSERT_TRUE(consumer_n.wait(20s));
  ASSERT_TRUE(next->is_buffer());
  EXPECT_EQ(next->buffer().bytes, std::vector<uint8_t>(16, 8)) << "attempt 1's data, not attempt 0's";
  gate.recycle(std::move(next->buffer()));
  EXPECT_EQ(log2_.channel_failures(), 0u);
}

}  // namespace
}  // namespace sluice::runtime::tcp
