// The seeded failover pattern of the timer ITs (timers_it, event_time_timers_it): failures of distinct classes
// (runtime::kFailureClasses, shuffled by the seed), each armed once the source has emitted a seeded share of its
// records and waited for (fired, then restarted) before the next; and the check that an exactly-once file sink
// committed the failure-free run's lines, each once.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/mini_cluster.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/sluice.h"

namespace sluice::failover_test {

// Checkpoints every 30 ms into `checkpoint_dir` and restarts (up to 100 times, 10 ms apart): the failover ITs'
// settings.
inline void configure_failover(Configuration& config, const std::string& checkpoint_dir) {
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "30ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", checkpoint_dir).is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "100").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
}

// Records emitted so far by the operator whose metric scope starts with `scope_prefix` ("<job>.<operator>.").
inline int64_t records_out(const MetricRegistry& metrics, const std::string& scope_prefix) {
  double total = 0;
  for (const auto& m : metrics.snapshot()) {
    if (m.name == metric_names::kNumRecordsOut && m.scope.rfind(scope_prefix, 0) == 0) total += m.value;
  }
  return static_cast<int64_t>(total);
}

// Arms `failures` failures while the job runs: the i-th once progress() (records so far, e.g. the source's
// numRecordsOut) has reached the i-th of `failures` sorted seeded thresholds between 10 % and 80 % of `total`.
// Returns when all fired and restarted, or when the job ended.
inline void inject_seeded_failures(JobClient& client, cluster::CheckpointingJobClient& cp, uint64_t seed,
                                   int32_t failures, int64_t total, const std::function<int64_t()>& progress,
                                   const std::string& what) {
  std::mt19937_64 rng(seed);
  std::vector<runtime::FailurePoint> classes(std::begin(runtime::kFailureClasses), std::end(runtime::kFailureClasses));
  std::shuffle(classes.begin(), classes.end(), rng);
  std::vector<int64_t> thresholds;
  for (int32_t i = 0; i < failures; ++i) {
    thresholds.push_back(static_cast<int64_t>((0.1 + 0.7 * static_cast<double>(rng() % 1000) / 1000.0) * total));
  }
  std::sort(thresholds.begin(), thresholds.end());
  auto running = [&] { return !is_globally_terminal(client.status()); };
  for (int32_t i = 0; i < failures && running(); ++i) {
    while (running() && progress() < thresholds[static_cast<size_t>(i)]) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const runtime::FailurePoint point = classes[static_cast<size_t>(i)];
    const int32_t vertex =
        point == runtime::FailurePoint::kBetweenSyncAndAsyncSnapshot ? static_cast<int32_t>(rng() % 2) : -1;
    const int32_t subtask = point == runtime::FailurePoint::kSource ? -1 : static_cast<int32_t>(rng() % 2);
    Status armed = cp.arm_failure(point, vertex, subtask, what + " failure " + std::to_string(i + 1));
    EXPECT_TRUE(armed.is_ok()) << armed.to_string();
    while (running() && static_cast<int32_t>(cp.injected_failures().size()) <= i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    while (running() && cp.restarts() <= i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

inline void print_injected_failures(const cluster::CheckpointingJobClient& cp) {
  for (const auto& f : cp.injected_failures()) {
    std::printf("  failure [%s] vertex %d subtask %d attempt %d\n", runtime::failure_point_name(f.point), f.vertex,
                f.subtask, f.attempt);
  }
}

// Committed lines of an output directory (in-progress files start with '.').
inline std::multiset<std::string> committed_lines(const std::string& dir) {
  std::multiset<std::string> lines;
  if (!std::filesystem::exists(dir)) return lines;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename().string().rfind('.', 0) == 0) continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) lines.insert(line);
  }
  return lines;
}

// The committed lines of `dir` are `expected`, each as often.
inline void expect_committed(const std::string& dir, const std::multiset<std::string>& expected) {
  const std::multiset<std::string> got = committed_lines(dir);
  EXPECT_EQ(got.size(), expected.size());
  std::vector<std::string> missing, extra;
  std::set_difference(expected.begin(), expected.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), expected.begin(), expected.end(), std::back_inserter(extra));
  EXPECT_TRUE(missing.empty()) << missing.size() << " missing, first " << missing.front();
  EXPECT_TRUE(extra.empty()) << extra.size() << " duplicated or wrong, first " << extra.front();
}

}  // namespace sluice::failover_test
