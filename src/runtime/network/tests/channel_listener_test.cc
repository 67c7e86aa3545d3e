// The Channel's listener seams, as the network halves of a remote channel use them: a receiver that is not a
// gate (the network sender) and a sender that is not a task (the network receiver).
#include <gtest/gtest.h>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "test_util.h"

namespace sluice::runtime {
namespace {

using testing::make_record;
using testing::parse_records;

struct RecordingReceiver final : ChannelReceiverListener {
  int available = 0;
  int priority_available = 0;
  int cancelled = 0;
  int64_t deadline = 0;
  void on_channel_available(int32_t, bool priority) override {
    ++available;
    if (priority) ++priority_available;
  }
  void note_promotion_deadline(int64_t at_ms) override { deadline = at_ms; }
  void on_sender_cancelled(int32_t) override { ++cancelled; }
};

struct RecordingSender final : ChannelSenderListener {
  int credits = 0;
  int released = 0;
  void on_credit_returned() override { ++credits; }
  void on_receiver_released() override { ++released; }
};

NetworkConfig config_64(int32_t credits) {
  NetworkConfig c;
  c.buffer_size_bytes = 64;
  c.credits_per_channel = credits;
  c.max_buffers_per_channel = 10;
  return c;
}

void emit(ResultPartition& p, uint32_t seq) {
  std::vector<uint8_t> r;
  make_record(0, seq, 20, &r);  // 32 bytes: two per buffer
  p.emit_record(0, r.data(), r.size());
}

std::vector<uint32_t> seqs(const std::vector<Buffer>& buffers) {
  std::vector<uint32_t> out;
  for (const Buffer& b : buffers)
    for (const auto& r : parse_records(b)) out.push_back(r.seq);
  return out;
}

TEST(ChannelListener, RemoteReceiverPollsEventsWithoutCreditAndDataOnlyWithIt) {
  TaskNotifier producer_n;
  ResultPartition partition(1, config_64(2), &producer_n);
  RecordingReceiver net;
  partition.channel(0)->attach_receiver(&net, 0, ReceiverLocation::kRemote);
  emit(partition, 0);
  emit(partition, 1);
  partition.enqueue_event(0, RuntimeEvent{EventType::kWatermark, {5}}, /*promote_at_ms=*/77);
  EXPECT_EQ(net.available, 1);
  EXPECT_EQ(net.deadline, 77);
  Buffer b;
  bool priority = true;
  EXPECT_FALSE(partition.channel(0)->poll_sendable(false, &b, &priority)) << "data needs credit";
  ASSERT_TRUE(partition.channel(0)->poll_sendable(true, &b, &priority));
  EXPECT_FALSE(b.is_event());
  EXPECT_FALSE(priority);
  ASSERT_TRUE(partition.channel(0)->poll_sendable(false, &b, &priority)) << "an event needs none";
  EXPECT_TRUE(b.is_event());
  EXPECT_EQ(b.promote_at_ms, 77) << "the producer half never promotes; the frame carries the deadline";
  EXPECT_FALSE(partition.channel(0)->poll_sendable(true, &b, &priority));
  partition.channel(0)->detach_receiver();
}

// For a remote receiver the producer persists everything a priority event overtakes on its TaskManager (both
// queues); the consumer's TaskManager counts its own side when the event arrives there.
TEST(ChannelListener, PriorityEventToARemoteReceiverHandsBothQueuesToTheProducer) {
  TaskNotifier producer_n;
  ResultPartition partition(1, config_64(2), &producer_n);
  RecordingReceiver net;
  partition.channel(0)->attach_receiver(&net, 0, ReceiverLocation::kRemote);
  for (uint32_t s = 0; s < 10; ++s) emit(partition, s);  // 2 buffers at the receiver, 2 queued, 1 filling
  Buffer first;
  bool priority = false;
  ASSERT_TRUE(partition.channel(0)->poll_sendable(true, &first, &priority));  // "in the write queue": not counted
  std::vector<Buffer> output_state;
  partition.enqueue_priority_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {1}}, &output_state);
  EXPECT_EQ(seqs(output_state), (std::vector<uint32_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(net.priority_available, 1);
  Buffer event;
  ASSERT_TRUE(partition.channel(0)->poll_sendable(false, &event, &priority));
  EXPECT_TRUE(event.is_event());
  EXPECT_TRUE(priority);
  EXPECT_EQ(event.overtaken_buffers, 0);
  partition.channel(0)->recycle(std::move(first.bytes));
  std::vector<Buffer> after;
  Buffer b;
  while (partition.channel(0)->poll_sendable(true, &b, &priority)) {
    after.push_back(b);
    partition.channel(0)->recycle(std::move(b.bytes));
  }
  EXPECT_EQ(seqs(after), (std::vector<uint32_t>{2, 3, 4, 5, 6, 7, 8, 9})) << "still delivered, in order";
  partition.cancel();
  EXPECT_EQ(net.cancelled, 1);
  partition.channel(0)->detach_receiver();
}

TEST(ChannelListener, NetworkSenderHearsOfEveryRecycleAndOfTheGateGoingAway) {
  TaskNotifier consumer_n;
  auto channel = std::make_shared<Channel>(config_64(2));
  RecordingSender net;
  channel->attach_sender(&net);
  {
    InputGate gate({channel}, &consumer_n);
    for (int i = 0; i < 2; ++i) {
      Buffer data;
      data.bytes = channel->take_free_memory();
      data.bytes.assign(8, static_cast<uint8_t>(i));
      data.num_records = 1;
      channel->enqueue_buffer(std::move(data));
    }
    EXPECT_EQ(channel->stats().receiver_held_buffers, 2);
    auto polled = gate.poll_next();
    ASSERT_TRUE(polled.has_value());
    gate.recycle(std::move(polled->buffer()));
    EXPECT_EQ(net.credits, 1);
    EXPECT_EQ(net.released, 0);
  }
  EXPECT_EQ(net.released, 1);
  channel->detach_sender();
}

// The network may attach after the other side already went away: it is told at once, or it would wait forever.
TEST(ChannelListener, LateListenersLearnOfAReleaseOrCancelThatCameFirst) {
  auto consumer_half = std::make_shared<Channel>(config_64(2));
  consumer_half->detach_receiver();  // the gate was destroyed before the network receiver attached
  RecordingSender net_receiver;
  consumer_half->attach_sender(&net_receiver);
  EXPECT_EQ(net_receiver.released, 1);
  consumer_half->detach_sender();

  TaskNotifier producer_n;
  ResultPartition partition(1, config_64(2), &producer_n);
  partition.cancel();  // the producer was cancelled before the network sender attached
  RecordingReceiver net_sender;
  partition.channel(0)->attach_receiver(&net_sender, 0, ReceiverLocation::kRemote);
  EXPECT_EQ(net_sender.cancelled, 1);
  partition.channel(0)->detach_receiver();
}

}  // namespace
}  // namespace sluice::runtime
