// Single-threaded behaviour of a partition, its channels and a gate: buffering, ordering, events,
// priority events, availability, finishing, recycling.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "test_util.h"

// Counts heap allocations made by the thread that sets `g_count_allocations` (for the steady-state test).
namespace {
thread_local bool g_count_allocations = false;
std::atomic<int64_t> g_allocations{0};
}  // namespace

// GCC sees malloc/free pairs through inlining and flags them as mismatched; they are matched on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  if (g_count_allocations) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace sluice::runtime {
namespace {

using testing::make_record;
using testing::parse_records;
using testing::ParsedRecord;

NetworkConfig small_config(int32_t buffer_size_bytes, int32_t credits, int32_t max_buffers) {
  NetworkConfig c;
  c.buffer_size_bytes = buffer_size_bytes;
  c.credits_per_channel = credits;
  c.max_buffers_per_channel = max_buffers;
  return c;
}

void emit(ResultPartition& p, int32_t sub, uint32_t producer, uint32_t seq, size_t payload) {
  std::vector<uint8_t> r;
  make_record(producer, seq, payload, &r);
  p.emit_record(sub, r.data(), r.size());
}

// "<tag><a>:<b>", built by appending (GCC 12 at -O3 warns falsely on `"x" + std::string`, PR 105651).
std::string item(char tag, uint32_t a, const std::string& b) {
  std::string s(1, tag);
  s += std::to_string(a);
  s += ':';
  s += b;
  return s;
}

// What a gate yields, flattened: records as "p<producer>:<seq>", events as "E<type>:<payload[0]>".
struct Drained {
  std::vector<std::string> items;
  std::vector<int32_t> records_per_buffer;
  std::vector<size_t> bytes_per_buffer;
};

Drained drain(InputGate& gate) {
  Drained d;
  while (auto next = gate.poll_next()) {
    if (next->is_buffer()) {
      for (const ParsedRecord& r : parse_records(next->buffer())) {
        d.items.push_back(item('p', r.producer, std::to_string(r.seq)));
      }
      d.records_per_buffer.push_back(next->buffer().num_records);
      d.bytes_per_buffer.push_back(next->buffer().bytes.size());
      EXPECT_EQ(next->buffer().channel_index, next->channel_index);
      gate.recycle(std::move(next->buffer()));
    } else {
      const RuntimeEvent& e = next->event();
      d.items.push_back(item('E', static_cast<uint32_t>(e.type),
                             e.payload.empty() ? std::string("-") : std::to_string(e.payload[0])));
    }
  }
  return d;
}

std::vector<std::string> records(uint32_t producer, uint32_t first, uint32_t last_exclusive) {
  std::vector<std::string> v;
  for (uint32_t s = first; s < last_exclusive; ++s) v.push_back(item('p', producer, std::to_string(s)));
  return v;
}

TEST(Channel, SingleChannelKeepsOrderAndFinishes) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, small_config(256, 2, 1000), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  EXPECT_FALSE(gate.is_finished());
  for (uint32_t s = 0; s < 500; ++s) emit(partition, 0, 7, s, s % 40);
  partition.finish();
  EXPECT_TRUE(consumer_n.wait(std::chrono::nanoseconds(0)));  // data arrival notified the consumer

  Drained d;
  // Only credits_per_channel buffers reach the receiver until the consumer recycles, so drain repeatedly.
  for (int i = 0; i < 1000 && !gate.is_finished(); ++i) {
    Drained part = drain(gate);
    d.items.insert(d.items.end(), part.items.begin(), part.items.end());
  }
  std::vector<std::string> expected = records(7, 0, 500);
  expected.push_back("E1:-");
  EXPECT_EQ(d.items, expected);
  EXPECT_TRUE(gate.is_finished());
  EXPECT_FALSE(gate.poll_next().has_value());
  EXPECT_EQ(partition.records_out(), 500);
  EXPECT_EQ(gate.buffers_in(), partition.buffers_out());
  EXPECT_EQ(gate.bytes_in(), partition.bytes_out());
}

TEST(Channel, RecordsNeverSpanBuffersAndOversizedRecordsTravelAlone) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, small_config(100, 10, 10), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  emit(partition, 0, 0, 0, 28);   // 40 bytes
  emit(partition, 0, 0, 1, 38);   // 50 bytes: 90 in the buffer
  emit(partition, 0, 0, 2, 8);    // 20 bytes: does not fit, closes the first buffer
  emit(partition, 0, 0, 3, 288);  // 300 bytes: oversized, closes the second buffer and goes alone
  emit(partition, 0, 0, 4, 88);   // 100 bytes: exactly fills a buffer
  partition.flush_all();
  Drained d = drain(gate);
  EXPECT_EQ(d.items, records(0, 0, 5));
  EXPECT_EQ(d.records_per_buffer, (std::vector<int32_t>{2, 1, 1, 1}));
  EXPECT_EQ(d.bytes_per_buffer, (std::vector<size_t>{90, 20, 300, 100}));
}

