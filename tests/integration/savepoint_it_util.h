// Helpers of the savepoint integration tests (savepoint_it, rescaling_it): the main job (per-auction count/sum/max
// into the exactly-once file sink) on the in-process cluster, started, stopped with a savepoint and checked against
// the single-threaded oracle.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../../examples/per_auction/per_auction_job.h"
#include "../../tools/sluice/verify.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "cluster/mini_cluster.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/state/key_group_snapshot.h"

namespace sluice::savepoint_it {

namespace fs = std::filesystem;
inline constexpr int64_t kEvents = 1'200'000;

inline std::string temp_base(const std::string& name) {
  std::string base = ::testing::TempDir() + "savepoint-it-" + std::to_string(::getpid()) + "-" + name;
  fs::remove_all(base);
  return base;
}

inline int64_t source_events(const MetricRegistry& metrics, const std::string& job) {
  double total = 0;
  for (const auto& m : metrics.snapshot())
    if (m.name == metric_names::kNumRecordsOut && m.scope.rfind(job + ".bids.", 0) == 0) total += m.value;
  return static_cast<int64_t>(total);
}

struct Run {
  std::unique_ptr<JobClient> client;
  cluster::CheckpointingJobClient* cp = nullptr;
};

// The main job at `parallelism` on `backend`; restoring `restore` when set. Checkpoints are due only every hour
// (unless `extra` sets another interval): in these runs only savepoints and the final checkpoint of a bounded job
// complete. `extra` is applied last, over these defaults. `gate`: holds the sources at an event number (null: none).
inline Result<Run> start(const std::string& base, const std::string& job, int32_t parallelism, const std::string& backend,
                  const std::string& output, const std::string& restore = "", bool allow_non_restored = false,
                  const std::vector<std::pair<std::string, std::string>>& extra = {}, int64_t events = kEvents,
                  std::shared_ptr<nexmark::NexmarkEmitGate> gate = nullptr) {
  Configuration config;
  for (auto st : {config.set_string("execution.checkpointing.interval", "1h"),
                  config.set_string("execution.checkpointing.dir", base + "/ck"),
                  config.set_string("state.backend.type", backend)}) {
    if (!st.is_ok()) return st;
  }
  for (const auto& [k, v] : extra) SLUICE_RETURN_IF_ERROR(config.set_string(k, v));
  if (!restore.empty()) SLUICE_RETURN_IF_ERROR(config.set_string("execution.state-recovery.path", restore));
  if (allow_non_restored) {
    SLUICE_RETURN_IF_ERROR(config.set_string("execution.state-recovery.ignore-unclaimed-state", "true"));
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  per_auction::JobOptions opt;
  opt.source.generator.max_events = events;
  opt.source.num_splits = 8;
  opt.source.gate = std::move(gate);
  opt.output_dir = output;
  per_auction::build(env, opt);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<JobClient> client, env.execute_async(job));
  Run r;
  r.cp = dynamic_cast<cluster::CheckpointingJobClient*>(client.get());
  r.client = std::move(client);
  if (r.cp == nullptr) return Status::internal("not a checkpointing job client");
  return r;
}

inline void wait_for_events(const Run& r, const std::string& job, int64_t events) {
  while (!is_globally_terminal(r.client->status()) && source_events(r.client->metrics(), job) < events) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ASSERT_EQ(r.client->status(), JobStatus::kRunning) << "the job ended before " << events << " events";
}

inline void expect_exactly_once(const std::string& output, int64_t events = kEvents) {
  per_auction::JobOptions opt;
  opt.source.generator.max_events = events;
  auto oracle = nexmark::compute_per_auction_oracle(opt.source.generator, events);
  auto report = cli::verify_per_auction_output(output, oracle);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->missing, 0) << output;
  EXPECT_EQ(report->duplicates, 0) << output;
  EXPECT_EQ(report->mismatches(), 0) << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  std::printf("  %s: %lld update lines, %lld auctions, exactly once\n", output.c_str(),
              static_cast<long long>(report->records), static_cast<long long>(report->auctions));
}

// The committed lines of every part file, sorted.
inline std::vector<std::string> committed_lines(const std::string& dir) {
  std::vector<std::string> lines;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("part-", 0) != 0) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Per auction, the committed update with the highest count (the final value).
inline std::map<std::string, std::pair<int64_t, std::string>> final_lines(const std::string& dir) {
  std::map<std::string, std::pair<int64_t, std::string>> out;
  for (const std::string& line : committed_lines(dir)) {
    const size_t a = line.find(','), b = line.find(',', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const int64_t count = std::stoll(line.substr(a + 1, b - a - 1));
    auto& best = out[line.substr(0, a)];
    if (count > best.first) best = {count, line};
  }
  return out;
}

// Stops `r` with a savepoint (of `format`) into `dir`; returns the savepoint folder.
inline std::string stop(Run& r, const std::string& dir, bool drain,
                        checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical) {
  auto trigger = r.cp->stop_with_savepoint(dir, drain, format);
  EXPECT_TRUE(trigger.is_ok()) << trigger.status().to_string();
  if (!trigger.is_ok()) return "";
  auto result = r.client->wait();
  EXPECT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  auto st = r.cp->wait_savepoint(*trigger, 60'000);
  EXPECT_TRUE(st.has_value());
  if (!st) return "";
  EXPECT_EQ(st->state, cluster::SavepointRequestStatus::State::kCompleted) << st->cause.to_string();
  return st->location;
}

// The keys (serialized bytes) of the keyed state operator `uid` (its operator id) holds in the savepoint or
// checkpoint at `folder` (full snapshots: canonical savepoints, checkpoints that are not incremental).
inline std::set<std::string> savepoint_keys(const std::string& folder, const std::string& uid) {
  std::set<std::string> keys;
  auto& fsys = *sluice::fs::local_file_system();
  auto loc = checkpoint::locate_checkpoint(fsys, folder);
  EXPECT_TRUE(loc.is_ok()) << loc.status().to_string();
  if (!loc.is_ok()) return keys;
  auto md = checkpoint::read_checkpoint_metadata(fsys, *loc);
  EXPECT_TRUE(md.is_ok()) << md.status().to_string();
  if (!md.is_ok()) return keys;
  checkpoint::FileSystemCheckpointStorage storage("");
  for (const auto& op : md->operators) {
    if (op.operator_id != uid) continue;
    for (const auto& st : op.subtasks) {
      if (!st.keyed_state) continue;
      auto bytes = storage.read_state(loc->checkpoint_dir, st.keyed_state->stream);
      EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
      if (!bytes.is_ok()) continue;
      const auto& offsets = st.keyed_state->offsets;
      for (size_t i = 0; i + 1 < offsets.size(); ++i) {
        if (offsets[i + 1] == offsets[i]) continue;
        auto view = parse_key_group_snapshot(bytes->data() + offsets[i], offsets[i + 1] - offsets[i]);
        EXPECT_TRUE(view.is_ok()) << view.status().to_string();
        if (!view.is_ok()) continue;
        for (const auto& state : view->states) {
          SnapshotEntryReader r(state);
          std::string_view k, n, v;
          while (r.next(&k, &n, &v)) keys.emplace(k);
        }
      }
    }
  }
  return keys;
}

}  // namespace sluice::savepoint_it
