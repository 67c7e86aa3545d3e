// Helpers for the checkpointing integration tests: waiting on a running job, a throttled version of the main
// job (Nexmark bids -> per-auction count/sum/max -> exactly-once part files), submitting a job with a storage
// the test built (a FileSystem that observes or fails operations), and reading a checkpoint directory.
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../../examples/per_auction/per_auction_job.h"
#include "../../tools/sluice/verify.h"
#include "checkpoint/channel_state.h"
#include "fs/file_system.h"
#include "fs/path.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/restore_path.h"
#include "cluster/job_placement.h"
#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "sluice/sluice.h"

namespace sluice::it {

namespace fs = std::filesystem;

// Polls `done` every 2 ms for up to `max`; true once it holds. For waiting on the job to reach a state; never
// an assertion about how long that takes.
inline bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds max = std::chrono::seconds(120)) {
  const auto deadline = std::chrono::steady_clock::now() + max;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// A job configuration that checkpoints only when a test triggers it (interval 1 h) into `dir`, keeping the
// checkpoints when the job is cancelled; restoring `restore` when it is not empty.
inline Result<Configuration> manual_checkpoint_config(const std::string& dir, const std::string& restore = "") {
  Configuration config;
  SLUICE_RETURN_IF_ERROR(config.set_string("execution.checkpointing.interval", "1h"));
  SLUICE_RETURN_IF_ERROR(config.set_string("execution.checkpointing.dir", dir));
  SLUICE_RETURN_IF_ERROR(config.set_string("execution.checkpointing.externalized-checkpoint-retention",
                                           "RETAIN_ON_CANCELLATION"));
  if (!restore.empty()) SLUICE_RETURN_IF_ERROR(config.set_string("execution.state-recovery.path", restore));
  return config;
}

inline cluster::CheckpointingJobClient& checkpointing(JobClient& client) {
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(&client);
  if (cp == nullptr) throw std::logic_error("the job client is not a checkpointing job client");
  return *cp;
}

// Waits (up to 120 s) until the job's first attempt is deployed: a submission returns while the JobMaster deploys it.
inline bool wait_deployed(JobClient& client) {
  auto* view = dynamic_cast<cluster::JobPlacementView*>(&client);
  if (view == nullptr) throw std::logic_error("the job client has no placement view");
  return wait_for([&] { return !view->subtask_locations().empty(); });
}

// `trigger()` (a checkpoint or savepoint request, returning a Result) once the job takes it: retried for up to 120 s
// while the job's first attempt is being deployed, when the JobMaster refuses triggers (as Flink does).
template <class Trigger>
auto when_deployed(Trigger trigger) -> decltype(trigger()) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto r = trigger();
  while (!r.is_ok() && r.status().message().find("being deployed") != std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    r = trigger();
  }
  return r;
}

// A fresh directory under the test temp dir, per process: test binaries of several builds may run at once.
inline std::string fresh_dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "sluice-" + std::to_string(::getpid()) + "-" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// ---- the throttled main job ----------------------------------------------------------------------------

// While > 0, every bid sleeps this many microseconds in the source task (so a test can keep the job running
// until it has seen what it waits for, then let it finish at full speed). Sleeping in the source chain keeps the
// task's mailbox turns (checkpoint triggers) a batch of records apart.
inline std::atomic<int64_t> g_throttle_us{0};

struct Throttle {
  nexmark::Bid operator()(nexmark::Bid&& b) const {
    int64_t us = g_throttle_us.load(std::memory_order_relaxed);
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    return std::move(b);
  }
};

