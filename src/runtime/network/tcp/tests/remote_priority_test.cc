// Priority and promotable events on remote channels (unaligned checkpoints, alignment timeout).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tcp/tests/tcp_test_util.h"
#include "runtime/network/tests/test_util.h"

namespace sluice::runtime::tcp {
namespace {

using namespace std::chrono_literals;
using runtime::testing::eventually;
using runtime::testing::make_record;
using runtime::testing::parse_records;
using testing::OneRemoteChannel;

NetworkConfig small_config() {
  NetworkConfig c;
  c.buffer_size_bytes = 64;  // two 32-byte records per buffer
  c.credits_per_channel = 2;
  c.max_buffers_per_channel = 4;
  return c;
}

void emit(ResultPartition& partition, uint32_t seq) {
  std::vector<uint8_t> record;
  make_record(0, seq, 20, &record);
  partition.emit_record(0, record.data(), record.size());
}

std::vector<uint32_t> seqs(const std::vector<Buffer>& buffers) {
  std::vector<uint32_t> out;
  for (const Buffer& b : buffers)
    for (const auto& r : parse_records(b)) out.push_back(r.seq);
  return out;
}

// The no-loss, no-duplicate proof of a remote channel's split of what an unaligned barrier overtakes: for every
// barrier, the records delivered before it + the consumer's copy of what it overtook on the consumer's
// TaskManager + the producer's output channel state = exactly the records emitted before it, in order. The
// barriers are injected while data is queued in the producer's half, in the write queue, in flight and in the
// consumer's half (a slow consumer keeps all of them busy).
TEST(RemotePriority, UnalignedBarrierSplitLosesAndDuplicatesNothing) {
  OneRemoteChannel remote(small_config());
  ResultPartition& partition = remote.partition;
  InputGate& gate = remote.gate;
  constexpr uint32_t kRecords = 6000;
  constexpr uint32_t kBarrierEvery = 397;
  std::map<uint8_t, std::vector<Buffer>> output_state;  // barrier -> producer's persisted data
  std::map<uint8_t, uint32_t> emitted_before;
  std::thread producer([&] {
    for (uint32_t s = 0; s < kRecords; ++s) {
      if (s % kBarrierEvery == kBarrierEvery - 1) {
        const uint8_t barrier = static_cast<uint8_t>(s / kBarrierEvery);
        emitted_before[barrier] = s;
        partition.enqueue_priority_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {barrier}},
                                         &output_state[barrier]);
      }
      emit(partition, s);
    }
    partition.finish();
  });

  std::vector<uint32_t> delivered;
  std::map<uint8_t, uint32_t> delivered_before;
  std::map<uint8_t, std::vector<Buffer>> input_state;  // barrier -> consumer's copy of what it overtook
  int64_t polls = 0;
  while (!gate.is_finished()) {
    std::optional<BufferOrEvent> next = remote.next();
    ASSERT_TRUE(next.has_value()) << "stalled";
    if (next->is_buffer()) {
      for (const auto& r : parse_records(next->buffer())) delivered.push_back(r.seq);
      if (++polls % 16 == 0) std::this_thread::sleep_for(50us);  // pacing: lets queues build up
      gate.recycle(std::move(next->buffer()));
      continue;
    }
    if (next->event().type != EventType::kCheckpointBarrier) continue;
    const uint8_t barrier = next->event().payload.at(0);
    delivered_before[barrier] = static_cast<uint32_t>(delivered.size());
    gate.copy_overtaken(next->channel_index, next->overtaken_buffers, &input_state[barrier]);
  }
  producer.join();

  std::vector<uint32_t> all(kRecords);
  for (uint32_t s = 0; s < kRecords; ++s) all[s] = s;
  EXPECT_EQ(delivered, all) << "every record delivered once, in order";
  ASSERT_EQ(delivered_before.size(), emitted_before.size());
  int with_input_state = 0, with_output_state = 0;
  for (const auto& [barrier, before] : emitted_before) {
    std::vector<uint32_t> split(delivered.begin(), delivered.begin() + delivered_before[barrier]);
    const std::vector<uint32_t> in = seqs(input_state[barrier]);
    const std::vector<uint32_t> out = seqs(output_state[barrier]);
    split.insert(split.end(), in.begin(), in.end());
    split.insert(split.end(), out.begin(), out.end());
    EXPECT_EQ(split, std::vector<uint32_t>(all.begin(), all.begin() + before)) << "barrier " << int{barrier};
    with_input_state += in.empty() ? 0 : 1;
    with_output_state += out.empty() ? 0 : 1;
  }
  // The proof covers both halves: some barriers overtook data on each side.
  EXPECT_GT(with_input_state, 0);
  EXPECT_GT(with_output_state, 0);
}

// An aligned barrier with an alignment timeout: the producer's half never promotes it; once it reached the
// consumer's TaskManager, the gate promotes it over the data queued ahead of it there.
TEST(RemotePriority, PromotableEventIsPromotedOnceItReachedTheConsumer) {
  OneRemoteChannel remote(small_config());
  ResultPartition& partition = remote.partition;
  InputGate& gate = remote.gate;
  for (uint32_t s = 0; s < 8; ++s) emit(partition, s);  // four buffers: two fit the consumer's credit
  partition.enqueue_event(0, RuntimeEvent{EventType::kCheckpointBarrier, {7}}, /*promote_at_ms=*/1000);
  emit(partition, 8);
  partition.flush_all();

  ASSERT_TRUE(eventually([&] { return gate.channel(0)->stats().receiver_queued_buffers == 2; }));
  gate.promote_due_events(5000);  // the event is still on the producer's TaskManager: nothing to promote here
  auto take_data = [&](uint32_t first_seq) {
    std::optional<BufferOrEvent> next = remote.next();
    ASSERT_TRUE(next.has_value() && next->is_buffer());
    EXPECT_EQ(seqs({next->buffer()}).front(), first_seq);
    gate.recycle(std::move(next->buffer()));
  };
  take_data(0);
  take_data(2);  // credits back: buffers 4-5 and 6-7 follow, then the event (no credit needed)
  ASSERT_TRUE(eventually([&] { return gate.next_promotion_ms() == 1000; })) << "the event reached the consumer";
  gate.promote_due_events(1000);
  std::optional<BufferOrEvent> event = gate.poll_next();
  ASSERT_TRUE(event && event->is_event());
  EXPECT_EQ(event->event().type, EventType::kCheckpointBarrier);
  EXPECT_EQ(event->overtaken_buffers, 2);
  std::vector<Buffer> copied;
  gate.copy_overtaken(0, event->overtaken_buffers, &copied);
  EXPECT_EQ(seqs(copied), (std::vector<uint32_t>{4, 5, 6, 7}));
  take_data(4);
  take_data(6);
  take_data(8);
}

}  // namespace
}  // namespace sluice::runtime::tcp
