// Concurrent checkpoints in a running job (execution.checkpointing.max-concurrent-checkpoints, .min-pause):
// the main job at parallelism 2 on filesystem storage whose file writes the test can hold, so checkpoint 1's
// asynchronous part is still running when checkpoint 2 starts - deterministically, without timing. Also the
// final checkpoint that the end of data asks for while another is in flight.
#include <gtest/gtest.h>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint_it_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using it::ObservedFileSystem;

struct JobRun {
  std::string base;
  it::MainJob job;
  std::shared_ptr<ObservedFileSystem> fs = std::make_shared<ObservedFileSystem>();
  std::unique_ptr<JobClient> client;
};

void start(JobRun& run, const std::string& name, coordinator::CheckpointCoordinatorConfig config) {
  run.base = it::fresh_dir(name);
  run.job.output_dir = run.base + "/out";
  it::g_notifications.clear();
  it::g_throttle_us = 100;  // keeps the job running until the test has let the checkpoints it watches through
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  it::build_main_job(env, run.job);
  cluster::MiniClusterConfig mc;
  mc.checkpointing = true;
  mc.checkpoint_config = config;
  checkpoint::FileSystemStorageOptions fo;
  fo.inline_threshold_bytes = 0;  // every state handle is a file: every snapshot writes through `fs`
  fo.file_system = run.fs;
  mc.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(run.base + "/ck", fo);
  mc.num_retained = 100;  // every completed checkpoint stays until the job ends, so the test can copy it
  auto client = it::submit(env, mc, name);
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  run.client = std::move(client).value();
}

// Per checkpoint id: when its folder was first created (a task started its snapshot) and when its _metadata
// was published (it completed), from the filesystem's log.
struct Span {
  std::optional<std::chrono::steady_clock::time_point> mkdir, metadata;
};
std::map<int64_t, Span> spans(const ObservedFileSystem& fs) {
  std::map<int64_t, Span> out;
  for (const auto& e : fs.log()) {
    if (e.op != "mkdir" && e.op != "write") continue;  // (a discard may remove a folder never created)
    size_t at = e.path.find("/chk-");
    if (at == std::string::npos) continue;
    size_t end = e.path.find('/', at + 1);
    int64_t id = std::stoll(e.path.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5));
    Span& s = out[id];
    if (e.op == "mkdir" && end == std::string::npos && !s.mkdir) s.mkdir = e.at;
    if (e.op == "write" && e.path.size() >= 9 && e.path.compare(e.path.size() - 9, 9, "_metadata") == 0) {
      s.metadata = e.at;
    }
  }
  return out;
}

// Each source subtask was told of the completed checkpoints in completion order. A notification may be missed
// only for one that completed after the job's final checkpoint (the tasks were finishing; it holds no data).
void expect_notifications_in_order(const std::vector<int64_t>& completed) {
  auto by_subtask = it::g_notifications.get();
  ASSERT_EQ(by_subtask.size(), 2u) << "both source subtasks were notified";
  for (const auto& [subtask, ids] : by_subtask) {
    std::string list;
    for (int64_t id : ids) list += " " + std::to_string(id);
    ASSERT_GE(ids.size() + 1, completed.size()) << "subtask " << subtask << ":" << list;
    ASSERT_LE(ids.size(), completed.size()) << "subtask " << subtask << ":" << list;
    EXPECT_EQ(ids, std::vector<int64_t>(completed.begin(), completed.begin() + static_cast<ptrdiff_t>(ids.size())))
        << "subtask " << subtask << ":" << list;
  }
}

// Completed checkpoint ids in completion order (when their _metadata was renamed into place).
std::vector<int64_t> completion_order(const std::map<int64_t, Span>& sp) {
  std::vector<std::pair<std::chrono::steady_clock::time_point, int64_t>> completions;
  for (const auto& [id, span] : sp) {
    if (span.metadata) completions.emplace_back(*span.metadata, id);
  }
  std::sort(completions.begin(), completions.end());
  std::vector<int64_t> ids;
  for (const auto& c : completions) ids.push_back(c.second);
  return ids;
}