// Records the checkpoint notifications each subtask of the source chain receives, in arrival order: completed
// and aborted ones.
class NotificationLog {
 public:
  void add(int32_t subtask, int64_t id) {
    std::lock_guard lock(mu_);
    by_subtask_[subtask].push_back(id);
  }
  void add_aborted(int32_t subtask, int64_t id) {
    std::lock_guard lock(mu_);
    aborted_by_subtask_[subtask].push_back(id);
  }
  std::map<int32_t, std::vector<int64_t>> get() const {
    std::lock_guard lock(mu_);
    return by_subtask_;
  }
  // Whether some subtask was told that checkpoint `id` was aborted.
  bool aborted(int64_t id) const {
    std::lock_guard lock(mu_);
    for (const auto& [subtask, ids] : aborted_by_subtask_) {
      if (std::find(ids.begin(), ids.end(), id) != ids.end()) return true;
    }
    return false;
  }
  void clear() {
    std::lock_guard lock(mu_);
    by_subtask_.clear();
    aborted_by_subtask_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::map<int32_t, std::vector<int64_t>> by_subtask_;
  std::map<int32_t, std::vector<int64_t>> aborted_by_subtask_;
};

inline NotificationLog g_notifications;

struct RecordNotifications : RichFunction, CheckpointListener {
  nexmark::Bid operator()(nexmark::Bid&& b) const { return std::move(b); }
  void notify_checkpoint_complete(CheckpointId id) override {
    g_notifications.add(runtime_context().subtask_index(), id.value());
  }
  void notify_checkpoint_aborted(CheckpointId id) override {
    g_notifications.add_aborted(runtime_context().subtask_index(), id.value());
  }
};

// While g_hold_snapshot_of == n, the snapshot of checkpoint n in the per-auction task (the synchronous part,
// before the task asks the storage for the checkpoint's folder) waits until the test sets it back to 0. The
// function keeps a little operator state, so every snapshot writes a "hold-snapshot-op" state handle.
inline std::atomic<int64_t> g_hold_snapshot_of{0};

struct HoldSnapshot : CheckpointedFunction {
  per_auction::AuctionUpdate operator()(per_auction::AuctionUpdate&& u) const { return std::move(u); }
  void initialize_state(FunctionInitializationContext& ctx) override {
    marker_ = &ctx.operator_state_store().get_list_state(ListStateDescriptor<int64_t>("marker"));
  }
  void snapshot_state(const FunctionSnapshotContext& ctx) override {
    while (g_hold_snapshot_of.load() == ctx.checkpoint_id.value()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    marker_->update({ctx.checkpoint_id.value()});
  }

 private:
  ListState<int64_t>* marker_ = nullptr;
};

struct MainJob {
  int64_t events = 20'000;
  uint64_t seed = 7;
  std::string output_dir;
  bool hold_snapshots = false;  // chain HoldSnapshot between the aggregate and the sink
};

inline nexmark::NexmarkSourceOptions source_options(const MainJob& job) {
  nexmark::NexmarkSourceOptions o;
  o.generator.max_events = job.events;
  o.generator.seed = job.seed;
  o.num_splits = 4;
  return o;
}

// The bids of the job's Nexmark source ("only-bids", "to-bid"), for a job to continue.
DataStream<nexmark::Bid> add_bids(StreamExecutionEnvironment& env, const MainJob& job);

// per_auction::build with a throttle and a notification recorder chained behind the source.
void build_main_job(StreamExecutionEnvironment& env, const MainJob& job);

// The committed output checked against the single-threaded oracle: every auction's counts 1..n exactly once and
// its final values right. Returns a description of the first problem, or "" when exactly-once holds.
std::string check_exactly_once(const MainJob& job);

// The checkpoint number in a part file name "part-<job>-<subtask>-<checkpoint>-<counter>", or -1.
inline int64_t part_checkpoint(const std::string& name) {
  if (name.rfind("part-", 0) != 0) return -1;
  size_t a = name.find('-', 5);
  size_t b = a == std::string::npos ? a : name.find('-', a + 1);
  size_t c = b == std::string::npos ? b : name.find('-', b + 1);
  if (c == std::string::npos) return -1;
  return std::stoll(name.substr(b + 1, c - b - 1));
}

// Puts `out` back to what it held when checkpoint `id` had been taken and committed: the visible part files of
// checkpoints up to `id`, and the hidden (pending and in-progress) files, which the restored sink commits when
// its state owns them and deletes otherwise.
inline void reset_output(const std::string& saved, const std::string& out, int64_t id) {
  fs::remove_all(out);
  fs::create_directories(out);
  for (const auto& e : fs::directory_iterator(saved)) {
    const std::string name = e.path().filename().string();
    const bool hidden = name.rfind(".part-", 0) == 0;
    const int64_t n = part_checkpoint(name);
    if (hidden || (n >= 0 && n <= id)) fs::copy_file(e.path(), fs::path(out) / name);
  }
}

// The lines of the committed (visible) part files "part-*" of `dir`, in directory order; empty if it does not exist.
inline std::vector<std::string> committed_lines(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("part-", 0) != 0) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) out.push_back(line);
  }
  return out;
}

// ---- submitting with a storage the test built ----------------------------------------------------------

// Runs the program built in `env` on the MiniCluster with `mc` (checkpointing settings, storage, restart
// strategy chosen by the test) instead of the configuration keys.
Result<std::unique_ptr<JobClient>> submit(StreamExecutionEnvironment& env, const cluster::MiniClusterConfig& mc,
                                          const std::string& name);

// A FileSystem over the local one that logs directory creations, published files and removals (with a
// monotonic time), can hold the first write whose path contains a given text until the test releases it, and can fail
// the creation of directories with given names (as a directory without write permission would).
class ObservedFileSystem final : public sluice::fs::FileSystem {
 public:
  struct Entry {
    std::string op;  // "mkdir", "write" (once published), "remove" (remove_all), "mkdir-failed", "write-failed"
    std::string path;
    std::chrono::steady_clock::time_point at;
  };

