// The exactly-once file sink and the checkpoints of one job, both on S3 (the s3 test server fixture;
// docs/storage.md) or both on the local disk, under seeded failures of every class (seeded_failover.h): the
// committed files hold the failure-free run's lines, each once, on the heap and on RocksDB with incremental
// checkpoints, with the sink rolling at every checkpoint or keeping its part files open across many checkpoints
// (rolling_policy.h: persisted into the sink's writer state at each barrier, recovered from it after each failure).
// Then: a job cancelled and restored at a lower and then a higher parallelism with open files in its writer state;
// a process killed with SIGKILL mid-run and restored from `latest` on S3. After every job that ends and every
// restore that runs to the end, no multipart upload and no hidden object of the sink is left.
// The sink and the storage reach S3 through the job's filesystems, configured by the s3.* keys alone.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "checkpoint/restore_path.h"
#include "fs/file_systems_from_config.h"
#include "fs/path.h"
#include "count_per_key.h"
#include "fs/recoverable_writer.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"
#include "test_servers.h"

namespace sluice {
namespace {

enum class Storage { kS3, kLocal };
enum class Backend { kHeap, kRocksDBIncremental };
enum class Rolling {
  kOnCheckpoint,  // a new part file per checkpoint
  kKeepOpen,      // files open across ~10 checkpoints (rollover 300 ms, checkpoints every 30 ms)
};

constexpr int32_t kKeys = 200;

constexpr int64_t kRolloverIntervalMs = 300;

file::RollingPolicy rolling_policy(Rolling r) {
  if (r == Rolling::kOnCheckpoint) return file::RollingPolicy::on_checkpoint();
  file::RollingPolicy p = file::RollingPolicy::defaults();  // 128 MiB: never reached here
  p.rollover_interval_ms = kRolloverIntervalMs;
  p.inactivity_interval_ms = 200;
  return p;
}

using it::CountPerKey;

// Where a test's job writes: `base` on S3 (a fresh prefix in the fixture's bucket) or on the local disk, with the
// job's configuration (s3.* keys, checkpoints under base/ck, restarts) and the filesystem serving `base`.
struct Target {
  std::string base;
  Configuration config;
  std::shared_ptr<fs::FileSystem> fs;
  std::string out() const { return base + "/out"; }
};

Target make_target(Storage storage, const std::string& name) {
  Target t;
  const std::string unique = name + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
  if (storage == Storage::kS3) {
    const auto server = testing::s3_test_server();
    EXPECT_EQ(server.server.state, testing::TestServer::State::kAvailable) << server.server.reason;
    t.base = "s3://" + server.bucket + "/" + unique;
    for (auto [k, v] : {std::pair<std::string, std::string>{"s3.endpoint", server.endpoint},
                        {"s3.access-key", server.access_key},
                        {"s3.secret-key", server.secret_key},
                        {"s3.path.style.access", "true"},
                        {"s3.retry.interval", "10ms"}}) {
      EXPECT_TRUE(t.config.set_string(k, v).is_ok()) << k;
    }
  } else {
    t.base = (std::filesystem::path(::testing::TempDir()) / unique).string();
  }
  failover_test::configure_failover(t.config, t.base + "/ck");
  auto fsys = fs::file_systems_from(t.config).for_path(t.base);
  EXPECT_TRUE(fsys.is_ok()) << fsys.status().to_string();
  if (fsys.is_ok()) t.fs = *fsys;
  return t;
}

// numbers (records_per_second in total) -> key_by(v % kKeys) -> running count per key -> the file sink.
void build_job(StreamExecutionEnvironment& env, const std::string& out, int64_t records, double records_per_second,
               Rolling rolling) {
  env.from_generator(records, [](int64_t i) { return i; }, records_per_second)
      .name("numbers")
      .uid("numbers")
      .key_by([](const int64_t& v) { return v % kKeys; })
      .process(CountPerKey{})
      .name("count")
      .uid("count")
      .sink_to(file::TransactionalFileSink<std::string>(
          out, [](const std::string& s, std::string& line) { line += s; }, rolling_policy(rolling)))
      .name("sink")
      .uid("sink");
}

// The committed lines below `dir` (files named part-*: what a reader takes).
std::multiset<std::string> committed_lines(fs::FileSystem& fsys, const std::string& dir) {
  std::multiset<std::string> lines;
  auto entries = fsys.list_dir(dir);
  EXPECT_TRUE(entries.is_ok()) << entries.status().to_string();
  if (!entries.is_ok()) return lines;
  for (const fs::DirEntry& e : *entries) {
    if (e.kind != fs::PathKind::kFile || e.name.rfind("part-", 0) != 0) continue;
    auto bytes = fsys.read_file(fs::join_path(dir, e.name));
    EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    if (!bytes.is_ok()) continue;
    std::string text(bytes->begin(), bytes->end()), line;
    for (char c : text) {
      if (c == '\n') {
        lines.insert(line);
        line.clear();
      } else {
        line += c;
      }
    }
  }
  return lines;
}

// The failure-free run's output, whatever order the source subtasks interleave a key's records in: every record v
// once, and per key the counts 1..n once each (a record replayed onto state that already counted it, or lost,
// breaks one of the two).
void expect_exactly_once(fs::FileSystem& fsys, const std::string& dir, int64_t records) {
  const std::multiset<std::string> got = committed_lines(fsys, dir);
  EXPECT_EQ(static_cast<int64_t>(got.size()), records);
  std::set<int64_t> seen;
  std::map<int64_t, std::multiset<int64_t>> counts;
  for (const std::string& line : got) {
    const size_t a = line.find(','), b = line.rfind(',');
    ASSERT_TRUE(a != std::string::npos && b > a) << "malformed line '" << line << "'";
    const int64_t key = std::stoll(line.substr(0, a)), v = std::stoll(line.substr(a + 1, b - a - 1));
    EXPECT_EQ(key, v % kKeys) << line;
    EXPECT_TRUE(seen.insert(v).second) << "record " << v << " committed twice";
    counts[key].insert(std::stoll(line.substr(b + 1)));
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), records) << "records missing";
  for (const auto& [key, ns] : counts) {
    std::multiset<int64_t> want;
    for (int64_t n = 1; n <= records / kKeys; ++n) want.insert(n);
    EXPECT_EQ(ns, want) << "key " << key << ": its counts are not 1.." << records / kKeys << " once each";
  }
}

// Nothing unpublished is left in `dir`: no hidden file or object, no open multipart upload (the recoverable
// writer's list_in_progress: ListMultipartUploads on S3, hidden in-progress and pending files on disk).
void expect_nothing_unpublished(fs::FileSystem& fsys, const std::string& dir) {
  auto entries = fsys.list_dir(dir);
  ASSERT_TRUE(entries.is_ok()) << entries.status().to_string();
  for (const fs::DirEntry& e : *entries) EXPECT_NE(e.name.rfind('.', 0), 0u) << "left behind: " << e.name;
  auto writer = fsys.create_recoverable_writer(fs::RecoverableWriterOptions{});
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  auto open = (*writer)->list_in_progress(dir);
  ASSERT_TRUE(open.is_ok()) << open.status().to_string();
  for (const fs::InProgressFile& f : *open) ADD_FAILURE() << "unpublished file left: " << f.target_path << " (" << f.handle << ")";
}

struct FailoverCase {
  Storage storage;
  Backend backend;
  Rolling rolling;
};

std::string case_name(const FailoverCase& c) {
  return std::string(c.storage == Storage::kS3 ? "S3" : "Local") +
         (c.backend == Backend::kHeap ? "Heap" : "RocksDBIncremental") +
         (c.rolling == Rolling::kOnCheckpoint ? "RollOnCheckpoint" : "KeepOpen");
}

class SinkFailoverIT : public ::testing::TestWithParam<FailoverCase> {};

TEST_P(SinkFailoverIT, OutputIsExactlyOnceUnderSeededFailuresOfEveryClass) {
  const FailoverCase c = GetParam();
  constexpr int64_t kRecords = 40'000;
  constexpr int32_t kFailures = static_cast<int32_t>(std::size(runtime::kFailureClasses));  // each class once
  const uint64_t seed = 23 + static_cast<uint64_t>(c.backend) + 10 * static_cast<uint64_t>(c.rolling) +
                        100 * static_cast<uint64_t>(c.storage);
  std::printf("sink failover: %s, seed %llu\n", case_name(c).c_str(), static_cast<unsigned long long>(seed));
  Target t = make_target(c.storage, "sink-failover-" + case_name(c));
  ASSERT_NE(t.fs, nullptr);
  if (c.backend == Backend::kRocksDBIncremental) {
    ASSERT_TRUE(t.config.set_string("state.backend.type", "rocksdb").is_ok());
    ASSERT_TRUE(t.config.set_string("execution.checkpointing.incremental", "true").is_ok());
  }
  StreamExecutionEnvironment env(t.config);
  env.set_parallelism(2);
  build_job(env, t.out(), kRecords, /*records_per_second=*/20'000, c.rolling);
  const auto started = std::chrono::steady_clock::now();
  auto client = env.execute_async("sink-failover");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);
  const auto source_records = [&] { return failover_test::records_out((*client)->metrics(), "sink-failover.numbers."); };
  failover_test::inject_seeded_failures(**client, *cp, seed, kFailures, kRecords, source_records, "sink");
  auto result = (*client)->wait();
  const auto run_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  EXPECT_EQ(static_cast<int32_t>(cp->injected_failures().size()), kFailures);

  expect_exactly_once(*t.fs, t.out(), kRecords);
  expect_nothing_unpublished(*t.fs, t.out());
  auto entries = t.fs->list_dir(t.out());
  ASSERT_TRUE(entries.is_ok());
  const int64_t checkpoints = cp->checkpoint_stats().num_completed;
  std::printf("  %zu part files, %lld checkpoints completed\n", entries->size(), static_cast<long long>(checkpoints));
  // Files open across checkpoints show as fewer part files than checkpoints, when checkpoints came well within
  // the rollover interval. On a loaded machine S3 checkpoints can take longer than the rollover interval; each
  // then rolls, and the count tells nothing (exactly-once above still holds).
  if (c.rolling == Rolling::kKeepOpen && checkpoints > 0 && run_ms / checkpoints <= kRolloverIntervalMs / 3) {
    EXPECT_LT(static_cast<int64_t>(entries->size()), checkpoints) << "files did not stay open across checkpoints";
  } else if (c.rolling == Rolling::kKeepOpen) {
    std::printf("  checkpoints every %lld ms on average: slower than a third of the rollover interval, so the "
                "part file count is not compared\n", static_cast<long long>(checkpoints > 0 ? run_ms / checkpoints : run_ms));
  }
  (void)t.fs->remove_all(t.base);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SinkFailoverIT,
    ::testing::Values(FailoverCase{Storage::kS3, Backend::kHeap, Rolling::kOnCheckpoint},
                      FailoverCase{Storage::kS3, Backend::kRocksDBIncremental, Rolling::kOnCheckpoint},
                      FailoverCase{Storage::kS3, Backend::kHeap, Rolling::kKeepOpen},
                      FailoverCase{Storage::kS3, Backend::kRocksDBIncremental, Rolling::kKeepOpen},
                      FailoverCase{Storage::kLocal, Backend::kHeap, Rolling::kKeepOpen},
                      FailoverCase{Storage::kLocal, Backend::kRocksDBIncremental, Rolling::kKeepOpen}),
    [](const auto& p) { return case_name(p.param); });

// Runs the job at `parallelism`, restored from the latest checkpoint under t's checkpoint dir when `restore`, until
// its source emitted `cancel_after` records (then cancels it, keeping its checkpoints) or to the end (0).
JobStatus run_attempt(Target& t, int32_t parallelism, bool restore, int64_t records, int64_t cancel_after,
                      const std::string& name) {
  Configuration config = t.config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
                  .is_ok());
  if (restore) {
    EXPECT_TRUE(config.set_string("execution.state-recovery.path", "latest").is_ok());  // --restore latest
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  build_job(env, t.out(), records, /*records_per_second=*/8'000, Rolling::kKeepOpen);
  auto client = env.execute_async(name);
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  if (!client.is_ok()) return JobStatus::kFailed;
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  if (cancel_after > 0) {
    while (!is_globally_terminal((*client)->status()) &&
           (failover_test::records_out((*client)->metrics(), name + ".numbers.") < cancel_after ||
            cp->checkpoint_stats().num_completed < 3)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    (*client)->cancel();
  }
  auto result = (*client)->wait();
  EXPECT_NE(result.status, JobStatus::kFailed) << result.error.to_string();
  std::printf("  %s at parallelism %d: %s after %lld source records\n", name.c_str(), parallelism,
              result.status == JobStatus::kFinished ? "finished" : "cancelled",
              static_cast<long long>(failover_test::records_out((*client)->metrics(), name + ".numbers.")));
  return result.status;
}

// Writer state is split-distributed: cancelled at parallelism 2 with a part file open per subtask, restored at 1
// (one subtask gets both: writes on one, commits the other), cancelled again, restored at 3 (some subtasks get
// none) and run to the end. Exactly once, and nothing unpublished left.
void rescaled_restores(Storage storage) {
  constexpr int64_t kRecords = 24'000;
  Target t = make_target(storage, std::string("sink-rescale-") + (storage == Storage::kS3 ? "s3" : "local"));
  ASSERT_NE(t.fs, nullptr);
  ASSERT_EQ(run_attempt(t, 2, false, kRecords, kRecords / 4, "rescale-first"), JobStatus::kCanceled);
  ASSERT_EQ(run_attempt(t, 1, true, kRecords, kRecords / 4, "rescale-down"), JobStatus::kCanceled);
  ASSERT_EQ(run_attempt(t, 3, true, kRecords, 0, "rescale-up"), JobStatus::kFinished);
  expect_exactly_once(*t.fs, t.out(), kRecords);
  expect_nothing_unpublished(*t.fs, t.out());
  (void)t.fs->remove_all(t.base);
}

TEST(SinkRescaleIT, OpenFilesInWriterStateSurviveAScaleDownAndUpOnS3) { rescaled_restores(Storage::kS3); }
TEST(SinkRescaleIT, OpenFilesInWriterStateSurviveAScaleDownAndUpOnLocalDisk) { rescaled_restores(Storage::kLocal); }

// kill -9: a child process (this program, re-executed with only SinkKillIT.Child and SLUICE_SINK_KILL_BASE set) runs
// the job writing the sink and its checkpoints to S3; once a few checkpoints completed it is killed with SIGKILL at a
// seeded moment; this process restores `latest` from S3 and runs to the end.
constexpr int64_t kKillRecords = 30'000;
constexpr const char* kKillBaseEnv = "SLUICE_SINK_KILL_BASE";

// Not a test of its own: the body of the process that KilledProcessRestoresExactlyOnceFromS3 starts (this binary
// with SLUICE_SINK_KILL_BASE set and a gtest filter) and kills with SIGKILL. Run directly, it skips: it has no
// parent to kill it, and what it checks is asserted by the parent after the restore.
TEST(SinkKillIT, Child) {
  const char* base = std::getenv(kKillBaseEnv);
  if (base == nullptr) GTEST_SKIP() << "the killed process of SinkKillIT.KilledProcessRestoresExactlyOnceFromS3";
  Target t = make_target(Storage::kS3, "unused");
  t.base = base;
  failover_test::configure_failover(t.config, t.base + "/ck");
  StreamExecutionEnvironment env(t.config);
  env.set_parallelism(2);
  build_job(env, t.out(), kKillRecords, /*records_per_second=*/5'000, Rolling::kKeepOpen);
  (void)env.execute("sink-kill");
  std::_Exit(3);  // the parent kills this process long before the 6 s of input end
}

TEST(SinkKillIT, KilledProcessRestoresExactlyOnceFromS3) {
  const uint64_t seed = 41;
  std::mt19937_64 rng(seed);
  Target t = make_target(Storage::kS3, "sink-kill");
  ASSERT_NE(t.fs, nullptr);
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv(kKillBaseEnv, t.base.c_str(), 1);
    ::execl(exe.c_str(), exe.c_str(), "--gtest_filter=SinkKillIT.Child", static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  // Kill it once checkpoint >= 8 completed, then after a seeded 0-300 ms more.
  const int64_t kill_after_checkpoint = 8;
  const auto registry = fs::file_systems_from(t.config);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int64_t seen = 0;
  while (seen < kill_after_checkpoint && std::chrono::steady_clock::now() < deadline) {
    auto latest = checkpoint::resolve_restore_path("latest", t.base + "/ck", registry);
    if (latest.is_ok()) seen = latest->metadata.checkpoint_id.value();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int64_t extra_ms = static_cast<int64_t>(rng() % 300);
  std::printf("sink kill -9: seed %llu, killed %lld ms after checkpoint %lld completed\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(extra_ms), static_cast<long long>(seen));
  std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "the child ended before it was killed (status " << wstatus << ")";
  ASSERT_GE(seen, kill_after_checkpoint) << "no checkpoint completed on S3 in time";

  Configuration config = t.config;
  ASSERT_TRUE(config.set_string("execution.state-recovery.path", "latest").is_ok());  // --restore latest
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  build_job(env, t.out(), kKillRecords, /*records_per_second=*/0, Rolling::kKeepOpen);
  auto result = env.execute("sink-kill-restored");
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();
  expect_exactly_once(*t.fs, t.out(), kKillRecords);
  expect_nothing_unpublished(*t.fs, t.out());
  (void)t.fs->remove_all(t.base);
}

}  // namespace
}  // namespace sluice