TEST(CheckpointConcurrency, TwoPendingAtOnceBothCompleteInOrderAndOutputIsExactlyOnce) {
  JobRun run;
  // Checkpoint 1's asynchronous part cannot finish until the test saw checkpoint 2 pending; checkpoint 2's
  // (and 3's) until the one before completed, so no later checkpoint overtakes (and subsumes) 1 or 2. The
  // held write of checkpoint 1 is a keyed-state file: that subtask's copy-on-write snapshot 1 stays live
  // while it goes on processing and takes snapshot 2.
  for (const char* chk : {"/chk-1/per-auction-keyed", "/chk-2/", "/chk-3/"}) run.fs->hold_first_write(chk);
  coordinator::CheckpointCoordinatorConfig c;
  c.interval = 20ms;
  c.max_concurrent = 2;
  start(run, "max-concurrent-2", c);
  ASSERT_TRUE(run.client);
  auto& cp = it::checkpointing(*run.client);

  // Checkpoint 2 is triggered while checkpoint 1 is pending.
  ASSERT_TRUE(it::wait_for(
      [&] { return run.fs->holding("/chk-1/per-auction-keyed") && cp.checkpoint_stats().num_in_progress == 2; }));
  auto s = cp.checkpoint_stats();
  ASSERT_EQ(s.in_progress.size(), 2u);
  EXPECT_EQ(s.in_progress[0].id, CheckpointId(1));
  EXPECT_EQ(s.in_progress[1].id, CheckpointId(2));
  // Never a third while two are pending, however many intervals pass.
  std::this_thread::sleep_for(100ms);
  s = cp.checkpoint_stats();
  EXPECT_EQ(s.num_triggered, 2);
  EXPECT_EQ(s.num_in_progress, 2);

  auto completed_up_to = [&](int64_t id) {
    auto st = cp.checkpoint_stats();
    return st.latest_completed && st.latest_completed->id.value() >= id;
  };
  run.fs->release("/chk-1/per-auction-keyed");
  ASSERT_TRUE(it::wait_for([&] { return completed_up_to(1); }));
  s = cp.checkpoint_stats();
  EXPECT_EQ(s.latest_completed->id, CheckpointId(1));
  EXPECT_EQ(s.num_failed, 0);
  run.fs->release("/chk-2/");
  ASSERT_TRUE(it::wait_for([&] { return completed_up_to(2); }));
  s = cp.checkpoint_stats();
  EXPECT_EQ(s.latest_completed->id, CheckpointId(2));
  EXPECT_EQ(s.num_completed, 2);
  // Keep copies of both (the finished job deletes its checkpoints) to restore from below.
  const std::string job_hex = run.client->job_id().to_hex();
  const std::string kept = run.base + "/kept/" + job_hex;
  std::filesystem::create_directories(kept);
  for (const char* chk : {"chk-1", "chk-2"}) {
    std::filesystem::copy(run.base + "/ck/" + job_hex + "/" + chk, kept + "/" + chk,
                          std::filesystem::copy_options::recursive);
  }
  run.fs->release("/chk-3/");
  it::g_throttle_us = 0;

  JobExecutionResult result = run.client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  s = cp.checkpoint_stats();
  EXPECT_GE(s.num_completed, 3);  // 1, 2 and at least the final one
  // Nothing failed. A later checkpoint may have been subsumed by a newer one that completed first, and one
  // still pending when the final checkpoint completed is aborted as the job ends.
  for (const auto& [id, e] : it::stats_by_id(s)) {
    if (e.status != coordinator::CheckpointStatus::kFailed) continue;
    ASSERT_TRUE(e.failure_reason);
    EXPECT_TRUE(*e.failure_reason == coordinator::CheckpointFailureReason::kSubsumed ||
                *e.failure_reason == coordinator::CheckpointFailureReason::kCoordinatorShutdown)
        << "checkpoint " << id << ": " << e.failure_message;
  }

  // Completed ids strictly increase in completion order, and never more than two were pending at once.
  auto sp = spans(*run.fs);
  for (const auto& [id, span] : sp) ASSERT_TRUE(span.mkdir) << "checkpoint " << id;
  const std::vector<int64_t> completed = completion_order(sp);
  EXPECT_EQ(static_cast<int64_t>(completed.size()), s.num_completed);
  for (size_t i = 1; i < completed.size(); ++i) EXPECT_LT(completed[i - 1], completed[i]);
  ASSERT_GE(completed.size(), 2u);
  EXPECT_EQ(completed[0], 1);
  EXPECT_EQ(completed[1], 2);
  ASSERT_TRUE(sp.at(1).metadata && sp.at(2).metadata);
  EXPECT_LT(*sp.at(2).mkdir, *sp.at(1).metadata) << "checkpoint 2 started before checkpoint 1 completed";
  for (const auto& [id, span] : sp) {
    int overlapping = 0;
    for (const auto& [other, o] : sp) {
      if (*o.mkdir <= *span.mkdir && (!o.metadata || *span.mkdir <= *o.metadata)) ++overlapping;
    }
    if (completed.size() == sp.size()) {
      EXPECT_LE(overlapping, 2) << "checkpoint " << id;
    }
  }

  expect_notifications_in_order(completed);
  EXPECT_EQ(it::check_exactly_once(run.job), "");

  // Each of the two concurrent snapshots is consistent: a run restored from it, with the output committed up
  // to it, produces exactly the expected output.
  const std::string final_output = run.base + "/out-final";
  std::filesystem::copy(run.job.output_dir, final_output);
  for (int64_t id : {1, 2}) {
    SCOPED_TRACE("restored from checkpoint " + std::to_string(id));
    it::reset_output(final_output, run.job.output_dir, id);
    Configuration config;
    ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "30ms").is_ok());
    ASSERT_TRUE(config.set_string("execution.checkpointing.dir", run.base + "/ck-restored").is_ok());
    ASSERT_TRUE(config.set_string("execution.state-recovery.path", kept + "/chk-" + std::to_string(id)).is_ok());
    ASSERT_TRUE(config.set_string("restart-strategy.type", "none").is_ok());
    StreamExecutionEnvironment env(config);
    env.set_parallelism(2);
    it::build_main_job(env, run.job);
    auto restored = env.execute("restored");
    ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
    ASSERT_EQ(restored->status, JobStatus::kFinished) << restored->error.to_string();
    EXPECT_EQ(it::check_exactly_once(run.job), "");
  }
  std::filesystem::remove_all(run.base);
}

