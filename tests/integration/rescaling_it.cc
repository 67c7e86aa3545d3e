// Restoring savepoints into a changed deployment (docs/savepoints.md), on the main job (per-auction
// count/sum/max into the exactly-once file sink), every run checked against the single-threaded oracle:
// - max parallelism: adopted from the savepoint when the job sets none, a conflicting explicit value refused with a
//   clear error, and --rehash-key-groups re-hashing every key into the new key groups (on another backend and
//   parallelism too); the re-hashed and the adopted restore end in the same final value per auction;
// - the rescaling matrix 4->2, 4->3, 4->1, 2->5 on both backends and both directions of backend switch: stop with
//   a savepoint, restore at the new parallelism (and stop again at once), restore that and run to the end. The
//   sources resume at the savepoints' offsets (the events the three runs read add up to the stream, none twice),
//   every key of the first savepoint is in the restored job's savepoint (read back from the new backends), and the
//   output is exactly once;
// - a stop-with-savepoint that fails (a task fails while taking it) leaves the job running: it recovers, finishes,
//   and its output is exactly once.
#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/fault_injection.h"
#include "savepoint_it_util.h"

namespace sluice {
namespace {

using namespace savepoint_it;  // NOLINT: the helpers of these suites
namespace fs = std::filesystem;

constexpr int64_t kSmallEvents = 400'000;

TEST(RescalingIT, MaxParallelismIsAdoptedARefusedConflictFailsAndRehashingRestoresExactlyOnce) {
  const std::string base = temp_base("max-parallelism");
  auto first = start(base, "mp-first", 4, "hashmap", base + "/out", "", false, {{"pipeline.max-parallelism", "256"}},
                     kSmallEvents);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  wait_for_events(*first, "mp-first", kSmallEvents / 4);
  const std::string savepoint = stop(*first, base + "/savepoints", /*drain=*/false);
  ASSERT_FALSE(savepoint.empty());
  first->client.reset();
  fs::copy(base + "/out", base + "/out-rehash", fs::copy_options::recursive);

  // Another explicit max parallelism: refused before anything runs, naming both values and the ways out.
  auto refused = start(base, "mp-refused", 2, "hashmap", base + "/out-refused", savepoint, false,
                       {{"pipeline.max-parallelism", "128"}}, kSmallEvents);
  ASSERT_FALSE(refused.is_ok());
  const std::string msg = refused.status().to_string();
  for (const char* part : {"max parallelism 256", "pipeline.max-parallelism 128", "--rehash-key-groups"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
  }

  // None set: 256 is adopted (the default for parallelism 2 would be 128, whose key groups do not match).
  auto adopted = start(base, "mp-adopted", 2, "hashmap", base + "/out", savepoint, false, {}, kSmallEvents);
  ASSERT_TRUE(adopted.is_ok()) << adopted.status().to_string();
  auto done = adopted->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  adopted->client.reset();
  expect_exactly_once(base + "/out", kSmallEvents);

  // Re-hashed into 100 key groups, at parallelism 3 on RocksDB.
  auto rehashed = start(base, "mp-rehashed", 3, "rocksdb", base + "/out-rehash", savepoint, false,
                        {{"pipeline.max-parallelism", "100"}, {"execution.state-recovery.rehash-key-groups", "true"}},
                        kSmallEvents);
  ASSERT_TRUE(rehashed.is_ok()) << rehashed.status().to_string();
  done = rehashed->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  rehashed->client.reset();
  expect_exactly_once(base + "/out-rehash", kSmallEvents);
  EXPECT_EQ(final_lines(base + "/out"), final_lines(base + "/out-rehash"));
  fs::remove_all(base);
}

struct MatrixCase {
  int32_t from, to;
  const char* from_backend;
  const char* to_backend;
};

std::string case_name(const ::testing::TestParamInfo<MatrixCase>& info) {
  return std::to_string(info.param.from) + "_to_" + std::to_string(info.param.to) + "_" + info.param.from_backend +
         "_to_" + info.param.to_backend;
}

class RescalingMatrixIT : public ::testing::TestWithParam<MatrixCase> {};

constexpr int64_t kMatrixEvents = 600'000;

TEST_P(RescalingMatrixIT, SourcesResumeAtTheSavepointKeysAllRestoreAndTheOutputIsExactlyOnce) {
  const MatrixCase c = GetParam();
  const std::string base = temp_base("matrix-" + std::to_string(c.from) + "-" + std::to_string(c.to) + "-" +
                                     c.from_backend + "-" + c.to_backend);
  auto first = start(base, "rm-first", c.from, c.from_backend, base + "/out", "", false, {}, kMatrixEvents);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  wait_for_events(*first, "rm-first", kMatrixEvents / 5);
  const std::string sp1 = stop(*first, base + "/savepoints", /*drain=*/false);
  ASSERT_FALSE(sp1.empty());
  const int64_t read1 = source_events(first->client->metrics(), "rm-first");
  first->client.reset();

  // Restored at the new parallelism (and backend), stopped again at once: its savepoint holds what the new
  // backends restored, plus what it read meanwhile (per-auction state only grows).
  auto second = start(base, "rm-second", c.to, c.to_backend, base + "/out", sp1, false, {}, kMatrixEvents);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  const std::string sp2 = stop(*second, base + "/savepoints", /*drain=*/false);
  ASSERT_FALSE(sp2.empty());
  const int64_t read2 = source_events(second->client->metrics(), "rm-second");
  second->client.reset();

  const std::set<std::string> keys1 = savepoint_keys(sp1, "per-auction");
  const std::set<std::string> keys2 = savepoint_keys(sp2, "per-auction");
  ASSERT_GT(keys1.size(), 0u);
  size_t restored = 0;
  for (const std::string& k : keys1) restored += keys2.count(k);
  EXPECT_EQ(restored, keys1.size()) << "keys of the savepoint missing after the restore at parallelism " << c.to;

  auto third = start(base, "rm-third", c.to, c.to_backend, base + "/out", sp2, false, {}, kMatrixEvents);
  ASSERT_TRUE(third.is_ok()) << third.status().to_string();
  auto done = third->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  const int64_t read3 = source_events(third->client->metrics(), "rm-third");
  third->client.reset();
  std::printf("  %d (%s) -> %d (%s): events read %lld + %lld + %lld, %zu keys restored\n", c.from, c.from_backend,
              c.to, c.to_backend, static_cast<long long>(read1), static_cast<long long>(read2),
              static_cast<long long>(read3), keys1.size());
  EXPECT_EQ(read1 + read2 + read3, kMatrixEvents) << "the sources resume at the savepoints' offsets";
  expect_exactly_once(base + "/out", kMatrixEvents);
  fs::remove_all(base);
}

std::vector<MatrixCase> matrix() {
  std::vector<MatrixCase> cases;
  for (auto [from, to] : {std::pair{4, 2}, std::pair{4, 3}, std::pair{4, 1}, std::pair{2, 5}}) {
    for (const char* a : {"hashmap", "rocksdb"}) {
      for (const char* b : {"hashmap", "rocksdb"}) cases.push_back({from, to, a, b});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Matrix, RescalingMatrixIT, ::testing::ValuesIn(matrix()), case_name);

TEST(RescalingIT, AFailedStopWithSavepointLeavesTheJobRunning) {
  const std::string base = temp_base("failed-stop");
  auto r = start(base, "failed-stop", 2, "hashmap", base + "/out", "", false, {}, kMatrixEvents);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  wait_for_events(*r, "failed-stop", kMatrixEvents / 5);
  // The first task that takes the stop's savepoint fails between its synchronous and asynchronous part.
  ASSERT_TRUE(r->cp->arm_failure(runtime::FailurePoint::kBetweenSyncAndAsyncSnapshot, -1, -1, "savepoint").is_ok());
  auto trigger = r->cp->stop_with_savepoint(base + "/savepoints", /*drain=*/false);
  ASSERT_TRUE(trigger.is_ok()) << trigger.status().to_string();
  auto st = r->cp->wait_savepoint(*trigger, 60'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->state, cluster::SavepointRequestStatus::State::kFailed);
  EXPECT_NE(st->cause.to_string().find("stop-with-savepoint"), std::string::npos) << st->cause.to_string();
  EXPECT_FALSE(is_globally_terminal(r->client->status())) << "the job runs on after a failed stop";
  auto done = r->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  EXPECT_EQ(r->cp->restarts(), 1);
  r->client.reset();
  expect_exactly_once(base + "/out", kMatrixEvents);
  fs::remove_all(base);
}

}  // namespace
}  // namespace sluice
