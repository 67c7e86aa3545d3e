// Savepoints end to end (docs/savepoints.md), on the main job (per-auction count/sum/max into the
// exactly-once file sink) and the in-process cluster:
// - stop-with-savepoint, then a restore at another parallelism on the other state backend (4 -> 2 heap -> RocksDB,
//   2 -> 5 RocksDB with incremental checkpoints -> heap): the committed output is exactly once against the
//   single-threaded oracle of a failure-free run; a second restore of the same savepoint (into a copy of the
//   output) is exactly once too and ends in the same final value per auction;
// - a savepoint taken while the job runs (unaligned checkpoints on) is aligned, commits nothing (no checkpoint
//   completes in these runs), survives a cancellation, restores after its folder was moved (2 -> 3), and the
//   result is exactly once;
// - state of operators the job does not have: refused with the list, or dropped and reported with
//   allow_non_restored_state;
// - a damaged or missing savepoint file fails the restore, naming the file;
// - stop with drain fires event-time windows (the final watermark), stop without drain does not; also with
//   checkpointing off;
// - with checkpointing off (interval 0, the default) the job still takes savepoints: one taken while it runs is
//   exactly once both when the job runs on to its end and when it is cancelled and restored (checkpointing still
//   off); a stop commits the sinks; no checkpoint folder is made; a failure still fails the job (no restarts).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/restore_path.h"
#include "cluster/mini_cluster.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/sink/builtin_sinks.h"
#include "sluice/windowing/window_assigners.h"
#include "sluice/windowing/windowed_stream.h"
#include "savepoint_it_util.h"

