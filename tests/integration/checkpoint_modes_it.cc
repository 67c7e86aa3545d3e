// Checkpointing modes and bounded inputs (docs/checkpoints.md):
//  - AT_LEAST_ONCE: records arrive on a channel after its barrier n and are processed before checkpoint n is
//    taken (the task's test hook sees them); a shuffle job failed right after such a checkpoint completed,
//    restored from it, shows duplicates and no losses;
//  - a job whose edges are all forward (one chained vertex: no task has an input channel to align), with
//    operator state in the chain, is exactly-once under failures even in AT_LEAST_ONCE;
//  - execution.checkpointing.checkpoints-after-tasks-finish: with one bounded source that ends early and one
//    long-running source, checkpoints keep completing and the sink's data is committed (true), or every
//    checkpoint after the task finished fails as task-not-ready and the tail is never committed (false).
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <set>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint_it_util.h"
#include "sluice/metrics/metric_names.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using coordinator::CheckpointFailureReason;
using coordinator::CheckpointStatus;

cluster::MiniClusterConfig checkpointing_config(const std::string& base, std::chrono::milliseconds interval) {
  cluster::MiniClusterConfig mc;
  mc.checkpointing = true;
  mc.checkpoint_config.interval = interval;
  mc.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(base + "/ck");
  mc.restart.type = RestartStrategyType::kFixedDelay;
  mc.restart.fixed_delay.attempts = 20;
  mc.restart.fixed_delay.delay_ms = 10;
  return mc;
}

// Records emitted by the operators whose metric scope starts with `prefix` ("<job>.<operator>.").
int64_t records_out(const MetricRegistry& metrics, const std::string& prefix) {
  double total = 0;
  for (const auto& m : metrics.snapshot())
    if (m.name == metric_names::kNumRecordsOut && m.scope.rfind(prefix, 0) == 0) total += m.value;
  return static_cast<int64_t>(total);
}

// What the AT_LEAST_ONCE test hook saw: per pending checkpoint id, the records processed after one of its
// barriers and before it was taken.
struct PostBarrierLog {
  std::mutex mu;
  std::map<int64_t, int64_t> records_by_checkpoint;
  int64_t vertex_seen = -1;
  void add(int32_t vertex, CheckpointId id, int64_t records) {
    std::lock_guard lock(mu);
    records_by_checkpoint[id.value()] += records;
    vertex_seen = vertex;
  }
  std::set<int64_t> ids() {
    std::lock_guard lock(mu);
    std::set<int64_t> out;
    for (auto [id, n] : records_by_checkpoint)
      if (n > 0) out.insert(id);
    return out;
  }
};

// A new log, filled by mc's AT_LEAST_ONCE test hook (records_after_barrier_hook).
std::shared_ptr<PostBarrierLog> log_records_after_barrier(cluster::MiniClusterConfig& mc) {
  auto log = std::make_shared<PostBarrierLog>();
  mc.records_after_barrier_hook = [log](int32_t vertex, int32_t, int32_t, CheckpointId pending, int64_t records) {
    log->add(vertex, pending, records);
  };
  return log;
}

// Slows the source chain per subtask: subtask 1 much more than subtask 0, so barrier n leaves source subtask 1
// up to one slow record later (a source task serves its trigger mail after the poll in progress) while subtask 0
// keeps sending records behind its barrier n - the keyed task sees them before barrier n arrives from subtask 1.
// Both 0 after the test is done waiting.
inline std::atomic<int64_t> g_subtask0_us{0};
inline std::atomic<int64_t> g_subtask1_us{0};

struct UnevenThrottle : RichFunction {
  nexmark::Bid operator()(nexmark::Bid&& b) const {
    const int64_t us = (runtime_context().subtask_index() == 0 ? g_subtask0_us : g_subtask1_us).load(std::memory_order_relaxed);
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    return std::move(b);
  }
};

// The main job (it::build_main_job) with the uneven throttle: bids -> hash exchange -> per-auction count ->
// exactly-once file sink.
void build_uneven_job(StreamExecutionEnvironment& env, const it::MainJob& job) {
  it::add_bids(env, job)
      .map(UnevenThrottle{})
      .name("throttle")
      .uid("throttle")
      .key_by([](const nexmark::Bid& b) { return b.auction; })
      .process(per_auction::CountSumMax{})
      .name("per-auction")
      .uid("per-auction")
      .sink_to(file::TransactionalFileSink<per_auction::AuctionUpdate>(job.output_dir, per_auction::append_csv_line))
      .name("sink")
      .uid("sink");
}

