// What the region failover tests share, in one process (MiniCluster) and across TaskManagers: a stateful map that
// checks its own restore, an exactly-once file sink after it, and the check of the committed output.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint_it_util.h"
#include "cluster/job_placement.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"

namespace sluice::it {

// Random-number seeds for a test: the comma-separated list in environment variable `name`, else `fallback`.
inline std::vector<uint64_t> seeds_from_env(const char* name, const std::string& fallback) {
  const char* env = std::getenv(name);
  std::stringstream ss(env ? env : fallback);
  std::vector<uint64_t> out;
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoull(item));
  return out;
}

// `us` times SLUICE_TEST_SLOWDOWN (a whole number, default 1): a per-record throttle that keeps a job running until a
// test's failures are in; under a sanitizer every step of a test is slower, and so must the job be.
inline int64_t throttle_us(int64_t us) {
  const char* env = std::getenv("SLUICE_TEST_SLOWDOWN");
  return us * (env ? std::max<int64_t>(1, std::atoll(env)) : 1);
}

// Sleeps g_throttle_us (checkpoint_it_util.h) per record, so a test's failures come while the job runs.
inline int64_t throttled(int64_t v) {
  const int64_t us = g_throttle_us.load(std::memory_order_relaxed);
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
  return v;
}

// Counts the records of its subtask in operator state and emits "value,count": after a restore the count goes on
// from the restored one, so a count that does not match the value's position in its split shows a restore that did
// not match the source's position.
struct CountingMap : RichFunction, CheckpointedFunction {
  explicit CountingMap(bool throttle = true) : throttle_(throttle) {}  // sleeps g_throttle_us per record
  std::string operator()(int64_t&& v) {
    if (throttle_) throttled(v);
    ++count_;
    return std::to_string(v) + "," + std::to_string(count_);
  }
  // The state is the count, then the subtask's index as many times as the index: subtasks hold different numbers
  // of elements, so a restore that handed one subtask's elements to another (an even split at an unchanged
  // parallelism) shows in open() and fails the task, over and over, until the job fails.
  void initialize_state(FunctionInitializationContext& ctx) override {
    state_ = &ctx.operator_state_store().get_list_state(ListStateDescriptor<int64_t>("count"));
    restored_ = state_->get();
    if (!restored_.empty()) count_ = restored_.front();
  }
  void open(RuntimeContext& ctx) override {
    RichFunction::open(ctx);
    subtask_ = ctx.subtask_index();
    if (restored_.empty()) return;
    bool own = static_cast<int64_t>(restored_.size()) == 1 + subtask_;
    for (size_t i = 1; i < restored_.size(); ++i) own = own && restored_[i] == subtask_;
    if (!own) throw std::logic_error("subtask " + std::to_string(subtask_) + " restored another subtask's state");
  }
  void snapshot_state(const FunctionSnapshotContext&) override {
    std::vector<int64_t> state{count_};
    state.insert(state.end(), static_cast<size_t>(subtask_), subtask_);
    state_->update(std::move(state));
  }

 private:
  bool throttle_;
  int64_t subtask_ = 0;
  std::vector<int64_t> restored_;
  ListState<int64_t>* state_ = nullptr;
  int64_t count_ = 0;
};

// Every value of [0, records) exactly once in `lines` ("value,count"), and, when `split_starts` is given (the first
// value of each split, ascending), each count is the value's 1-based position in its split. "" when all holds.
inline std::string check_exactly_once(const std::vector<std::string>& lines, int64_t records,
                               const std::vector<int64_t>& split_starts) {
  std::map<int64_t, int> times;
  int64_t wrong_counts = 0;
  for (const std::string& line : lines) {
    const size_t comma = line.find(',');
    if (comma == std::string::npos) return "a line without a comma: '" + line + "'";
    const int64_t v = std::stoll(line.substr(0, comma));
    const int64_t c = std::stoll(line.substr(comma + 1));
    ++times[v];
    if (!split_starts.empty()) {
      const int64_t start = *std::prev(std::upper_bound(split_starts.begin(), split_starts.end(), v));
      if (c != v - start + 1) ++wrong_counts;
    }
  }
  int64_t missing = 0, duplicates = 0;
  for (int64_t v = 0; v < records; ++v) {
    auto found = times.find(v);
    if (found == times.end()) ++missing;
    else duplicates += found->second - 1;
  }
  if (missing + duplicates + wrong_counts == 0 && static_cast<int64_t>(times.size()) == records) return "";
  return std::to_string(missing) + " missing, " + std::to_string(duplicates) + " duplicates, " +
         std::to_string(wrong_counts) + " counts out of step with their split, " + std::to_string(times.size()) +
         " distinct values of " + std::to_string(records);
}

// Attempt number by (vertex, subtask) of what is deployed now.
inline std::map<std::pair<int32_t, int32_t>, int32_t> attempts(const JobClient& client) {
  std::map<std::pair<int32_t, int32_t>, int32_t> out;
  for (const auto& l : dynamic_cast<const cluster::JobPlacementView&>(client).subtask_locations()) {
    out[{l.id.vertex.value(), l.id.subtask.value()}] = l.id.attempt_number;
  }
  return out;
}

// `in` -> `count` (operator "count") -> exactly-once part files in `out` (operator "sink").
inline void count_and_commit(const DataStream<int64_t>& in, CountingMap count, const std::string& out) {
  in.map(std::move(count))
      .name("count")
      .uid("count")
      .sink_to(file::TransactionalFileSink<std::string>(out, [](const std::string& s, std::string& line) { line += s; }))
      .name("sink")
      .uid("sink");
}

}  // namespace sluice::it
