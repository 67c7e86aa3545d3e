// Fixed names (sluice/core/name_source.h): two runs of a checkpointing job whose environment has the same seeded
// name source name every folder and file of their checkpoint directory alike (job id, state file suffixes, RocksDB
// uploads), and another seed names them otherwise; $internal.pipeline.job-id fixes the job id alone. On the heap
// and on RocksDB with incremental checkpoints. Checkpoints are triggered by hand, two per run, and the job is
// cancelled with RETAIN_ON_CANCELLATION, so both runs leave the same checkpoints behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint_it_util.h"
#include "count_per_key.h"
#include "seeded_failover.h"
#include "sluice/sink/builtin_sinks.h"

namespace sluice {
namespace {

namespace stdfs = std::filesystem;

enum class Backend { kHeap, kRocksDBIncremental };
std::string backend_name(Backend b) { return b == Backend::kHeap ? "Heap" : "RocksDBIncremental"; }

// Every folder and file below `dir`, as paths relative to it, sorted.
std::vector<std::string> tree_of(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : stdfs::recursive_directory_iterator(dir)) out.push_back(stdfs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Run {
  Backend backend = Backend::kHeap;
  std::shared_ptr<NameSource> names;  // null: random
  std::string fixed_job_id;           // $internal.pipeline.job-id, "" = none
};

// Runs the job into a fresh checkpoint directory, takes two checkpoints by hand, cancels, and returns the tree.
std::vector<std::string> checkpoint_tree(const Run& run, const std::string& name) {
  const std::string dir = it::fresh_dir(name + "-ck"), rocksdb_dir = it::fresh_dir(name + "-rocksdb");
  Configuration config;
  for (auto [k, v] : {std::pair<std::string, std::string>{"execution.checkpointing.interval", "1h"},
                      {"execution.checkpointing.dir", dir},
                      {"execution.checkpointing.num-retained", "3"},
                      {"execution.checkpointing.data-inline-threshold", "0"},
                      {"execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION"},
                      {"state.backend.rocksdb.localdir", rocksdb_dir}}) {
    EXPECT_TRUE(config.set_string(k, v).is_ok()) << k;
  }
  if (run.backend == Backend::kRocksDBIncremental) {
    EXPECT_TRUE(config.set_string("state.backend.type", "rocksdb").is_ok());
    EXPECT_TRUE(config.set_string("execution.checkpointing.incremental", "true").is_ok());
  }
  if (!run.fixed_job_id.empty()) {
    EXPECT_TRUE(config.set_string("$internal.pipeline.job-id", run.fixed_job_id).is_ok());
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  env.set_name_source(run.names);
  env.from_generator(1'000'000'000, [](int64_t i) { return i; }, /*records_per_second=*/20'000)
      .name("numbers")
      .uid("numbers")
      .key_by([](const int64_t& v) { return v % 50; })
      .process(it::CountPerKey{})
      .name("count")
      .uid("count")
      .sink_to(DiscardingSink<std::string>())
      .name("sink")
      .uid("sink");
  auto client = env.execute_async("names");
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  if (!client.is_ok()) return {};
  auto& cp = it::checkpointing(**client);
  for (int64_t n = 1; n <= 2; ++n) {
    EXPECT_TRUE(it::wait_for([&] { return failover_test::records_out((*client)->metrics(), "names.numbers.") >= n * 400; }));
    Result<CheckpointId> id = Status::failed_precondition("not triggered");
    EXPECT_TRUE(it::wait_for([&] { return (id = cp.trigger_checkpoint()).is_ok(); }));  // refused until RUNNING
    EXPECT_TRUE(it::wait_for([&] {
      auto s = cp.checkpoint_stats();
      return s.latest_completed && s.latest_completed->id >= *id;
    })) << "checkpoint " << id->value();
  }
  (*client)->cancel();
  (void)(*client)->wait();
  std::vector<std::string> tree = tree_of(dir);
  stdfs::remove_all(dir);
  stdfs::remove_all(rocksdb_dir);
  return tree;
}

class NameSourceIT : public ::testing::TestWithParam<Backend> {};

TEST_P(NameSourceIT, TheSameSeedNamesEveryCheckpointFileAlike) {
  const std::string b = backend_name(GetParam());
  const auto first = checkpoint_tree({GetParam(), NameSource::seeded(17), ""}, b + "-a");
  const auto second = checkpoint_tree({GetParam(), NameSource::seeded(17), ""}, b + "-b");
  const auto other = checkpoint_tree({GetParam(), NameSource::seeded(18), ""}, b + "-c");
  ASSERT_FALSE(first.empty());
  // Two checkpoints with their state files (and, incremental, shared uploads) are there to compare.
  auto count_with = [&](const std::string& text) {
    return std::count_if(first.begin(), first.end(), [&](const std::string& p) { return p.find(text) != std::string::npos; });
  };
  EXPECT_EQ(count_with("/_metadata"), 2);
  EXPECT_GE(count_with("/chk-"), 6);
  if (GetParam() == Backend::kRocksDBIncremental) {
    EXPECT_GE(count_with("/shared/"), 2);
  }
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
  // Nothing in common but the fixed names: another seed gives another job id, so every path differs.
  for (const std::string& p : other) EXPECT_EQ(std::find(first.begin(), first.end(), p), first.end()) << p;
}

TEST_P(NameSourceIT, AFixedJobIdFixesTheJobFolderAlone) {
  const std::string id = "0123456789abcdef0123456789abcdef";
  const auto tree = checkpoint_tree({GetParam(), nullptr, id}, backend_name(GetParam()) + "-fixed");
  ASSERT_FALSE(tree.empty());
  for (const std::string& p : tree) EXPECT_EQ(p.rfind(id, 0), 0u) << p;
}

INSTANTIATE_TEST_SUITE_P(Backends, NameSourceIT, ::testing::Values(Backend::kHeap, Backend::kRocksDBIncremental),
                         [](const auto& p) { return backend_name(p.param); });

}  // namespace
}  // namespace sluice