// AT_LEAST_ONCE: the hook shows records processed between barrier n on one channel and checkpoint n; failing
// the job while such a checkpoint is the latest completed one restores from it and replays those records:
// duplicates, no losses. (In EXACTLY_ONCE the channel would be blocked: no such records, no duplicates.)
TEST(AtLeastOnce, RecordsAfterABarrierAreProcessedBeforeTheCheckpointAndReplayedAfterARestore) {
  const std::string base = it::fresh_dir("alo-duplicates");
  it::MainJob job;
  job.events = 300'000;
  job.output_dir = base + "/out";
  g_subtask0_us = 10;
  g_subtask1_us = 100'000;  // barrier n waits up to 100 ms: subtask 0 fills network buffers behind its own
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  build_uneven_job(env, job);
  auto mc = checkpointing_config(base, 100ms);
  mc.at_least_once = true;
  auto log = log_records_after_barrier(mc);
  auto submitted = it::submit(env, mc, "alo");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);

  // Wait until the latest completed checkpoint is one the hook saw records for (taken after processing records
  // that came behind one of its barriers), then fail the keyed task.
  int64_t target = 0;
  ASSERT_TRUE(it::wait_for([&] {
    auto s = cp.checkpoint_stats();
    if (!s.latest_completed || log->ids().count(s.latest_completed->id.value()) == 0) return false;
    target = s.latest_completed->id.value();
    return true;
  })) << "no completed checkpoint had records processed after one of its barriers";
  ASSERT_TRUE(cp.arm_failure(runtime::FailurePoint::kTask, 1, -1, "at-least-once test").is_ok());
  ASSERT_TRUE(it::wait_for([&] { return cp.restarts() >= 1 || is_globally_terminal(client->status()); }));
  g_subtask0_us = 0;
  g_subtask1_us = 0;
  JobExecutionResult result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  EXPECT_EQ(log->vertex_seen, 1) << "only the per-auction task has several input channels";

  auto recoveries = cp.recoveries();
  ASSERT_EQ(recoveries.size(), 1u);
  const int64_t restored = recoveries[0].first;
  ASSERT_GE(restored, target);
  // Every checkpoint of the throttled run had records behind a barrier; the restored one too.
  ASSERT_EQ(log->ids().count(restored), 1u) << "restored checkpoint " << restored;
  auto src = it::source_options(job);
  auto oracle = nexmark::compute_per_auction_oracle(src.generator, src.generator.max_events);
  const auto prices = cli::compute_auction_bid_prices(src.generator, src.generator.max_events);
  auto report = cli::verify_per_auction_output(job.output_dir, oracle, &prices);  // bid by bid
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->missing, 0) << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  EXPECT_EQ(report->malformed, 0);
  EXPECT_TRUE(report->at_least_once());
  // The restored checkpoint's state counted records its sources replay: they are counted again.
  EXPECT_GT(report->duplicates, 0) << "checkpoint " << restored << " was taken after records that came behind "
                                   << "its barrier, yet nothing was duplicated after restoring it";
}

// The same job in EXACTLY_ONCE: the hook is never called (it exists for AT_LEAST_ONCE only, and aligned
// channels deliver nothing after their barrier before the checkpoint) - the check that the test above would
// fail if the mode were secretly exactly-once.
TEST(AtLeastOnce, ExactlyOnceModeNeverProcessesRecordsAfterABarrierBeforeTheCheckpoint) {
  const std::string base = it::fresh_dir("eo-no-hook");
  it::MainJob job;
  job.events = 100'000;
  job.output_dir = base + "/out";
  it::g_throttle_us = 20;
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  it::build_main_job(env, job);
  auto mc = checkpointing_config(base, 50ms);
  auto log = log_records_after_barrier(mc);
  auto submitted = it::submit(env, mc, "eo");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);
  ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 5; }));
  it::g_throttle_us = 0;
  ASSERT_EQ(client->wait().status, JobStatus::kFinished);
  EXPECT_TRUE(log->ids().empty());
  EXPECT_EQ(it::check_exactly_once(job), "");
}

// ---- forward-only job --------------------------------------------------------------------------------

inline std::atomic<int64_t> g_forward_throttle_us{0};

// Counts the records of its subtask in operator state; emits "value,count".
struct CountingMap : CheckpointedFunction {
  std::string operator()(int64_t&& v) {
    int64_t us = g_forward_throttle_us.load(std::memory_order_relaxed);
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    ++count_;
    return std::to_string(v) + "," + std::to_string(count_);
  }
  void initialize_state(FunctionInitializationContext& ctx) override {
    state_ = &ctx.operator_state_store().get_list_state(ListStateDescriptor<int64_t>("count"));
    auto restored = state_->get();
    count_ = restored.empty() ? 0 : restored.front();
  }
  void snapshot_state(const FunctionSnapshotContext&) override { state_->update({count_}); }

