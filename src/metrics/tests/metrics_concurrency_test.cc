// One writer, concurrent readers: what the runtime does (task thread writes, REST/job handle reads).
// Meant to run under TSan and ASan (label `runtime`). No timing assertions.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sluice/metrics/metric_registry.h"

namespace sluice {
namespace {

constexpr int64_t kIncrements = 200'000;

TEST(MetricsConcurrency, CounterSingleWriterConcurrentReader) {
  MetricRegistry registry;
  Counter& counter = registry.add_job_group("j").counter("numRecordsOut");
  std::atomic<bool> done{false};
  int64_t reads = 0;
  bool monotonic = true;
  std::thread reader([&] {
    int64_t last = 0;
    // do-while: on a loaded machine the writer may finish before this thread first runs.
    do {
      int64_t now = counter.count();
      if (now < last || now > kIncrements) monotonic = false;
      last = now;
      ++reads;
      std::optional<double> via_registry = registry.find("j", "numRecordsOut");
      if (!via_registry || *via_registry < static_cast<double>(last)) monotonic = false;
    } while (!done.load(std::memory_order_acquire));
  });
  std::thread writer([&] {
    for (int64_t i = 0; i < kIncrements; ++i) counter.inc();
    done.store(true, std::memory_order_release);
  });
  writer.join();
  reader.join();
  EXPECT_TRUE(monotonic) << "a reader saw the count go backwards or overshoot";
  EXPECT_GT(reads, 0);
  EXPECT_EQ(counter.count(), kIncrements);
  EXPECT_EQ(registry.find("j", "numRecordsOut"), static_cast<double>(kIncrements));
}

TEST(MetricsConcurrency, HistogramSingleWriterConcurrentSnapshots) {
  MetricRegistry registry;
  Histogram& h = registry.add_job_group("j").histogram("latencyNs");
  std::atomic<bool> done{false};
  bool consistent = true;
  std::thread reader([&] {
    uint64_t last_count = 0;
    while (!done.load(std::memory_order_acquire)) {
      HistogramStatistics s = h.statistics();
      if (s.count < last_count) consistent = false;
      if (s.count > 0 && (s.min < 0 || s.p50 < s.min || s.p99 > s.max || s.max >= 1000)) consistent = false;
      last_count = s.count;
      (void)registry.snapshot_json();
    }
  });
  std::thread writer([&] {
    for (int64_t i = 0; i < kIncrements; ++i) h.record(i % 1000);
    done.store(true, std::memory_order_release);
  });
  writer.join();
  reader.join();
  EXPECT_TRUE(consistent);
  HistogramStatistics s = h.statistics();
  EXPECT_EQ(s.count, static_cast<uint64_t>(kIncrements));
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 999);
}

TEST(MetricsConcurrency, RegistrationFromManyThreadsWhileSnapshotting) {
  MetricRegistry registry;
  MetricGroup& op = registry.add_job_group("j").add_operator_group("op");
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::atomic<bool> done{false};
  std::thread snapshotter([&] {
    while (!done.load(std::memory_order_acquire)) (void)registry.snapshot();
  });
  std::vector<std::thread> tasks;
  for (int t = 0; t < kThreads; ++t) {
    tasks.emplace_back([&, t] {
      MetricGroup& subtask = op.add_subtask_group(SubtaskIndex(t));
      for (int i = 0; i < kPerThread; ++i) {
        std::string name = std::string("c").append(std::to_string(i));
        subtask.counter(name).inc(i);
        // Every thread also races on the same shared names.
        op.add_group("shared").counter(name);
      }
    });
  }
  for (auto& t : tasks) t.join();
  done.store(true, std::memory_order_release);
  snapshotter.join();
  EXPECT_EQ(registry.snapshot().size(), static_cast<size_t>(kThreads * kPerThread + kPerThread));
  EXPECT_EQ(registry.find("j.op.3", "c499"), 499.0);
}

TEST(MetricsConcurrency, RemovedGaugeIsNeverCalledAfterRemoval) {
  MetricRegistry registry;
  MetricGroup& g = registry.add_job_group("j");
  std::atomic<bool> done{false};
  std::thread snapshotter([&] {
    while (!done.load(std::memory_order_acquire)) (void)registry.snapshot();
  });
  // A task registers a gauge over its own object, then tears down: remove_gauge, then destroy the object.
  // ASan/TSan report it if a snapshot still calls the gauge afterwards.
  for (int i = 0; i < 300; ++i) {
    auto task_state = std::make_unique<std::atomic<int64_t>>(i);
    std::atomic<int64_t>* raw = task_state.get();
    g.gauge("stateSizeBytes", [raw] { return static_cast<double>(raw->load()); });
    std::this_thread::yield();
    g.remove_gauge("stateSizeBytes");
    task_state.reset();
  }
  done.store(true, std::memory_order_release);
  snapshotter.join();
  EXPECT_FALSE(registry.find("j", "stateSizeBytes").has_value());
}

}  // namespace
}  // namespace sluice
