// Credit-based flow control across TaskManagers: a slow or stalled consumer bounds what its producer has in
// flight, a stalled channel stalls only itself on a shared connection, and events need no credit.
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
using runtime::testing::kRecordBytes;
using runtime::testing::kRecordsPerBuffer;
using runtime::testing::eventually;
using runtime::testing::ProducerThread;
using testing::OneRemoteChannel;
using testing::TwoTaskManagers;

// A remote channel is two Channels: each half holds up to its credits, the producer's half also its sender
// buffers. Frames in the connection's write queue still hold the producer half's credit; frames in the kernel's
// socket buffers hold the consumer's. Hence (2 x credits + max buffers) buffers, plus one partly filled.
int64_t remote_bound_records(const NetworkConfig& c) {
  return static_cast<int64_t>(2 * c.credits_per_channel + c.max_buffers_per_channel + 1) * kRecordsPerBuffer;
}

TEST(RemoteBackPressure, SlowConsumerNeverSeesMoreThanTheBoundInFlight) {
  const NetworkConfig config = bound_config();
  OneRemoteChannel remote(config);
  ResultPartition& partition = remote.partition;
  InputGate& gate = remote.gate;
  constexpr int64_t kRecords = 20000;
  std::atomic<int64_t> emitted{0};
  std::thread producer([&] { runtime::testing::emit_and_finish(partition, kRecordBytes, kRecords, emitted); });
  int64_t consumed = 0;
  int64_t worst = 0;
  int64_t polls = 0;
  while (!gate.is_finished()) {
    std::optional<BufferOrEvent> next = remote.next();
    ASSERT_TRUE(next.has_value()) << "stalled";
    if (!next->is_buffer()) continue;
    const int32_t n = next->buffer().num_records;
    if (++polls % 8 == 0) std::this_thread::sleep_for(100us);  // slower than the producer (pacing only)
    gate.recycle(std::move(next->buffer()));
    consumed += n;
    worst = std::max(worst, emitted.load() - consumed);
  }
  producer.join();
  EXPECT_EQ(consumed, kRecords);
  EXPECT_LE(worst, remote_bound_records(config));
  EXPECT_GT(worst, 0);
}

TEST(RemoteBackPressure, StalledChannelBlocksOnlyItsProducerWhileAnotherChannelOnTheConnectionFlows) {
  TwoTaskManagers tms;
  const NetworkConfig config = bound_config();
  TaskNotifier producer_n[2], consumer_n[2];
  ResultPartition stalled(1, config, &producer_n[0]);
  ResultPartition flowing(1, config, &producer_n[1]);
  InputGate stalled_gate({tms.connect(RemoteChannelId{1, 0, 0, 0}, stalled.channel(0))}, &consumer_n[0]);  // never read
  InputGate gate({tms.connect(RemoteChannelId{1, 1, 0, 0}, flowing.channel(0))}, &consumer_n[1]);
  std::atomic<int64_t> emitted{0};
  ProducerThread producer(stalled, [&] { emit_until_cancelled(stalled, kRecordBytes, emitted); });
  // The producer may block before the network delivered: the consumer's half fills up to its credits (while the
  // network drains the producer's side, the producer may run again for a moment).
  ASSERT_TRUE(eventually([&] {
    return stalled_gate.channel(0)->stats().receiver_held_buffers == config.credits_per_channel;
  })) << "received up to its credits";
  // Nothing drains any more: the producer blocks for good. Blocked alone is not yet that state: a write still in
  // flight may recycle one more buffer and let the producer run again for a moment. Once the producer's half also
  // holds its credits' worth for the network and its sender queue is full, no remote credit is left to free either.
  ASSERT_TRUE(eventually([&] {
    const Channel::Stats s = stalled.channel(0)->stats();
    return s.sender_blocked && s.receiver_held_buffers == config.credits_per_channel &&
           s.sender_queued_buffers == config.max_buffers_per_channel;
  })) << "the producer blocked with its half full";
  EXPECT_LE(emitted.load(), remote_bound_records(config));
  EXPECT_FALSE(stalled.is_available());
  EXPECT_EQ(stalled_gate.channel(0)->stats().sender_queued_buffers, 0) << "the network never sends beyond credit";

  // The other channel of the same connection still flows, end to end.
  std::thread other([&] {
    std::vector<uint8_t> record(kRecordBytes, 3);
    for (int i = 0; i < 200 * kRecordsPerBuffer; ++i) flowing.emit_record(0, record.data(), record.size());
    flowing.finish();
  });
  int64_t received = 0;
  while (!gate.is_finished()) {
    std::optional<BufferOrEvent> next = gate.poll_next();
    if (!next) {
      ASSERT_TRUE(consumer_n[1].wait(20s)) << "the second channel stalled behind the first";
      continue;
    }
    if (!next->is_buffer()) continue;
    received += next->buffer().num_records;
    gate.recycle(std::move(next->buffer()));
  }
  other.join();
  EXPECT_EQ(received, 200 * kRecordsPerBuffer);
  EXPECT_TRUE(stalled.channel(0)->stats().sender_blocked) << "still stalled";
  producer.join();
}

TEST(RemoteBackPressure, EventsPassWithoutCredit) {
  const NetworkConfig config = bound_config();
  OneRemoteChannel remote(config);
  ResultPartition& partition = remote.partition;
  std::vector<uint8_t> record(kRecordBytes, 4);
  for (int i = 0; i < config.credits_per_channel * kRecordsPerBuffer; ++i) {
    partition.emit_record(0, record.data(), record.size());  // exactly the credit's worth of full buffers
  }
  partition.flush_all();
  std::vector<Buffer> held;  // polled, never recycled: the consumer grants no more credit
  while (held.size() < static_cast<size_t>(config.credits_per_channel)) {
    std::optional<BufferOrEvent> next = remote.next();
    ASSERT_TRUE(next.has_value() && next->is_buffer());
    held.push_back(std::move(next->buffer()));
  }
  partition.broadcast_event(RuntimeEvent{EventType::kWatermark, {1, 2, 3, 4, 5, 6, 7, 8}});
  std::optional<BufferOrEvent> event = remote.next();
  ASSERT_TRUE(event.has_value()) << "the event waited for credit";
  ASSERT_TRUE(event->is_event());
  EXPECT_EQ(event->event().type, EventType::kWatermark);
  EXPECT_EQ(event->event().payload.size(), 8u);
  for (Buffer& b : held) remote.gate.recycle(std::move(b));
}

}  // namespace
}  // namespace sluice::runtime::tcp