 private:
  ListState<int64_t>* state_ = nullptr;
  int64_t count_ = 0;
};

// As Flink's docs note: all edges forward, so every operator chains into one vertex and no task has input
// channels to align; AT_LEAST_ONCE then gives exactly-once output, operator state included.
TEST(AtLeastOnce, ForwardOnlyJobWithOperatorStateIsExactlyOnceUnderFailures) {
  const std::string base = it::fresh_dir("alo-forward");
  constexpr int64_t kRecords = 60'000;
  const std::string out = base + "/out";
  g_forward_throttle_us = 50;
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  env.from_generator(kRecords, [](int64_t i) { return i; }, 0, "numbers")
      .uid("numbers")
      .map(CountingMap{})
      .name("count")
      .uid("count")
      .sink_to(file::TransactionalFileSink<std::string>(out, [](const std::string& s, std::string& line) { line += s; }))
      .name("sink")
      .uid("sink");
  auto mc = checkpointing_config(base, 40ms);
  mc.at_least_once = true;
  auto submitted = it::submit(env, mc, "forward");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);

  // One failure per class, each after a checkpoint completed since the previous recovery.
  const runtime::FailurePoint points[] = {runtime::FailurePoint::kSource, runtime::FailurePoint::kSink,
                                          runtime::FailurePoint::kBetweenSyncAndAsyncSnapshot,
                                          runtime::FailurePoint::kBetweenCompletionAndCommit};
  int32_t fired = 0;
  for (runtime::FailurePoint p : points) {
    const int64_t completed = cp.checkpoint_stats().num_completed;
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= completed + 2; }));
    ASSERT_TRUE(cp.arm_failure(p, 0, -1, "forward-only test").is_ok());
    ++fired;
    ASSERT_TRUE(it::wait_for([&] { return cp.restarts() >= fired; }));
  }
  g_forward_throttle_us = 0;
  JobExecutionResult result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  ASSERT_EQ(cp.restarts(), 4);
  bool restored_from_checkpoint = false;
  for (auto [id, ms] : cp.recoveries()) restored_from_checkpoint = restored_from_checkpoint || id > 0;
  EXPECT_TRUE(restored_from_checkpoint);

  // Every value exactly once, and its count is its position in its subtask's contiguous split (1-based): the
  // operator state was restored consistently with the source position.
  std::map<int64_t, int> times;
  const int64_t half = kRecords / 2;  // the generator's two splits: [0, half) and [half, kRecords)
  int64_t wrong_counts = 0;
  for (const std::string& line : it::committed_lines(out)) {
    const size_t comma = line.find(',');
    ASSERT_NE(comma, std::string::npos) << line;
    const int64_t v = std::stoll(line.substr(0, comma));
    const int64_t c = std::stoll(line.substr(comma + 1));
    ++times[v];
    if (c != v - (v < half ? 0 : half) + 1) ++wrong_counts;
  }
  int64_t missing = 0, duplicates = 0;
  for (int64_t v = 0; v < kRecords; ++v) {
    auto it = times.find(v);
    if (it == times.end()) {
      ++missing;
    } else if (it->second > 1) {
      duplicates += it->second - 1;
    }
  }
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(wrong_counts, 0);
  EXPECT_EQ(static_cast<int64_t>(times.size()), kRecords);
}

// ---- bounded and long-running sources -------------------------------------------------------------------

inline std::atomic<int64_t> g_long_throttle_us{0};

struct SlowDown {
  std::string operator()(int64_t&& v) const {
    int64_t us = g_long_throttle_us.load(std::memory_order_relaxed);
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    return "long," + std::to_string(v);
  }
};

constexpr int64_t kBounded = 2'000;
constexpr int64_t kLong = 400'000;

// A bounded source (kBounded records, ends at once) and a long-running one (kLong records, slowed down until the
// test lets it go) into one exactly-once file sink (a task with two input channels).
void build_mixed_job(StreamExecutionEnvironment& env, const std::string& out) {
  env.set_parallelism(1);
  auto bounded = env.from_generator(kBounded, [](int64_t i) { return i; }, 0, "bounded")
                     .uid("bounded")
                     .map([](int64_t&& v) { return "bounded," + std::to_string(v); })
                     .name("bounded-text")
                     .uid("bounded-text");
  auto slow = env.from_generator(kLong, [](int64_t i) { return i; }, 0, "long").uid("long").map(SlowDown{}).name("slow").uid("slow");
  bounded.union_(slow)  // rolling at every checkpoint: the bounded records are visible while the long source runs
      .sink_to(file::TransactionalFileSink<std::string>(out, [](const std::string& s, std::string& line) { line += s; },
                                                        file::RollingPolicy::on_checkpoint()))
      .name("sink")
      .uid("sink");
}

