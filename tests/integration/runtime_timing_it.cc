// Time in the runtime: the buffer timeout keeps a slow stream moving, and processing time comes from the
// injectable clock (a rate-limited source paced by a ManualClock emits only as the test advances it).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

std::atomic<int64_t> g_arrived{0};

class CountingSink final : public Sink<int64_t> {
 public:
  std::unique_ptr<SinkWriter<int64_t>> create_writer(SinkInitContext&) const override { return std::make_unique<W>(); }

 private:
  struct W final : SinkWriter<int64_t> {
    void write(int64_t&&) override { g_arrived.fetch_add(1); }
    void flush(bool) override {}
  };
};

// The middle task (filter) receives records continuously but emits rarely; only the buffer timeout gets its
// partial output buffer to the sink while the job runs.
TEST(BufferTimeout, PartialBuffersAreFlushedWhileTheJobRuns) {
  g_arrived = 0;
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.buffer-timeout.interval", "20ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  env.from_generator(int64_t{1} << 40, [](int64_t i) { return i; }, /*records_per_second=*/5000)
      .rebalance()
      .filter([](const int64_t& x) { return x % 100 == 0; })
      .rebalance()
      .sink_to(CountingSink());
  auto client = env.execute_async("slow");
  ASSERT_TRUE(client.is_ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (g_arrived.load() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(g_arrived.load(), 3) << "records stuck in a partial buffer";
  (*client)->cancel();
  EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
}

TEST(ProcessingTime, RateLimitedSourceFollowsTheInjectedClock) {
  g_arrived = 0;
  auto clock = std::make_shared<ManualClock>(1'000'000);
  StreamExecutionEnvironment env;
  env.set_clock(clock);
  env.set_parallelism(1);
  env.from_generator(1000, [](int64_t i) { return i; }, /*records_per_second=*/10).sink_to(CountingSink());
  auto client = env.execute_async("paced");
  ASSERT_TRUE(client.is_ok());
  // Pacing starts at the first record: wait for it, so the clock moves after the start (never before it).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (g_arrived.load() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(g_arrived.load(), 1);  // time stands still: only the first record
  clock->advance_ms(1000);         // 1 s of processing time: 10 more records allowed
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (g_arrived.load() < 11 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(g_arrived.load(), 11);
  (*client)->cancel();
  (*client)->wait();
}

// The Nexmark stream is the same at any parallelism: the multiset of events (each fingerprinted by a hash of
// its serialized bytes) equals the single-generator stream.
uint64_t fingerprint(const nexmark::Event& e) {
  auto bytes = serialize_bytes(e);
  return hash_key_bytes(bytes.data(), bytes.size());
}

TEST(NexmarkSource, SameStreamAtAnyParallelism) {
  nexmark::NexmarkSourceOptions opt;
  opt.generator.max_events = 20'000;
  opt.num_splits = 6;
  nexmark::Generator gen(opt.generator);
  std::vector<uint64_t> expected;
  for (int64_t n = 0; n < 20'000; ++n) expected.push_back(fingerprint(gen.event_at(n)));
  std::sort(expected.begin(), expected.end());
  for (int p : {1, 2, 4}) {
    StreamExecutionEnvironment env;
    env.set_parallelism(p);
    auto out = std::make_shared<CollectedRecords<uint64_t>>();
    env.from_source(nexmark::NexmarkSource(opt), "nexmark")
        .map([](nexmark::Event&& e) { return fingerprint(e); })
        .sink_to(CollectSink<uint64_t>(out));
    auto r = env.execute("nexmark");
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
    auto got = out->snapshot();
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected) << "parallelism " << p;
  }
}

}  // namespace
}  // namespace sluice