// min-pause above 0 means one checkpoint at a time even with max-concurrent-checkpoints 2 (as in Flink's
// docs): while checkpoint 1 is held, nothing else starts; afterwards each starts at least the min pause after
// the previous one completed.
TEST(CheckpointConcurrency, MinPauseMeansOneAtATimeDespiteMaxConcurrentTwo) {
  JobRun run;
  run.fs->hold_first_write("/chk-1/");
  coordinator::CheckpointCoordinatorConfig c;
  c.interval = 10ms;
  c.max_concurrent = 2;
  c.min_pause = 40ms;
  start(run, "min-pause", c);
  ASSERT_TRUE(run.client);
  auto& cp = it::checkpointing(*run.client);

  ASSERT_TRUE(it::wait_for([&] { return run.fs->holding("/chk-1/"); }));
  std::this_thread::sleep_for(100ms);  // ten intervals
  auto s = cp.checkpoint_stats();
  EXPECT_EQ(s.num_triggered, 1);
  EXPECT_EQ(s.num_in_progress, 1);
  run.fs->release("/chk-1/");
  ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 4; }));
  it::g_throttle_us = 0;

  JobExecutionResult result = run.client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  s = cp.checkpoint_stats();
  // Every checkpoint completed, except that one triggered while the job was finishing (a min pause after the
  // final one) is aborted as the job ends.
  EXPECT_GE(s.num_completed, s.num_triggered - 1);
  for (const auto& [id, e] : it::stats_by_id(s)) {
    if (e.status != coordinator::CheckpointStatus::kFailed) continue;
    EXPECT_EQ(id, s.num_triggered) << "only the last one";
    EXPECT_EQ(e.failure_reason, coordinator::CheckpointFailureReason::kCoordinatorShutdown) << e.failure_message;
  }

  auto sp = spans(*run.fs);
  ASSERT_GE(sp.size(), 4u);
  const Span* prev = nullptr;
  int64_t prev_id = 0;
  for (const auto& [id, span] : sp) {
    ASSERT_TRUE(span.mkdir) << "checkpoint " << id;
    if (prev != nullptr) {
      EXPECT_EQ(id, prev_id + 1);
      // It started after the previous one completed, and not before the min pause passed (the coordinator
      // measures from the completion it saw after the rename, and the folder is created after the trigger).
      ASSERT_TRUE(prev->metadata) << "checkpoint " << prev_id << " did not complete";
      EXPECT_GE(*span.mkdir - *prev->metadata, 39ms) << "checkpoint " << id;
    }
    prev = &span;
    prev_id = id;
  }
  expect_notifications_in_order(completion_order(sp));
  EXPECT_EQ(it::check_exactly_once(run.job), "");
  std::filesystem::remove_all(run.base);
}