int64_t count_prefix(const std::vector<std::string>& lines, const std::string& prefix) {
  int64_t n = 0;
  for (const auto& l : lines) n += l.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

TEST(CheckpointsAfterTasksFinish, CheckpointsKeepCompletingAfterABoundedSourceEndedAndTheFinalOneCommitsAll) {
  const std::string base = it::fresh_dir("after-finish");
  const std::string out = base + "/out";
  g_long_throttle_us = 200;
  StreamExecutionEnvironment env;
  build_mixed_job(env, out);
  auto mc = checkpointing_config(base, 30ms);
  auto submitted = it::submit(env, mc, "mixed");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);

  ASSERT_TRUE(it::wait_for([&] { return records_out(client->metrics(), "mixed.bounded.") >= kBounded; }));
  const int64_t completed_at_end = cp.checkpoint_stats().num_completed;
  // Checkpoints go on: the ended source task takes part (acknowledges) in each, nobody waits for it.
  ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= completed_at_end + 4; }));
  auto s = cp.checkpoint_stats();
  ASSERT_TRUE(s.latest_completed);
  EXPECT_EQ(s.latest_completed->num_acknowledged, s.latest_completed->num_tasks);
  EXPECT_EQ(s.latest_completed->num_tasks, 3);  // the two source chains and the sink
  EXPECT_EQ(s.num_failed, 0);
  // The bounded source's records are committed while the other source still runs.
  ASSERT_TRUE(it::wait_for([&] { return count_prefix(it::committed_lines(out), "bounded,") == kBounded; }));
  EXPECT_LT(count_prefix(it::committed_lines(out), "long,"), kLong);
  EXPECT_FALSE(is_globally_terminal(client->status()));

  g_long_throttle_us = 0;
  JobExecutionResult result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  // The final checkpoint committed the sink's last committables: everything, exactly once, nothing pending.
  auto lines = it::committed_lines(out);
  EXPECT_EQ(count_prefix(lines, "bounded,"), kBounded);
  EXPECT_EQ(count_prefix(lines, "long,"), kLong);
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), lines.size());
  for (const auto& e : it::fs::directory_iterator(out)) {
    EXPECT_NE(e.path().filename().string().rfind(".part-", 0), 0u) << e.path();
  }
}

TEST(CheckpointsAfterTasksFinish, FalseRefusesCheckpointsOnceATaskFinishedAndHasNoFinalCheckpoint) {
  const std::string base = it::fresh_dir("no-after-finish");
  const std::string out = base + "/out";
  g_long_throttle_us = 200;
  StreamExecutionEnvironment env;
  build_mixed_job(env, out);
  auto mc = checkpointing_config(base, 30ms);
  mc.checkpoints_after_tasks_finish = false;
  auto submitted = it::submit(env, mc, "mixed-false");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);

  // Checkpoints fail as "task not ready" once the bounded source finished, and none completes any more.
  std::map<int64_t, coordinator::CheckpointStatsEntry> not_ready;
  ASSERT_TRUE(it::wait_for([&] {
    for (auto& [id, e] : it::stats_by_id(cp.checkpoint_stats())) {
      if (e.status == CheckpointStatus::kFailed && e.failure_reason == CheckpointFailureReason::kTaskNotReady) {
        not_ready[id] = e;
      }
    }
    return not_ready.size() >= 4;
  }));
  auto s = cp.checkpoint_stats();
  const int64_t first_refused = not_ready.begin()->first;
  EXPECT_LT(s.latest_completed ? s.latest_completed->id.value() : 0, first_refused);
  EXPECT_NE(not_ready.begin()->second.failure_message.find("checkpoints-after-tasks-finish is false"),
            std::string::npos)
      << not_ready.begin()->second.failure_message;
  EXPECT_EQ(s.consecutive_failures, 0) << "task-not-ready does not count against tolerable failures";
  EXPECT_FALSE(is_globally_terminal(client->status()));
  EXPECT_EQ(cp.restarts(), 0);

  g_long_throttle_us = 0;
  JobExecutionResult result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  // No final checkpoint: what the sink took after the last completed checkpoint was never committed.
  auto lines = it::committed_lines(out);
  EXPECT_LT(count_prefix(lines, "long,"), kLong);
  EXPECT_EQ(cp.checkpoint_stats().num_completed, s.num_completed);
}

}  // namespace
}  // namespace sluice