TEST(Channel, EmptyRecordsCountAndAreFlushed) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, small_config(64, 2, 10), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  for (int i = 0; i < 3; ++i) partition.emit_record(0, nullptr, 0);
  partition.broadcast_event(RuntimeEvent{EventType::kWatermark, {1}});
  auto first = gate.poll_next();
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->is_buffer());
  EXPECT_EQ(first->buffer().num_records, 3);
  EXPECT_TRUE(first->buffer().bytes.empty());
  gate.recycle(std::move(first->buffer()));
  auto second = gate.poll_next();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->is_event());
  EXPECT_EQ(partition.records_out(), 3);
}

TEST(Channel, EventsInterleaveInOrderOnEveryChannel) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(2, small_config(1024, 4, 10), &producer_n);
  InputGate gate0({partition.channel(0)}, &consumer_n);
  InputGate gate1({partition.channel(1)}, &consumer_n);
  emit(partition, 0, 0, 0, 4);
  emit(partition, 1, 0, 100, 4);
  partition.broadcast_event(RuntimeEvent{EventType::kWatermark, {42}});
  emit(partition, 0, 0, 1, 4);
  std::vector<uint8_t> both;
  make_record(0, 200, 4, &both);
  partition.broadcast_record(both.data(), both.size());
  partition.broadcast_event(RuntimeEvent{EventType::kCheckpointBarrier, {43}});
  partition.finish();

  Drained d0 = drain(gate0);
  EXPECT_EQ(d0.items, (std::vector<std::string>{"p0:0", "E4:42", "p0:1", "p0:200", "E2:43", "E1:-"}));
  EXPECT_EQ(d0.records_per_buffer, (std::vector<int32_t>{1, 2}));
  Drained d1 = drain(gate1);
  EXPECT_EQ(d1.items, (std::vector<std::string>{"p0:100", "E4:42", "p0:200", "E2:43", "E1:-"}));
  EXPECT_TRUE(gate0.is_finished());
  EXPECT_TRUE(gate1.is_finished());
}

TEST(Channel, PriorityEventOvertakesQueuedDataOnBothSides) {
  TaskNotifier producer_n, consumer_n;
  // 2 credits: buffers 0 and 1 reach the receiver, 2..4 wait in the sender queue.
  ResultPartition partition(1, small_config(64, 2, 10), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  for (uint32_t s = 0; s < 10; ++s) emit(partition, 0, 0, s, 20);  // 32 bytes each: 2 per buffer
  {
    Channel::Stats st = partition.channel(0)->stats();
    EXPECT_EQ(st.receiver_queued_buffers, 2);
    EXPECT_EQ(st.sender_queued_buffers, 2);
    EXPECT_TRUE(st.sender_filling);  // records 8 and 9
  }
  partition.enqueue_priority_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {1}});
  partition.enqueue_priority_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {2}});
  partition.finish();

  Drained d;
  for (int i = 0; i < 100 && !gate.is_finished(); ++i) {
    Drained part = drain(gate);
    d.items.insert(d.items.end(), part.items.begin(), part.items.end());
  }
  std::vector<std::string> expected{"E2:1", "E2:2"};  // both ahead of all data, in their own order
  for (const std::string& r : records(0, 0, 10)) expected.push_back(r);  // the partial buffer was flushed
  expected.push_back("E1:-");
  EXPECT_EQ(d.items, expected);
}

TEST(Channel, PriorityEventPutsItsChannelFirstInTheGate) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition p0(1, small_config(64, 2, 10), &producer_n);
  ResultPartition p1(1, small_config(64, 2, 10), &producer_n);
  InputGate gate({p0.channel(0), p1.channel(0)}, &consumer_n);
  emit(p0, 0, 0, 0, 4);
  p0.flush_all();
  emit(p1, 0, 1, 0, 4);
  p1.flush_all();
  p1.enqueue_priority_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {9}});
  Drained d = drain(gate);
  EXPECT_EQ(d.items, (std::vector<std::string>{"E2:9", "p0:0", "p1:0"}));
}

TEST(Channel, GateIsFinishedOnlyWhenEveryEndOfPartitionWasPolled) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition a(1, NetworkConfig{}, &producer_n), b(1, NetworkConfig{}, &producer_n),
      c(1, NetworkConfig{}, &producer_n);
  InputGate gate({a.channel(0), b.channel(0), c.channel(0)}, &consumer_n);
  EXPECT_EQ(gate.num_channels(), 3);
  a.finish();
  c.finish();
  EXPECT_FALSE(gate.is_finished());  // delivered but not polled
  drain(gate);
  EXPECT_FALSE(gate.is_finished());
  EXPECT_TRUE(gate.is_channel_finished(0));
  EXPECT_FALSE(gate.is_channel_finished(1));
  emit(b, 0, 1, 0, 0);
  b.finish();
  Drained d = drain(gate);
  EXPECT_EQ(d.items, (std::vector<std::string>{"p1:0", "E1:-"}));
  EXPECT_TRUE(gate.is_finished());
  InputGate empty({}, &consumer_n);
  EXPECT_TRUE(empty.is_finished());
}