namespace sluice {
namespace {

using namespace savepoint_it;  // NOLINT: the helpers of this suite
namespace fs = std::filesystem;

struct Rescale {
  int32_t from, to;
  const char* from_backend;
  const char* to_backend;
  bool incremental;  // the first job has incremental checkpoints on: its savepoint is still full
};

TEST(SavepointIT, StopWithSavepointThenRestoreAtAnotherParallelismAndBackendIsExactlyOnce) {
  for (const Rescale& c : {Rescale{4, 2, "hashmap", "rocksdb", false}, Rescale{2, 5, "rocksdb", "hashmap", true}}) {
    std::printf("stop at parallelism %d on %s%s, restore at %d on %s\n", c.from, c.from_backend,
                c.incremental ? " (incremental checkpoints)" : "", c.to, c.to_backend);
    const std::string base = temp_base(std::string("rescale-") + std::to_string(c.from) + "-" + std::to_string(c.to));
    std::vector<std::pair<std::string, std::string>> extra;
    if (c.incremental) extra.emplace_back("execution.checkpointing.incremental", "true");
    auto first = start(base, "sp-first", c.from, c.from_backend, base + "/out", "", false, extra);
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    wait_for_events(*first, "sp-first", kEvents / 5);
    const std::string savepoint = stop(*first, base + "/savepoints", /*drain=*/false);
    ASSERT_FALSE(savepoint.empty());
    EXPECT_EQ(fs::path(savepoint).parent_path(), fs::path(base + "/savepoints"));
    EXPECT_TRUE(fs::exists(savepoint + "/_metadata"));
    for (const auto& e : fs::recursive_directory_iterator(savepoint)) {
      EXPECT_TRUE(e.is_regular_file()) << "a savepoint folder holds files only: " << e.path();
    }
    first->client.reset();
    const std::vector<std::string> at_savepoint = committed_lines(base + "/out");
    EXPECT_GT(at_savepoint.size(), 0u) << "the stop's savepoint committed the sink's output";
    fs::copy(base + "/out", base + "/out-again", fs::copy_options::recursive);

    auto second = start(base, "sp-second", c.to, c.to_backend, base + "/out", savepoint);
    ASSERT_TRUE(second.is_ok()) << second.status().to_string();
    auto done = second->client->wait();
    ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
    ASSERT_EQ(second->cp->initial_restore()->second, savepoint);
    second->client.reset();
    expect_exactly_once(base + "/out");
    EXPECT_TRUE(fs::exists(savepoint + "/_metadata")) << "a savepoint is never deleted by the job";

    // Restoring the same savepoint again (into a copy of the output at the savepoint) gives the same lines.
    auto third = start(base, "sp-third", c.to, c.to_backend, base + "/out-again", savepoint);
    ASSERT_TRUE(third.is_ok()) << third.status().to_string();
    ASSERT_EQ(third->client->wait().status, JobStatus::kFinished);
    third->client.reset();
    // Both restores pass the oracle and end in the same final values per auction. (Intermediate sums differ
    // between runs: an auction's bids reach the keyed operator from several source subtasks, in an interleaving
    // that depends on timing, so the running sum after the c-th bid is not deterministic even without restores.)
    expect_exactly_once(base + "/out-again");
    EXPECT_EQ(final_lines(base + "/out"), final_lines(base + "/out-again"));
    fs::remove_all(base);
  }
}

TEST(SavepointIT, SavepointWhileRunningCommitsNothingAndRestoresAfterItsFolderMoved) {
  const std::string base = temp_base("running");
  // Unaligned checkpoints on: the savepoint is aligned all the same (a savepoint with channel state would be
  // refused by validate_metadata and fail).
  auto first = start(base, "sp-running", 2, "hashmap", base + "/out", "", false,
                     {{"execution.checkpointing.unaligned.enabled", "true"}});
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  wait_for_events(*first, "sp-running", kEvents / 5);
  auto trigger = first->cp->trigger_savepoint(base + "/savepoints");
  ASSERT_TRUE(trigger.is_ok()) << trigger.status().to_string();
  auto st = first->cp->wait_savepoint(*trigger, 60'000);
  ASSERT_TRUE(st.has_value());
  ASSERT_EQ(st->state, cluster::SavepointRequestStatus::State::kCompleted) << st->cause.to_string();
  EXPECT_EQ(first->client->status(), JobStatus::kRunning) << "a savepoint does not stop the job";
  EXPECT_FALSE(first->cp->savepoint_status("0123456789abcdef0123456789abcdef").has_value());
  first->client->cancel();
  EXPECT_EQ(first->client->wait().status, JobStatus::kCanceled);
  first->client.reset();
  EXPECT_TRUE(committed_lines(base + "/out").empty()) << "a savepoint commits no side effects";
  EXPECT_TRUE(fs::exists(st->location + "/_metadata")) << "the job's end does not delete a savepoint";

  // Only relative paths: the folder restores from its new place, under a new name.
  const std::string moved = base + "/elsewhere/renamed-savepoint";
  fs::create_directories(base + "/elsewhere");
  fs::rename(st->location, moved);
  auto second = start(base, "sp-moved", 3, "rocksdb", base + "/out", moved);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  auto done = second->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  second->client.reset();
  expect_exactly_once(base + "/out");
  fs::remove_all(base);
}

TEST(SavepointIT, UnmatchedOperatorStateFailsOrIsDroppedAndReported) {
  const std::string base = temp_base("uids");
  auto first = start(base, "sp-uids", 2, "hashmap", base + "/out");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  wait_for_events(*first, "sp-uids", kEvents / 10);
  const std::string savepoint = stop(*first, base + "/savepoints", false);
  ASSERT_FALSE(savepoint.empty());
  first->client.reset();

  // Another job: the same source uid is absent too (auto-generated ids), so nothing matches.
  auto other = [&](bool allow) -> Result<std::unique_ptr<JobClient>> {
    Configuration config;
    SLUICE_RETURN_IF_ERROR(config.set_string("execution.checkpointing.interval", "1h"));
    SLUICE_RETURN_IF_ERROR(config.set_string("execution.checkpointing.dir", base + "/ck"));
    SLUICE_RETURN_IF_ERROR(config.set_string("execution.state-recovery.path", savepoint));
    if (allow) SLUICE_RETURN_IF_ERROR(config.set_string("execution.state-recovery.ignore-unclaimed-state", "true"));
    StreamExecutionEnvironment env(config);
    env.set_parallelism(1);
    env.from_collection(std::vector<int64_t>{1, 2, 3}).uid("numbers").sink_to(DiscardingSink<int64_t>()).uid("discard");
    return env.execute_async("sp-other");
  };
  auto refused = other(false);
  ASSERT_FALSE(refused.is_ok());
  const std::string msg = refused.status().to_string();
  for (const char* uid : {"per-auction", "sink"}) EXPECT_NE(msg.find(uid), std::string::npos) << msg;
  EXPECT_NE(msg.find("--allow-non-restored-state"), std::string::npos) << msg;

  auto allowed = other(true);
  ASSERT_TRUE(allowed.is_ok()) << allowed.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(allowed->get());
  ASSERT_NE(cp, nullptr);
  std::vector<std::string> dropped;
  for (const auto& u : cp->dropped_state()) dropped.push_back(u.operator_id);
  EXPECT_NE(std::find(dropped.begin(), dropped.end(), "per-auction"), dropped.end());
  EXPECT_NE(std::find(dropped.begin(), dropped.end(), "sink"), dropped.end());
  EXPECT_EQ((*allowed)->wait().status, JobStatus::kFinished);
  allowed->reset();
  fs::remove_all(base);
}

TEST(SavepointIT, DamagedOrMissingSavepointFilesFailLoudlyNamingTheFile) {
  const std::string base = temp_base("damaged");
  auto first = start(base, "sp-damaged", 2, "hashmap", base + "/out");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  wait_for_events(*first, "sp-damaged", kEvents / 10);
  const std::string savepoint = stop(*first, base + "/savepoints", false);
  ASSERT_FALSE(savepoint.empty());
  first->client.reset();
  // The largest state file, truncated by one byte.
  std::string largest;
  for (const auto& e : fs::directory_iterator(savepoint)) {
    if (e.path().filename() == "_metadata" || e.path().filename().string()[0] == '_') continue;
    if (largest.empty() || fs::file_size(e.path()) > fs::file_size(largest)) largest = e.path().string();
  }
  ASSERT_FALSE(largest.empty()) << "the savepoint has state files";
  const std::string damaged = base + "/damaged";
  fs::copy(savepoint, damaged);
  const std::string file = damaged + "/" + fs::path(largest).filename().string();
  fs::resize_file(file, fs::file_size(file) - 1);
  auto r = start(base, "sp-bad", 2, "hashmap", base + "/out-bad", damaged);
  if (r.is_ok()) {
    auto res = r->client->wait();
    EXPECT_NE(res.status, JobStatus::kFinished);
    EXPECT_NE(res.error.to_string().find(file), std::string::npos) << res.error.to_string();
  } else {
    EXPECT_NE(r.status().to_string().find(file), std::string::npos) << r.status().to_string();
  }
  fs::remove(file);
  auto missing = start(base, "sp-missing", 2, "hashmap", base + "/out-bad", damaged);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().to_string().find(file), std::string::npos) << missing.status().to_string();
  fs::remove(damaged + "/_metadata");
  auto no_metadata = start(base, "sp-nometa", 2, "hashmap", base + "/out-bad", damaged);
  ASSERT_FALSE(no_metadata.is_ok());
  EXPECT_NE(no_metadata.status().to_string().find(damaged + "/_metadata"), std::string::npos)
      << no_metadata.status().to_string();
  fs::remove_all(base);
}

// Per (auction % 8) and 1 ms of event time, the number of bids. Returns (bids the job read, bids the fired windows
// counted) after a stop with or without drain.
// `checkpointing` false: interval 0 (savepoints only).
std::pair<int64_t, int64_t> windowed_counts_after_stop(bool drain, bool checkpointing = true) {
  const std::string base = temp_base(std::string(drain ? "drain" : "nodrain") + (checkpointing ? "" : "-off"));
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", checkpointing ? "1h" : "0").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", base + "/ck").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  nexmark::NexmarkSourceOptions source;
  source.generator.max_events = -1;  // unbounded: only the stop ends it
  auto bids_read = std::make_shared<std::atomic<int64_t>>(0);
  auto fired = std::make_shared<std::atomic<int64_t>>(0);  // bids in windows that fired so far
  auto windows = std::make_shared<CollectedRecords<std::pair<int64_t, int64_t>>>();
  env.from_source(nexmark::NexmarkSource(source),
                  WatermarkStrategy<nexmark::Event>::for_bounded_out_of_orderness(std::chrono::milliseconds(0))
                      .with_timestamp_assigner([](const nexmark::Event& e) { return e.event_time_ms(); }),
                  "bids")
      .filter([](const nexmark::Event& e) { return e.is_bid(); })
      .uid("only-bids")
      .map([bids_read](nexmark::Event&& e) {
        bids_read->fetch_add(1);
        return std::pair<int64_t, int64_t>(e.bid().auction % 8, 1);
      })
      .uid("to-pair")
      .key_by([](const std::pair<int64_t, int64_t>& p) { return p.first; })
      .window(TumblingEventTimeWindows::of(1))
      .reduce([](const std::pair<int64_t, int64_t>& a, const std::pair<int64_t, int64_t>& b) {
        return std::pair<int64_t, int64_t>(a.first, a.second + b.second);
      })
      .uid("windows")
      .map([fired](std::pair<int64_t, int64_t>&& p) {
        fired->fetch_add(p.second);
        return p;
      })
      .uid("fired")
      .sink_to(CollectSink<std::pair<int64_t, int64_t>>(windows))
      .uid("collect");
  auto client = env.execute_async(drain ? "sp-drain" : "sp-nodrain");
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  if (!client.is_ok()) return {0, 0};
  Run r;
  r.cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  r.client = std::move(*client);
  // Until some windows fired (the watermark advanced), so that without drain some fired and others stay open.
  while (bids_read->load() < 50'000 || fired->load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::string savepoint = stop(r, base + "/savepoints", drain);
  EXPECT_FALSE(savepoint.empty());
  r.client.reset();
  if (!checkpointing) {
    EXPECT_FALSE(fs::exists(base + "/ck")) << "no checkpoint folder without checkpointing";
  }
  int64_t counted = 0;
  for (const auto& w : windows->snapshot()) counted += w.second;
  fs::remove_all(base);
  return {bids_read->load(), counted};
}

TEST(SavepointIT, StopWithDrainFiresEventTimeWindowsAndStopWithoutDrainDoesNot) {
  for (const bool checkpointing : {true, false}) {
    std::printf("checkpointing %s\n", checkpointing ? "on" : "off");
    auto [read, counted] = windowed_counts_after_stop(/*drain=*/true, checkpointing);
    std::printf("  drain: %lld bids read, %lld counted by fired windows\n", static_cast<long long>(read),
                static_cast<long long>(counted));
    EXPECT_GT(read, 0);
    EXPECT_EQ(counted, read) << "with drain the final watermark fires every window";
    auto [read2, counted2] = windowed_counts_after_stop(/*drain=*/false, checkpointing);
    std::printf("  no drain: %lld bids read, %lld counted by fired windows\n", static_cast<long long>(read2),
                static_cast<long long>(counted2));
    EXPECT_GT(counted2, 0);
    EXPECT_LT(counted2, read2) << "without drain open windows stay in the savepoint";
  }
}

// Checkpointing off: what the sink pre-committed at a savepoint's barrier is committed either by the run that goes
// on to its end (at the end of input) or by a run restored from the savepoint - never by both, never by neither.
TEST(SavepointIT, WithoutCheckpointingASavepointIsExactlyOnceWhetherTheJobRunsOnOrIsRestored) {
  constexpr int64_t kOffEvents = 400'000;
  const std::string base = temp_base("checkpointing-off");
  const std::vector<std::pair<std::string, std::string>> off{{"execution.checkpointing.interval", "0"}};
  auto take_savepoint = [&](savepoint_it::Run& r, const std::string& job) {
    wait_for_events(r, job, kOffEvents / 5);
    auto trigger = r.cp->trigger_savepoint(base + "/savepoints");
    EXPECT_TRUE(trigger.is_ok()) << trigger.status().to_string();
    if (!trigger.is_ok()) return std::string();
    auto st = r.cp->wait_savepoint(*trigger, 60'000);
    EXPECT_TRUE(st.has_value());
    if (!st) return std::string();
    EXPECT_EQ(st->state, cluster::SavepointRequestStatus::State::kCompleted) << st->cause.to_string();
    return st->location;
  };

  // The job runs on to its end: the savepoint's committables are committed with the rest when the input ends.
  auto on = start(base, "sp-off-on", 2, "hashmap", base + "/out-on", "", false, off, kOffEvents);
  ASSERT_TRUE(on.is_ok()) << on.status().to_string();
  ASSERT_FALSE(take_savepoint(*on, "sp-off-on").empty());
  EXPECT_TRUE(committed_lines(base + "/out-on").empty()) << "a savepoint commits no side effects";
  EXPECT_FALSE(on->cp->trigger_checkpoint().is_ok()) << "no checkpoint without checkpointing";
  auto done = on->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  on->client.reset();
  expect_exactly_once(base + "/out-on", kOffEvents);

  // Cancelled after the savepoint, then restored from it (at another parallelism and backend), checkpointing off.
  auto first = start(base, "sp-off-first", 2, "hashmap", base + "/out", "", false, off, kOffEvents);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const std::string savepoint = take_savepoint(*first, "sp-off-first");
  ASSERT_FALSE(savepoint.empty());
  first->client->cancel();
  EXPECT_EQ(first->client->wait().status, JobStatus::kCanceled);
  first->client.reset();
  EXPECT_TRUE(committed_lines(base + "/out").empty()) << "a savepoint commits no side effects";
  auto second = start(base, "sp-off-second", 3, "rocksdb", base + "/out", savepoint, false, off, kOffEvents);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  done = second->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  ASSERT_EQ(second->cp->initial_restore()->second, savepoint);
  second->client.reset();
  expect_exactly_once(base + "/out", kOffEvents);
  EXPECT_TRUE(fs::exists(savepoint + "/_metadata")) << "a savepoint is never deleted by the job";

  // Stop-with-savepoint: the sinks commit on its completion; the restored run completes the output exactly once.
  auto third = start(base, "sp-off-stop", 2, "hashmap", base + "/out-stop", "", false, off, kOffEvents);
  ASSERT_TRUE(third.is_ok()) << third.status().to_string();
  wait_for_events(*third, "sp-off-stop", kOffEvents / 5);
  const std::string stopped = stop(*third, base + "/savepoints", /*drain=*/false);
  ASSERT_FALSE(stopped.empty());
  third->client.reset();
  EXPECT_GT(committed_lines(base + "/out-stop").size(), 0u) << "the stop's savepoint committed the sink's output";
  auto fourth = start(base, "sp-off-resume", 2, "hashmap", base + "/out-stop", stopped, false, off, kOffEvents);
  ASSERT_TRUE(fourth.is_ok()) << fourth.status().to_string();
  ASSERT_EQ(fourth->client->wait().status, JobStatus::kFinished);
  fourth->client.reset();
  expect_exactly_once(base + "/out-stop", kOffEvents);
  EXPECT_FALSE(fs::exists(base + "/ck")) << "execution.checkpointing.dir is set, but no run checkpoints into it";
  fs::remove_all(base);
}

// Checkpointing off keeps its meaning for failures: the restart strategy defaults to none, so the job fails (and a
// savepoint is never restored by a failover).
TEST(SavepointIT, WithoutCheckpointingAFailureFailsTheJob) {
  const std::string base = temp_base("checkpointing-off-failure");
  auto r = start(base, "sp-off-fail", 2, "hashmap", base + "/out", "", false,
                 {{"execution.checkpointing.interval", "0"}}, 400'000);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  wait_for_events(*r, "sp-off-fail", 10'000);
  r->cp->fail_task(-1, -1, "injected");
  auto done = r->client->wait();
  EXPECT_EQ(done.status, JobStatus::kFailed) << done.error.to_string();
  EXPECT_EQ(r->cp->restarts(), 0);
  r->client.reset();
  fs::remove_all(base);
}

}  // namespace
}  // namespace sluice