  // The first write_file whose path contains `text` waits until release(text) (or 60 s).
  void hold_first_write(const std::string& text) {
    std::lock_guard lock(mu_);
    holds_[text] = Hold{};
  }
  void release(const std::string& text) {
    {
      std::lock_guard lock(mu_);
      holds_[text].released = true;
    }
    cv_.notify_all();
  }
  // True while a write is held for `text`.
  bool holding(const std::string& text) const {
    std::lock_guard lock(mu_);
    auto it = holds_.find(text);
    return it != holds_.end() && it->second.waiting;
  }
  // create_dir of a directory named `name` (the last path component, e.g. "chk-3") fails with an I/O error.
  void fail_mkdir_of(std::set<std::string> names) {
    std::lock_guard lock(mu_);
    fail_mkdir_ = std::move(names);
  }
  // write_file of a path containing one of `texts` fails with an I/O error (as a full disk would).
  void fail_writes_containing(std::vector<std::string> texts) {
    std::lock_guard lock(mu_);
    fail_write_ = std::move(texts);
  }
  std::vector<Entry> log() const {
    std::lock_guard lock(mu_);
    return log_;
  }

  Status create_dir(const std::string& path) override;  // out of line: the class's key function
  Status write_file(const std::string& path, const std::vector<uint8_t>& bytes,
                    sluice::fs::Durability durability) override;
  std::string_view scheme() const override { return base_->scheme(); }
  Status sync_dir(const std::string& dir) override { return base_->sync_dir(dir); }
  Result<std::vector<uint8_t>> read_file(const std::string& path) override { return base_->read_file(path); }
  Result<sluice::fs::FileDigest> digest_file(const std::string& path) override { return base_->digest_file(path); }
  Result<sluice::fs::PathKind> stat(const std::string& path) override { return base_->stat(path); }
  Result<std::vector<sluice::fs::DirEntry>> list_dir(const std::string& dir) override { return base_->list_dir(dir); }
  Status remove_file(const std::string& path) override { return base_->remove_file(path); }
  Status remove_empty_dir(const std::string& path) override { return base_->remove_empty_dir(path); }
  Status remove_all(const std::string& path) override {
    add("remove", path);
    return base_->remove_all(path);
  }

 private:
  struct Hold {
    bool used = false;
    bool waiting = false;
    bool released = false;
  };
  void add(const char* op, const std::string& path) {
    std::lock_guard lock(mu_);
    log_.push_back({op, path, std::chrono::steady_clock::now()});
  }

  std::shared_ptr<sluice::fs::FileSystem> base_ = sluice::fs::local_file_system();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Hold> holds_;
  std::set<std::string> fail_mkdir_;
  std::vector<std::string> fail_write_;
  std::vector<Entry> log_;
};

// ---- reading a checkpoint directory --------------------------------------------------------------------

// Checkpoint ids of the chk-<n> folders in `job_dir` that have a _metadata, ascending.
inline std::vector<int64_t> completed_checkpoints_in(const std::string& job_dir) {
  std::vector<int64_t> ids;
  if (!fs::is_directory(job_dir)) return ids;
  for (const auto& e : fs::directory_iterator(job_dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("chk-", 0) != 0) continue;
    if (fs::exists(e.path() / "_metadata")) ids.push_back(std::stoll(name.substr(4)));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Names of the entries of `dir` (files and folders), sorted; empty if it does not exist.
inline std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every checkpoint in the statistics (history, latest completed/failed, in progress), by id.
inline std::map<int64_t, coordinator::CheckpointStatsEntry> stats_by_id(const coordinator::CheckpointStatsSnapshot& s) {
  std::map<int64_t, coordinator::CheckpointStatsEntry> out;
  for (const auto& e : s.history) out[e.id.value()] = e;
  if (s.latest_completed) out[s.latest_completed->id.value()] = *s.latest_completed;
  if (s.latest_failed) out[s.latest_failed->id.value()] = *s.latest_failed;
  for (const auto& e : s.in_progress) out[e.id.value()] = e;
  return out;
}

// ---- unaligned checkpoints --------------------------------------------------------------------------------

// Checkpoints every `interval` (unaligned ones when `unaligned`) into a filesystem storage at `dir`, retained on
// cancellation; state below 1 KiB inline; checkpoint failures tolerated (some tests time them out).
inline cluster::MiniClusterConfig unaligned_test_config(const std::string& dir, std::chrono::milliseconds interval,
                                                        bool unaligned = true) {
  cluster::MiniClusterConfig mc;
  mc.checkpointing = true;
  mc.checkpoint_config.interval = interval;
  mc.checkpoint_config.tolerable_failures = 1000;
  checkpoint::FileSystemStorageOptions so;
  so.inline_threshold_bytes = 1024;
  mc.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(dir, so);
  mc.retention = checkpoint::ExternalizedCheckpointRetention::kRetainOnCancellation;
  mc.unaligned.enabled = unaligned;
  return mc;
}

// The decoded channel state of every subtask of the checkpoint at `rp`, with its operator's id.
std::vector<std::pair<std::string, checkpoint::SubtaskChannelState>> channel_states(
    const checkpoint::RestorePoint& rp, checkpoint::CheckpointStorage& storage);

}  // namespace sluice::it