TEST(Channel, AvailabilityFollowsTheSubpartitionsBufferCount) {
  TaskNotifier producer_n, consumer_n;
  // One credit, at most two sender buffers, two 32-byte records per buffer.
  ResultPartition partition(1, small_config(64, 1, 2), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  const std::shared_ptr<Channel>& ch = partition.channel(0);
  EXPECT_TRUE(partition.is_available());
  emit(partition, 0, 0, 0, 20);
  emit(partition, 0, 0, 1, 20);  // buffer A full but open; closing it would use the free credit
  EXPECT_TRUE(partition.is_available());
  emit(partition, 0, 0, 2, 20);  // closes A (moves to the receiver), opens B
  EXPECT_EQ(ch->stats().receiver_held_buffers, 1);
  EXPECT_TRUE(partition.is_available());  // closing B would queue it: 1 of 2 sender buffers
  emit(partition, 0, 0, 3, 20);
  emit(partition, 0, 0, 4, 20);  // closes B (queued, no credit), opens C: the next close would block
  EXPECT_EQ(ch->stats().sender_queued_buffers, 1);
  EXPECT_FALSE(partition.is_available());
  producer_n.wait(std::chrono::nanoseconds(0));  // clear pending notifications

  auto first = gate.poll_next();  // buffer A
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(partition.is_available()) << "polling alone does not release the credit";
  gate.recycle(std::move(first->buffer()));  // B moves over with the freed credit
  EXPECT_TRUE(partition.is_available());
  EXPECT_TRUE(producer_n.wait(std::chrono::nanoseconds(0))) << "the producer is told";
  EXPECT_EQ(ch->stats().sender_queued_buffers, 0);
  EXPECT_EQ(ch->stats().receiver_held_buffers, 1);
}

TEST(Channel, MaxOneBufferPerChannelStillFlows) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, small_config(64, 1, 1), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  emit(partition, 0, 0, 0, 20);
  EXPECT_TRUE(partition.is_available()) << "the open buffer can still move to the receiver";
  emit(partition, 0, 0, 1, 20);
  emit(partition, 0, 0, 2, 20);  // first buffer to the receiver; second one open
  EXPECT_FALSE(partition.is_available());
  Drained d = drain(gate);
  EXPECT_EQ(d.items, records(0, 0, 2));
  EXPECT_TRUE(partition.is_available());
}

TEST(Channel, BlockedChannelIsSkippedButKeepsItsData) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition p0(1, small_config(64, 2, 10), &producer_n);
  ResultPartition p1(1, small_config(64, 2, 10), &producer_n);
  InputGate gate({p0.channel(0), p1.channel(0)}, &consumer_n);
  gate.block_channel(0);
  EXPECT_TRUE(gate.is_channel_blocked(0));
  for (uint32_t s = 0; s < 4; ++s) {
    emit(p0, 0, 0, s, 4);
    emit(p1, 0, 1, s, 4);
    p0.flush_all();
    p1.flush_all();
  }
  Drained d = drain(gate);
  EXPECT_EQ(d.items, records(1, 0, 4));
  EXPECT_EQ(p0.channel(0)->stats().receiver_held_buffers, 2) << "it received up to its credits";
  EXPECT_EQ(p0.channel(0)->stats().sender_queued_buffers, 2) << "the rest waits at the sender";
  gate.unblock_all();
  EXPECT_FALSE(gate.is_channel_blocked(0));
  Drained rest;
  for (int i = 0; i < 10; ++i) {
    Drained part = drain(gate);
    rest.items.insert(rest.items.end(), part.items.begin(), part.items.end());
  }
  EXPECT_EQ(rest.items, records(0, 0, 4));
}

TEST(Channel, DestroyedGateReleasesTheProducer) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, small_config(64, 1, 1), &producer_n);
  {
    InputGate gate({partition.channel(0)}, &consumer_n);
    for (uint32_t s = 0; s < 4; ++s) emit(partition, 0, 0, s, 20);
    EXPECT_FALSE(partition.is_available());
  }
  EXPECT_TRUE(partition.is_available());
  for (uint32_t s = 4; s < 1000; ++s) emit(partition, 0, 0, s, 20);  // dropped, never blocks
  partition.finish();
}

