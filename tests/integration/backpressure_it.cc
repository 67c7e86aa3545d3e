// Credit-based back-pressure, measured from outside the engine: a source counts what it generates, a
// throttled sink counts what it consumed; the difference (records in flight) stays within the network's
// buffers, and the source's rate follows the sink's.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "sluice/sluice.h"

namespace sluice {
namespace {

// Pool sizes of this test (the bound below is computed from them).
constexpr int32_t kCreditsPerChannel = 2;         // taskmanager.network.memory.buffers-per-channel
constexpr int32_t kSenderBuffersPerChannel = 4;   // taskmanager.network.memory.max-buffers-per-channel
constexpr int32_t kSegmentBytes = 4096;           // taskmanager.memory.segment-size
constexpr size_t kPayloadBytes = 1000;

std::atomic<int64_t> g_emitted{0};
std::atomic<int64_t> g_consumed{0};

class ThrottledSink final : public Sink<std::string> {
 public:
  std::unique_ptr<SinkWriter<std::string>> create_writer(SinkInitContext&) const override {
    return std::make_unique<Writer>();
  }

 private:
  struct Writer final : SinkWriter<std::string> {
    void write(std::string&& r) override {
      if (r.size() != kPayloadBytes) throw std::logic_error("unexpected record size");
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      g_consumed.fetch_add(1);
    }
    void flush(bool) override {}
  };
};

TEST(BackPressure, InFlightRecordsStayWithinBuffersAndSourceFollowsSink) {
  Configuration config;
  ASSERT_TRUE(config.set_string("taskmanager.network.memory.buffers-per-channel", std::to_string(kCreditsPerChannel)).is_ok());
  ASSERT_TRUE(config.set_string("taskmanager.network.memory.max-buffers-per-channel", std::to_string(kSenderBuffersPerChannel)).is_ok());
  ASSERT_TRUE(config.set_string("taskmanager.memory.segment-size", std::to_string(kSegmentBytes) + "b").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  env.from_generator(int64_t{1} << 40, [](int64_t) {
       g_emitted.fetch_add(1);
       return std::string(kPayloadBytes, 'x');
     })
      .rebalance()
      .sink_to(ThrottledSink());
  auto client = env.execute_async("backpressure");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();

  // A record serializes to kPayloadBytes + 2 (varint length): this many fit in one buffer.
  const int64_t records_per_buffer = kSegmentBytes / static_cast<int64_t>(kPayloadBytes + 2);
  const int64_t bound = (kCreditsPerChannel + kSenderBuffersPerChannel + 1) * records_per_buffer;

  int64_t max_in_flight = 0;
  auto t0 = std::chrono::steady_clock::now();
  int64_t e0 = 0, c0 = 0;
  bool window_started = false;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2500)) {
    int64_t c = g_consumed.load();
    int64_t e = g_emitted.load();
    max_in_flight = std::max(max_in_flight, e - c);
    if (!window_started && std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(500)) {
      e0 = e;
      c0 = c;
      window_started = true;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  int64_t e1 = g_emitted.load(), c1 = g_consumed.load();
  // Flink's task-time metrics while it runs: the source's task waits for credit most of each second, the sink's
  // task is busy (its writes sleep) and seldom idle; per operator, the sink's records in per second follow what
  // it consumed.
  const auto running = (*client)->metrics().snapshot();
  auto task_metric = [&](const std::string& task_part, const std::string& name) {
    for (const auto& m : running) {
      auto task = m.variables.find("task_name");
      if (m.name == name && task != m.variables.end() && task->second.find(task_part) != std::string::npos) {
        return m.value;
      }
    }
    ADD_FAILURE() << "no " << name << " of a task named like '" << task_part << "'";
    return -1.0;
  };
  EXPECT_GT(task_metric("Source", "backPressuredTimeMsPerSecond"), 500);
  EXPECT_GT(task_metric("Sink", "busyTimeMsPerSecond"), 500);
  EXPECT_LT(task_metric("Sink", "idleTimeMsPerSecond"), 300);
  double sink_in_rate = -1;
  for (const auto& m : running) {
    if (m.name == "numRecordsInPerSecond" && m.variables.count("operator_name") != 0) sink_in_rate = m.value;
  }
  const double consumed_rate = static_cast<double>(c1) / 2.5;
  EXPECT_GT(sink_in_rate, 0.5 * consumed_rate) << "records in per second vs consumed " << c1 << " in ~2.5 s";
  EXPECT_LT(sink_in_rate, 1.5 * consumed_rate) << "records in per second vs consumed " << c1 << " in ~2.5 s";
  (*client)->cancel();
  auto result = (*client)->wait();
  EXPECT_EQ(result.status, JobStatus::kCanceled);

  std::printf("records per buffer %lld, bound %lld, max in flight %lld, source %lld vs sink %lld records in window\n",
              static_cast<long long>(records_per_buffer), static_cast<long long>(bound),
              static_cast<long long>(max_in_flight), static_cast<long long>(e1 - e0), static_cast<long long>(c1 - c0));
  EXPECT_LE(max_in_flight, bound);
  EXPECT_GT(max_in_flight, records_per_buffer);  // the buffers did fill: the sink really was the bottleneck
  ASSERT_GT(c1 - c0, 100);
  double ratio = static_cast<double>(e1 - e0) / static_cast<double>(c1 - c0);
  EXPECT_GT(ratio, 0.8);
  EXPECT_LT(ratio, 1.2);

  double back_pressured_ns = 0;
  for (const auto& m : (*client)->metrics().snapshot()) {
    if (m.name == "backPressuredTimeNs") back_pressured_ns += m.value;
  }
  EXPECT_GT(back_pressured_ns, 1e8);  // the source spent most of 2.5 s waiting for credit
}

}  // namespace
}  // namespace sluice
