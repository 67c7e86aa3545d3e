// Credit-based back-pressure, measured from outside the engine: a source counts what it generates, a
// throttled sink counts what it consumed; the difference (records in flight) stays within the network's
// buffers, and the source's rate follows the sink's.
#include <gtest/gtest.h>

#include <atomic>
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
