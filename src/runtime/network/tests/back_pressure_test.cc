// Credit-based back-pressure: a slow or stalled consumer bounds what its producer can have in flight.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "back_pressure_util.h"
#include "test_util.h"

namespace sluice::runtime {
namespace {

using namespace std::chrono_literals;
using testing::bound_config;
using testing::emit_until_cancelled;
using testing::kRecordBytes;
using testing::kRecordsPerBuffer;
using testing::eventually;
using testing::ProducerThread;

int64_t bound_records(const NetworkConfig& c) {
  return static_cast<int64_t>(c.credits_per_channel + c.max_buffers_per_channel + 1) * kRecordsPerBuffer;
}

TEST(BackPressure, StalledConsumerBoundsInFlightRecordsAndBlocksTheProducer) {
  const NetworkConfig config = bound_config();
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);  // never read
  std::atomic<int64_t> emitted{0};
  ProducerThread producer(partition, [&] { emit_until_cancelled(partition, kRecordBytes, emitted); });

  ASSERT_TRUE(eventually([&] { return partition.channel(0)->stats().sender_blocked; }));
  std::this_thread::sleep_for(20ms);  // give an (incorrectly) unblocked producer time to overshoot
  EXPECT_LE(emitted.load(), bound_records(config));
  // It is blocked because the channel is full, not earlier: credits + max buffers, the last one open.
  EXPECT_GE(emitted.load(), (config.credits_per_channel + config.max_buffers_per_channel) * kRecordsPerBuffer);
  Channel::Stats st = partition.channel(0)->stats();
  EXPECT_EQ(st.receiver_held_buffers, config.credits_per_channel);
  EXPECT_EQ(st.sender_queued_buffers, config.max_buffers_per_channel);
  EXPECT_FALSE(partition.is_available());

  producer.join();  // cancels: must wake the blocked emit
  EXPECT_GT(partition.back_pressured_time_ns(), 0);
}

TEST(BackPressure, SlowConsumerNeverSeesMoreThanTheBoundInFlight) {
  const NetworkConfig config = bound_config();
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  constexpr int64_t kRecords = 20000;
  std::atomic<int64_t> emitted{0};
  std::thread producer([&] { testing::emit_and_finish(partition, kRecordBytes, kRecords, emitted); });
  int64_t consumed = 0;  // records whose buffers were recycled
  int64_t worst = 0;
  int64_t polls = 0;
  while (!gate.is_finished()) {
    std::optional<BufferOrEvent> next = gate.poll_next();
    if (!next) {
      consumer_n.wait(20s);
      continue;
    }
    if (!next->is_buffer()) continue;
    const int32_t n = next->buffer().num_records;
    if (++polls % 8 == 0) std::this_thread::sleep_for(100us);  // slower than the producer
    gate.recycle(std::move(next->buffer()));
    consumed += n;
    worst = std::max(worst, emitted.load() - consumed);
  }
  producer.join();
  EXPECT_EQ(consumed, kRecords);
  EXPECT_LE(worst, bound_records(config));
}

TEST(BackPressure, ProducerBackPressuredTimeGrowsAndReadingReleasesIt) {
  const NetworkConfig config = bound_config();
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  std::atomic<int64_t> emitted{0};
  ProducerThread producer(partition, [&] { emit_until_cancelled(partition, kRecordBytes, emitted); });

  ASSERT_TRUE(eventually([&] { return partition.channel(0)->stats().sender_blocked; }));
  EXPECT_EQ(partition.back_pressured_time_ns(), 0) << "counted when the wait ends";
  const int64_t before = emitted.load();
  std::optional<BufferOrEvent> first = gate.poll_next();
  ASSERT_TRUE(first.has_value());
  gate.recycle(std::move(first->buffer()));  // frees one credit: the producer moves on by a buffer
  EXPECT_TRUE(eventually([&] { return partition.back_pressured_time_ns() > 0; }));
  EXPECT_TRUE(eventually([&] { return emitted.load() >= before + kRecordsPerBuffer; }));
  ASSERT_TRUE(eventually([&] { return partition.channel(0)->stats().sender_blocked; })) << "and blocks again";
  producer.join();
}

TEST(BackPressure, CancelUnblocksAProducerBlockedOnEveryPath) {
  // Blocked in a broadcast (several subpartitions) and then emitting more after cancel: all return.
  NetworkConfig config = bound_config();
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(3, config, &producer_n);
  InputGate g0({partition.channel(0)}, &consumer_n), g1({partition.channel(1)}, &consumer_n),
      g2({partition.channel(2)}, &consumer_n);
  std::atomic<bool> done{false};
  ProducerThread producer(partition, [&] {
    std::vector<uint8_t> record(kRecordBytes, 3);
    while (!partition.is_cancelled()) partition.broadcast_record(record.data(), record.size());
    for (int i = 0; i < 10000; ++i) partition.broadcast_record(record.data(), record.size());  // dropped
    partition.finish();
    done = true;
  });
  ASSERT_TRUE(eventually([&] { return partition.channel(0)->stats().sender_blocked; }));
  producer.join();  // cancels
  EXPECT_TRUE(done.load());
  EXPECT_TRUE(partition.is_available()) << "a cancelled partition never makes its task wait";
}

TEST(BackPressure, BlockedChannelReceivesUpToItsCreditsThenBackPressures) {
  const NetworkConfig config = bound_config();
  TaskNotifier producer_n[2], consumer_n;
  ResultPartition blocked(1, config, &producer_n[0]);
  ResultPartition open(1, config, &producer_n[1]);
  InputGate gate({blocked.channel(0), open.channel(0)}, &consumer_n);
  gate.block_channel(0);
  std::atomic<int64_t> emitted_blocked{0};
  ProducerThread producer(blocked, [&] { emit_until_cancelled(blocked, kRecordBytes, emitted_blocked); });
  ASSERT_TRUE(eventually([&] { return blocked.channel(0)->stats().sender_blocked; }));
  Channel::Stats st = blocked.channel(0)->stats();
  EXPECT_EQ(st.receiver_queued_buffers, config.credits_per_channel) << "received up to its credits";
  EXPECT_EQ(st.sender_queued_buffers, config.max_buffers_per_channel);
  EXPECT_LE(emitted_blocked.load(), bound_records(config));

  // The other channel still flows, and poll_next never returns the blocked channel's data.
  std::vector<uint8_t> record(kRecordBytes, 4);
  for (int i = 0; i < 10 * kRecordsPerBuffer; ++i) {
    open.emit_record(0, record.data(), record.size());
    while (auto next = gate.poll_next()) {
      ASSERT_EQ(next->channel_index, 1);
      gate.recycle(std::move(next->buffer()));
    }
  }
  gate.unblock_channel(0);
  std::optional<BufferOrEvent> next = gate.poll_next();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->channel_index, 0);
  gate.recycle(std::move(next->buffer()));
  producer.join();
}

}  // namespace
}  // namespace sluice::runtime
