// Entropy injection on S3 (s3.entropy.key / s3.entropy.length; Flink's docs, "Entropy injection for S3 file
// systems"; docs/storage.md): a job checkpointing to s3://<bucket>/<prefix>/_entropy_/ck, on the heap and on RocksDB
// with incremental checkpoints, under seeded failures (so it restores from checkpoints with entropy).
//   1. While it runs, every state data object sits under <prefix>/<5 random [0-9a-z]>/ck/<job>/..., every `_metadata`
//      under <prefix>/ck/<job>/chk-<n>/ with no entropy, and no key holds the marker.
//   2. The committed output is the failure-free run's, each record once.
//   3. After the job finished (its checkpoints discarded by retention and at the end), no object of any checkpoint
//      is left anywhere below the prefix, entropy prefixes included.
//   4. A savepoint taken to <prefix>/_entropy_/sp has no entropy and no marker in any key, and a copy of it under
//      another prefix restores: the restored job continues every key's count where the savepoint left it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "count_per_key.h"
#include "fs/file_systems_from_config.h"
#include "fs/path.h"
#include "fs/s3/s3_file_system.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"
#include "test_servers.h"

namespace sluice {
namespace {

enum class Backend { kHeap, kRocksDBIncremental };
std::string backend_name(Backend b) { return b == Backend::kHeap ? "Heap" : "RocksDBIncremental"; }

constexpr int64_t kRecords = 30'000;
constexpr int32_t kKeys = 100;
constexpr int32_t kEntropyLength = 5;

// Polls `done` every 5 ms for up to 120 s; true once it holds.
bool wait_for(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class S3EntropyIT : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    server_ = testing::s3_test_server();
    ASSERT_EQ(server_.server.state, testing::TestServer::State::kAvailable) << server_.server.reason;
    prefix_ = "s3-entropy-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()) + "-" +
              backend_name(GetParam());
    base_ = "s3://" + server_.bucket + "/" + prefix_;
    auto f = fs::file_systems_from(config()).for_path(base_);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    s3_ = std::dynamic_pointer_cast<s3::S3FileSystem>(*f);
    ASSERT_NE(s3_, nullptr);
  }
  void TearDown() override {
    if (s3_) (void)s3_->remove_all(base_);
  }

  Configuration config() const {
    Configuration c;
    for (auto [k, v] : {std::pair<std::string, std::string>{"s3.endpoint", server_.endpoint},
                        {"s3.access-key", server_.access_key},
                        {"s3.secret-key", server_.secret_key},
                        {"s3.path.style.access", "true"},
                        {"s3.retry.interval", "10ms"},
                        {"s3.entropy.key", "_entropy_"},
                        {"s3.entropy.length", std::to_string(kEntropyLength)},
                        {"execution.checkpointing.data-inline-threshold", "0"},
                        {"execution.checkpointing.num-retained", "2"}}) {
      EXPECT_TRUE(c.set_string(k, v).is_ok()) << k;
    }
    if (GetParam() == Backend::kRocksDBIncremental) {
      EXPECT_TRUE(c.set_string("state.backend.type", "rocksdb").is_ok());
      EXPECT_TRUE(c.set_string("execution.checkpointing.incremental", "true").is_ok());
    }
    failover_test::configure_failover(c, base_ + "/_entropy_/ck");
    return c;
  }

  // The keys of the objects below the prefix, relative to it; folder entries (s3proxy lists its disk's folders as
  // "x/") are not objects and are left out.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    auto listed = s3_->client().list_objects(server_.bucket, prefix_ + "/");
    EXPECT_TRUE(listed.is_ok()) << listed.status().to_string();
    if (!listed.is_ok()) return out;
    for (const auto& o : listed->objects) {
      if (!o.key.empty() && o.key.back() != '/') out.push_back(o.key.substr(prefix_.size() + 1));
    }
    return out;
  }