TEST(Channel, SteadyStateAllocatesNothing) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(2, small_config(256, 2, 4), &producer_n);
  InputGate gate({partition.channel(0), partition.channel(1)}, &consumer_n);
  std::vector<uint8_t> record(24, 7);
  auto round = [&] {
    for (int i = 0; i < 100; ++i) partition.emit_record(i % 2, record.data(), record.size());
    partition.flush_all();
    int64_t polled = 0;
    while (auto next = gate.poll_next()) {
      polled += next->buffer().num_records;
      gate.recycle(std::move(next->buffer()));
    }
    return polled;
  };
  g_allocations = 0;
  g_count_allocations = true;
  round();  // warm-up: channels grow their memory towards the bound
  g_count_allocations = false;
  EXPECT_GT(g_allocations.load(), 0) << "the counter counts";
  for (int i = 0; i < 4; ++i) round();
  g_allocations = 0;
  g_count_allocations = true;
  int64_t polled = 0;
  for (int i = 0; i < 50; ++i) polled += round();
  g_count_allocations = false;
  EXPECT_EQ(polled, 50 * 100);
  EXPECT_EQ(g_allocations.load(), 0);
}

}  // namespace
}  // namespace sluice::runtime

namespace sluice::runtime {
namespace {

using testing::parse_records;

// Unaligned checkpoints: a priority event reports the data it overtook on the receiver side (the consumer's
// input channel state) and copies what it overtook on the sender side (the producer's output channel state);
// all of it is still delivered after the event, in order.
TEST(ChannelPriority, PriorityEventSplitsWhatItOvertookBetweenReceiverAndSender) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, small_config(64, 2, 10), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  for (uint32_t s = 0; s < 10; ++s) emit(partition, 0, 0, s, 20);  // 2 per buffer: 2 at the receiver, 2 queued, 1 filling
  EXPECT_FALSE(gate.poll_priority_event().has_value());  // only data is queued
  std::vector<Buffer> sender_side;
  partition.enqueue_priority_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {7}}, &sender_side);
  ASSERT_EQ(sender_side.size(), 3u);  // the partial buffer was flushed first
  std::vector<uint32_t> copied;
  for (const Buffer& b : sender_side)
    for (const auto& r : parse_records(b)) copied.push_back(r.seq);
  EXPECT_EQ(copied, (std::vector<uint32_t>{4, 5, 6, 7, 8, 9}));

  auto first = gate.poll_priority_event();  // what a task that reads no data still takes
  ASSERT_TRUE(first && first->is_event());
  EXPECT_EQ(first->event().type, EventType::kCheckpointBarrier);
  EXPECT_EQ(first->overtaken_buffers, 2);
  EXPECT_FALSE(gate.poll_priority_event().has_value());
  // The consumer's copy of what the event overtook on its side: the next two data buffers of the channel.
  std::vector<Buffer> receiver_side;
  gate.copy_overtaken(0, first->overtaken_buffers, &receiver_side);
  std::vector<uint32_t> receiver_copied;
  for (const Buffer& b : receiver_side)
    for (const auto& r : parse_records(b)) receiver_copied.push_back(r.seq);
  EXPECT_EQ(receiver_copied, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(drain(gate).items, records(0, 0, 10));
}

// The alignment timeout: an event queued in order with promote_at_ms moves ahead of all the data before it
// (on both sides) once the consumer promotes due events, and reports all of it as overtaken.
TEST(ChannelPriority, DueEventIsPromotedOverTheDataAheadOfIt) {
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, small_config(64, 2, 10), &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  EXPECT_EQ(gate.next_promotion_ms(), INT64_MAX);
  for (uint32_t s = 0; s < 10; ++s) emit(partition, 0, 0, s, 20);
  partition.enqueue_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {3}}, /*promote_at_ms=*/1000);
  emit(partition, 0, 0, 10, 20);  // after the event
  partition.flush_all();
  EXPECT_EQ(gate.next_promotion_ms(), 1000);

  gate.promote_due_events(999);  // not due: nothing moves
  EXPECT_EQ(gate.next_promotion_ms(), 1000);
  {
    auto head = gate.poll_next();
    ASSERT_TRUE(head && head->is_buffer());
    EXPECT_EQ(parse_records(head->buffer()).front().seq, 0u);
    gate.recycle(std::move(head->buffer()));
  }
  gate.promote_due_events(1000);
  EXPECT_EQ(gate.next_promotion_ms(), INT64_MAX);
  auto event = gate.poll_next();
  ASSERT_TRUE(event && event->is_event());
  EXPECT_EQ(event->event().payload, (std::vector<uint8_t>{3}));
  EXPECT_EQ(event->overtaken_buffers, 4);  // records 2..9 in 4 buffers, on both sides of the channel
  EXPECT_EQ(drain(gate).items, records(0, 2, 11));
}

}  // namespace
}  // namespace sluice::runtime
