// Remote channels between two TaskManagers' data planes in one process: the in-process exchange tests'
// checks (order per channel, exactly once, events in place, lost wake-ups) with every channel on the one TCP
// connection between the two.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tcp/tests/tcp_test_util.h"
#include "runtime/network/tests/exchange_harness.h"
#include "runtime/network/tests/test_util.h"

namespace sluice::runtime::tcp {
namespace {

using runtime::testing::make_record;
using runtime::testing::parse_records;
using runtime::testing::ParsedRecord;
using runtime::testing::Plan;
using runtime::testing::run_exchange;
using testing::TwoTaskManagers;
using namespace std::chrono_literals;

// Every channel of the exchange on the one connection between TaskManager 1 (producers) and 2 (consumers).
void run_remote_exchange(const Plan& plan) {
  TwoTaskManagers tms;
  run_exchange(plan, [&](int32_t c, const std::vector<std::unique_ptr<ResultPartition>>& partitions) {
    std::vector<std::shared_ptr<Channel>> inputs;
    for (size_t p = 0; p < partitions.size(); ++p) {
      inputs.push_back(tms.connect(RemoteChannelId{0, static_cast<int32_t>(p), c, 0}, partitions[p]->channel(c)));
    }
    return inputs;
  });
  EXPECT_EQ(tms.log1.channel_failures() + tms.log2.channel_failures(), 0u);
}

TEST(RemoteExchange, AllToAllOverOneConnectionDeliversEveryRecordOnceInPerChannelOrder) {
  Plan plan{3, 3, 20000, NetworkConfig{}};
  plan.config.buffer_size_bytes = 512;
  plan.config.credits_per_channel = 2;
  plan.config.max_buffers_per_channel = 4;
  run_remote_exchange(plan);
}

TEST(RemoteExchange, TightestBoundsStillFlow) {
  Plan plan{2, 2, 10000, NetworkConfig{}};
  plan.config.buffer_size_bytes = 128;
  plan.config.credits_per_channel = 1;
  plan.config.max_buffers_per_channel = 1;
  run_remote_exchange(plan);
}

// Events in band and in order: an EndOfPartition right after the last data, watermarks between records, on
// a channel registered on the consumer side before the producer side (frames wait for the initial credit).
TEST(RemoteExchange, ChannelRegisteredOnTheConsumerSideFirstLosesNothing) {
  TwoTaskManagers tms;
  NetworkConfig config;
  config.buffer_size_bytes = 64;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  const RemoteChannelId id{5, 0, 0, 0};
  Result<std::shared_ptr<Channel>> consumer_half = tms.tm2->register_input(id, 1, config);
  ASSERT_TRUE(consumer_half.is_ok());
  InputGate gate({consumer_half.value()}, &consumer_n);
  std::vector<uint8_t> record;
  for (uint32_t s = 0; s < 3; ++s) {
    make_record(0, s, 4, &record);
    partition.emit_record(0, record.data(), record.size());
  }
  partition.broadcast_event(RuntimeEvent{EventType::kWatermark, {9}});
  partition.finish();
  ASSERT_TRUE(tms.tm1->register_output(id, 2, partition.channel(0)).is_ok());
  std::vector<std::string> items;
  while (!gate.is_finished()) {
    std::optional<BufferOrEvent> next = gate.poll_next();
    if (!next) {
      ASSERT_TRUE(consumer_n.wait(20s));
      continue;
    }
    if (next->is_buffer()) {
      for (const ParsedRecord& r : parse_records(next->buffer())) items.push_back("r" + std::to_string(r.seq));
      gate.recycle(std::move(next->buffer()));
    } else {
      items.push_back("e" + std::to_string(static_cast<int>(next->event().type)));
    }
  }
  EXPECT_EQ(items, (std::vector<std::string>{"r0", "r1", "r2", "e4", "e1"}));
}

// A record larger than the data plane's frame limit cannot be sent: its channel fails on the producer's side
// (the frame is never written), and a consumer cannot register buffers larger than the limit.
TEST(RemoteExchange, RecordBeyondTheFrameLimitFailsItsChannel) {
  FrameLimits limits;
  limits.max_data_bytes = 4096;
  testing::FailureLog log1, log2;
  auto tm1 = testing::start_manager(1, log1, testing::kFingerprint, limits);
  auto tm2 = testing::start_manager(2, log2, testing::kFingerprint, limits);
  ASSERT_TRUE(tm1->add_peer(2, "127.0.0.1", tm2->port()).is_ok());
  ASSERT_TRUE(tm2->add_peer(1, "127.0.0.1", tm1->port()).is_ok());
  NetworkConfig config;
  config.buffer_size_bytes = 1024;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  const RemoteChannelId id{7, 0, 0, 0};
  ASSERT_TRUE(tm1->register_output(id, 2, partition.channel(0)).is_ok());
  Result<std::shared_ptr<Channel>> input = tm2->register_input(id, 1, config);
  ASSERT_TRUE(input.is_ok());
  InputGate gate({input.value()}, &consumer_n);
  std::vector<uint8_t> record(10'000, 3);
  partition.emit_record(0, record.data(), record.size());
  std::optional<Status> failed = log1.wait_channel_failure(id);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->code(), StatusCode::kInvalidArgument);
  EXPECT_NE(failed->message().find("a record of 10000 bytes exceeds the data connection's frame limit of 4096 bytes"),
            std::string::npos)
      << failed->to_string();

  NetworkConfig too_big;
  too_big.buffer_size_bytes = 8192;
  Result<std::shared_ptr<Channel>> refused = tm2->register_input(RemoteChannelId{7, 1, 0, 0}, 1, too_big);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::runtime::tcp