  // `records_per_second`: the first run's input lasts 12 s, so that the seeded failures come before its end even
  // when its checkpoints and savepoint take seconds on a loaded machine (the run must still be going then).
  void build(StreamExecutionEnvironment& env, const std::string& out, const std::string& sink_uid = "sink",
             double records_per_second = 2'500) const {
    env.set_parallelism(2);
    env.from_generator(kRecords, [](int64_t i) { return i; }, records_per_second)
        .name("numbers")
        .uid("numbers")
        .key_by([](const int64_t& v) { return v % kKeys; })
        .process(it::CountPerKey{})
        .name("count")
        .uid("count")
        .sink_to(file::TransactionalFileSink<std::string>(out, [](const std::string& s, std::string& line) { line += s; }))
        .name("sink")
        .uid(sink_uid);
  }

  // Committed lines below `dir` as (key, record, count).
  std::vector<std::array<int64_t, 3>> committed(const std::string& dir) const {
    std::vector<std::array<int64_t, 3>> rows;
    auto entries = s3_->list_dir(dir);
    EXPECT_TRUE(entries.is_ok()) << entries.status().to_string();
    if (!entries.is_ok()) return rows;
    for (const fs::DirEntry& e : *entries) {
      if (e.kind != fs::PathKind::kFile || e.name.rfind("part-", 0) != 0) continue;
      auto bytes = s3_->read_file(fs::join_path(dir, e.name));
      EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
      if (!bytes.is_ok()) continue;
      std::string text(bytes->begin(), bytes->end()), line;
      for (char c : text) {
        if (c != '\n') {
          line += c;
          continue;
        }
        const size_t a = line.find(','), b = line.rfind(',');
        rows.push_back({std::stoll(line.substr(0, a)), std::stoll(line.substr(a + 1, b - a - 1)),
                        std::stoll(line.substr(b + 1))});
        line.clear();
      }
    }
    return rows;
  }

  testing::S3TestServer server_;
  std::string prefix_, base_;
  std::shared_ptr<s3::S3FileSystem> s3_;
};