// Checkpoint 2 completes while checkpoint 1 is still writing: 2 subsumes 1 (ids of completed checkpoints still
// increase). What 1's held task writes afterwards does not survive, nobody is told 1 completed, the sink commits
// 1's data with 2's, and the output is exactly once.
TEST(CheckpointConcurrency, ANewerCheckpointCompletingFirstSubsumesTheOlderOne) {
  JobRun run;
  run.fs->hold_first_write("/chk-1/per-auction-keyed");
  coordinator::CheckpointCoordinatorConfig c;
  c.interval = 20ms;
  c.max_concurrent = 2;
  start(run, "subsumed", c);
  ASSERT_TRUE(run.client);
  auto& cp = it::checkpointing(*run.client);

  // Checkpoint 2 completes; 1 is subsumed (discarded, then the tasks are told it was aborted).
  ASSERT_TRUE(it::wait_for([&] { return it::g_notifications.aborted(1); }));
  auto s = cp.checkpoint_stats();
  ASSERT_TRUE(s.latest_completed);
  EXPECT_EQ(s.latest_completed->id, CheckpointId(2));
  ASSERT_TRUE(s.latest_failed);
  EXPECT_EQ(s.latest_failed->id, CheckpointId(1));
  EXPECT_EQ(s.latest_failed->failure_reason, coordinator::CheckpointFailureReason::kSubsumed);
  EXPECT_EQ(s.consecutive_failures, 0) << "subsumption is not a failure";
  const std::string chk1 = run.base + "/ck/" + run.client->job_id().to_hex() + "/chk-1";
  // The discard runs on the coordinator's action thread just after the completion is published.
  EXPECT_TRUE(it::wait_for([&] { return !std::filesystem::exists(chk1); })) << "the subsumed checkpoint is discarded";
  EXPECT_TRUE(run.fs->holding("/chk-1/per-auction-keyed"));
  run.fs->release("/chk-1/per-auction-keyed");  // its task goes on writing (and acknowledges late)
  it::g_throttle_us = 0;

  JobExecutionResult result = run.client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  EXPECT_FALSE(std::filesystem::exists(chk1)) << "nothing of checkpoint 1 is left behind";
  auto sp = spans(*run.fs);
  EXPECT_FALSE(sp.at(1).metadata);
  const std::vector<int64_t> completed = completion_order(sp);
  ASSERT_GE(completed.size(), 2u);
  EXPECT_EQ(completed[0], 2);
  for (size_t i = 1; i < completed.size(); ++i) EXPECT_LT(completed[i - 1], completed[i]);
  expect_notifications_in_order(completed);
  EXPECT_EQ(it::check_exactly_once(run.job), "");
  // The job's folder is gone: no stray files of the subsumed checkpoint kept it.
  EXPECT_EQ(it::entries_of(run.base + "/ck"), std::vector<std::string>{});
  std::filesystem::remove_all(run.base);
}

// The end of data asks for the final checkpoint while checkpoint 1 is still in flight: the coordinator refuses
// it (max one pending). The cluster triggers it as soon as checkpoint 1 completes instead of waiting for the next
// periodic trigger, which here is an hour away, so the job finishes at once with its output exactly once.
TEST(CheckpointConcurrency, AFinalCheckpointRefusedWhileOneIsInFlightIsTriggeredWhenThatOneCompletes) {
  JobRun run;
  run.fs->hold_first_write("/chk-1/per-auction-keyed");
  coordinator::CheckpointCoordinatorConfig c;
  c.interval = std::chrono::hours(1);  // no periodic trigger during the test
  c.max_concurrent = 1;
  start(run, "deferred-final", c);
  ASSERT_TRUE(run.client);
  auto& cp = it::checkpointing(*run.client);
  auto first = it::when_deployed([&] { return cp.trigger_checkpoint(); });
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  ASSERT_EQ(*first, CheckpointId(1));
  ASSERT_TRUE(it::wait_for([&] { return run.fs->holding("/chk-1/per-auction-keyed"); }));

  it::g_throttle_us = 0;  // the sources reach the end of their input while checkpoint 1 is held
  std::this_thread::sleep_for(500ms);
  auto s = cp.checkpoint_stats();
  EXPECT_EQ(s.num_in_progress, 1);
  EXPECT_EQ(s.num_completed, 0);
  EXPECT_EQ(run.client->status(), JobStatus::kRunning) << "the job cannot end before its final checkpoint";

  run.fs->release("/chk-1/per-auction-keyed");
  ASSERT_TRUE(it::wait_for([&] { return run.client->status() == JobStatus::kFinished; }, 60s))
      << "the deferred final checkpoint was not triggered when checkpoint 1 completed";
  JobExecutionResult result = run.client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  s = cp.checkpoint_stats();
  ASSERT_TRUE(s.latest_completed);
  EXPECT_EQ(s.latest_completed->id, CheckpointId(2)) << "checkpoint 1, then the final one";
  EXPECT_EQ(s.num_completed, 2);
  EXPECT_EQ(it::check_exactly_once(run.job), "");
  std::filesystem::remove_all(run.base);
}

}  // namespace
}  // namespace sluice
