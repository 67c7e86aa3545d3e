// Multi-threaded exchanges: N producers x M consumers, one thread each, as tasks would run them.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "exchange_harness.h"
#include "test_util.h"

namespace sluice::runtime {
namespace {

using namespace std::chrono_literals;
using testing::Plan;
using testing::run_exchange;

TEST(Exchange, AllToAllDeliversEveryRecordOnceInPerChannelOrder) {
  Plan plan{4, 3, 20000, NetworkConfig{}};
  plan.config.buffer_size_bytes = 512;
  plan.config.credits_per_channel = 2;
  plan.config.max_buffers_per_channel = 4;
  run_exchange(plan);
}

TEST(Exchange, TightestBoundsStillFlow) {
  Plan plan{3, 2, 10000, NetworkConfig{}};
  plan.config.buffer_size_bytes = 128;
  plan.config.credits_per_channel = 1;
  plan.config.max_buffers_per_channel = 1;
  run_exchange(plan);
}

// One channel, smallest buffers, two threads that sleep on their notifiers whenever they cannot proceed:
// every buffer is a hand-off, so a lost wake-up would show as a wait that runs into its timeout.
TEST(Exchange, OneChannelHandOffStressLosesNoWakeUp) {
  NetworkConfig config;
  config.buffer_size_bytes = 32;
  config.credits_per_channel = 1;
  config.max_buffers_per_channel = 1;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  constexpr uint64_t kRecords = 100000;
  std::atomic<int> timeouts{0};
  std::thread producer([&] {
    for (uint64_t i = 0; i < kRecords; ++i) {
      while (!partition.is_available()) {
        if (!producer_n.wait(20s) && !partition.is_available()) timeouts.fetch_add(1);
      }
      partition.emit_record(0, reinterpret_cast<const uint8_t*>(&i), sizeof(i));  // 4 records per buffer
    }
    partition.finish();
  });
  uint64_t expected = 0;
  while (!gate.is_finished()) {
    std::optional<BufferOrEvent> next = gate.poll_next();
    if (!next) {
      if (!consumer_n.wait(20s)) timeouts.fetch_add(1);
      continue;
    }
    if (!next->is_buffer()) continue;
    const Buffer& b = next->buffer();
    ASSERT_EQ(b.bytes.size(), static_cast<size_t>(b.num_records) * sizeof(uint64_t));
    for (int32_t r = 0; r < b.num_records; ++r) {
      uint64_t v = 0;
      std::memcpy(&v, b.bytes.data() + static_cast<size_t>(r) * sizeof(v), sizeof(v));
      ASSERT_EQ(v, expected++);
    }
    gate.recycle(std::move(next->buffer()));
  }
  producer.join();
  EXPECT_EQ(expected, kRecords);
  EXPECT_EQ(timeouts.load(), 0);
}

}  // namespace
}  // namespace sluice::runtime