TEST_P(S3EntropyIT, DataUnderEntropyMetadataAndSavepointsWithoutAndNothingLeftAfterRetention) {
  const uint64_t seed = 41 + static_cast<uint64_t>(GetParam());
  std::printf("s3 entropy: %s, seed %llu, prefix %s\n", backend_name(GetParam()).c_str(),
              static_cast<unsigned long long>(seed), prefix_.c_str());
  StreamExecutionEnvironment env(config());
  build(env, base_ + "/out");
  auto client = env.execute_async("s3-entropy");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);
  const std::string job = (*client)->job_id().to_hex();

  // 1. Where the objects are, once a few checkpoints completed.
  ASSERT_TRUE(wait_for([&] {
    auto s = cp->checkpoint_stats();
    return s.latest_completed && s.latest_completed->id.value() >= 3;
  }));
  const std::regex data("[0-9a-z]{" + std::to_string(kEntropyLength) + "}/ck/" + job + "/(chk-[0-9]+|shared)/[^/]+");
  const std::regex metadata("ck/" + job + "/chk-[0-9]+/(_metadata|_checkpoint_stats\\.json)");
  std::set<std::string> entropies;
  int metadata_objects = 0;
  for (const std::string& k : keys()) {
    EXPECT_EQ(k.find("_entropy_"), std::string::npos) << k;
    if (std::regex_match(k, data)) {
      entropies.insert(k.substr(0, kEntropyLength));
    } else if (std::regex_match(k, metadata)) {
      metadata_objects += k.ends_with("/_metadata") ? 1 : 0;
    } else {
      EXPECT_EQ(k.rfind("out/", 0), 0u) << "an object neither data with entropy, nor metadata, nor output: " << k;
    }
  }
  EXPECT_GE(metadata_objects, 1);
  EXPECT_GE(entropies.size(), 2u) << "data objects spread over random prefixes";

  // 4a. A savepoint with the marker in its target: no entropy, no marker.
  auto trigger = cp->trigger_savepoint(base_ + "/_entropy_/sp");
  ASSERT_TRUE(trigger.is_ok()) << trigger.status().to_string();
  auto sp = cp->wait_savepoint(*trigger, 60'000);
  ASSERT_TRUE(sp && sp->state == cluster::SavepointRequestStatus::State::kCompleted)
      << (sp ? sp->cause.to_string() : "unknown trigger");
  EXPECT_EQ(sp->location.rfind(base_ + "/sp/savepoint-", 0), 0u) << sp->location;
  const std::string sp_prefix = sp->location.substr(base_.size() + 1) + "/";
  int savepoint_objects = 0;
  for (const std::string& k : keys()) {
    if (k.find("/sp/") != std::string::npos) ADD_FAILURE() << "savepoint object under an entropy prefix: " << k;
    savepoint_objects += k.rfind(sp_prefix, 0) == 0 ? 1 : 0;
  }
  EXPECT_GE(savepoint_objects, 3) << "_metadata and state files (nothing inline)";

  // 2. Seeded failures: restores from checkpoints with entropy; the output is exactly once.
  const auto source_records = [&] { return failover_test::records_out((*client)->metrics(), "s3-entropy.numbers."); };
  failover_test::inject_seeded_failures(**client, *cp, seed, 2, kRecords, source_records, "s3 entropy");
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  EXPECT_GE(cp->restarts(), 1);
  const auto rows = committed(base_ + "/out");
  EXPECT_EQ(static_cast<int64_t>(rows.size()), kRecords);
  std::set<int64_t> records;
  std::map<int64_t, std::multiset<int64_t>> counts;
  for (const auto& [key, v, n] : rows) {
    EXPECT_EQ(key, v % kKeys);
    EXPECT_TRUE(records.insert(v).second) << "record " << v << " committed twice";
    counts[key].insert(n);
  }
  for (const auto& [key, ns] : counts) {
    int64_t want = 1;
    for (int64_t n : ns) EXPECT_EQ(n, want++) << "key " << key;
  }

  // 3. The job finished: every checkpoint was discarded, and not one of its objects is left, wherever it was.
  for (const std::string& k : keys()) {
    EXPECT_TRUE(k.rfind("out/", 0) == 0 || k.rfind("sp/", 0) == 0) << "left behind: " << k;
  }

  // 4b. The savepoint copied to another prefix restores there.
  const std::string moved = base_ + "/moved/copy";
  for (const std::string& k : keys()) {
    if (k.rfind(sp_prefix, 0) != 0) continue;
    auto bytes = s3_->read_file(base_ + "/" + k);
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    ASSERT_TRUE(s3_->write_file(moved + "/" + k.substr(sp_prefix.size()), *bytes, fs::Durability::kNone).is_ok());
  }
  Configuration restored_config = config();
  ASSERT_TRUE(restored_config.set_string("execution.checkpointing.dir", base_ + "/_entropy_/ck2").is_ok());
  ASSERT_TRUE(restored_config.set_string("execution.state-recovery.path", moved).is_ok());
  // A sink of its own: the savepoint's sink state holds a part file the first run aborted later (savepoints commit
  // nothing), so its state is left out (execution.state-recovery.ignore-unclaimed-state).
  ASSERT_TRUE(restored_config.set_string("execution.state-recovery.ignore-unclaimed-state", "true").is_ok());
  StreamExecutionEnvironment restored_env(restored_config);
  build(restored_env, base_ + "/out2", "sink-2", /*records_per_second=*/15'000);
  auto restored = restored_env.execute("s3-entropy-restored");
  ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
  ASSERT_EQ(restored->status, JobStatus::kFinished) << restored->error.to_string();
  // What the restored job added: every key's counts go on from the savepoint's, each once, up to the key's total.
  std::map<int64_t, std::vector<int64_t>> continued;
  for (const auto& [key, v, n] : committed(base_ + "/out2")) continued[key].push_back(n);
  EXPECT_FALSE(continued.empty());
  for (auto& [key, ns] : continued) {
    std::sort(ns.begin(), ns.end());
    EXPECT_EQ(ns.back(), kRecords / kKeys) << "key " << key;
    for (size_t i = 1; i < ns.size(); ++i) EXPECT_EQ(ns[i], ns[i - 1] + 1) << "key " << key;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, S3EntropyIT, ::testing::Values(Backend::kHeap, Backend::kRocksDBIncremental),
                         [](const auto& p) { return backend_name(p.param); });

}  // namespace
}  // namespace sluice
