// The exactly-once file sink and the checkpoints of one job, both on S3 (the s3 test server fixture;
// docs/storage.md), under seeded failures of every class (seeded_failover.h): the committed objects hold the
// failure-free run's lines, each once, on the heap and on RocksDB with incremental checkpoints. The sink and
// the storage reach S3 through the job's filesystems, configured by the s3.* keys alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <map>
#include <set>
#include <string>

#include "fs/file_systems_from_config.h"
#include "fs/path.h"
#include "count_per_key.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"
#include "test_servers.h"

namespace sluice {
namespace {

enum class Backend { kHeap, kRocksDBIncremental };
std::string backend_name(Backend b) { return b == Backend::kHeap ? "Heap" : "RocksDBIncremental"; }

using it::CountPerKey;

// The committed lines below `prefix` (objects named part-*: what a reader takes).
std::multiset<std::string> committed_lines(fs::FileSystem& s3, const std::string& prefix) {
  std::multiset<std::string> lines;
  auto entries = s3.list_dir(prefix);
  EXPECT_TRUE(entries.is_ok()) << entries.status().to_string();
  if (!entries.is_ok()) return lines;
  for (const fs::DirEntry& e : *entries) {
    if (e.kind != fs::PathKind::kFile || e.name.rfind("part-", 0) != 0) continue;
    auto bytes = s3.read_file(fs::join_path(prefix, e.name));
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

class S3SinkFailoverIT : public ::testing::TestWithParam<Backend> {};

TEST_P(S3SinkFailoverIT, OutputOnS3IsExactlyOnceUnderSeededFailures) {
  const auto server = testing::s3_test_server();
  ASSERT_EQ(server.server.state, testing::TestServer::State::kAvailable) << server.server.reason;
  constexpr int64_t kRecords = 40'000;
  constexpr int32_t kKeys = 200;
  constexpr int32_t kFailures = 3;
  const uint64_t seed = 23 + static_cast<uint64_t>(GetParam());
  std::printf("s3 sink failover: %s, seed %llu\n", backend_name(GetParam()).c_str(),
              static_cast<unsigned long long>(seed));
  const std::string base = "s3://" + server.bucket + "/s3-sink-failover-" + std::to_string(::getpid()) + "-" +
                           std::to_string(std::random_device{}()) + "-" + backend_name(GetParam());
  Configuration config;
  for (auto [k, v] : {std::pair<std::string, std::string>{"s3.endpoint", server.endpoint},
                      {"s3.access-key", server.access_key},
                      {"s3.secret-key", server.secret_key},
                      {"s3.path.style.access", "true"},
                      {"s3.retry.interval", "10ms"}}) {
    ASSERT_TRUE(config.set_string(k, v).is_ok()) << k;
  }
  if (GetParam() == Backend::kRocksDBIncremental) {
    ASSERT_TRUE(config.set_string("state.backend.type", "rocksdb").is_ok());
    ASSERT_TRUE(config.set_string("execution.checkpointing.incremental", "true").is_ok());
  }
  failover_test::configure_failover(config, base + "/ck");
  auto s3 = fs::file_systems_from(config).for_path(base);
  ASSERT_TRUE(s3.is_ok()) << s3.status().to_string();

  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  env.from_generator(kRecords, [](int64_t i) { return i; }, /*records_per_second=*/20'000)
      .name("numbers")
      .uid("numbers")
      .key_by([](const int64_t& v) { return v % kKeys; })
      .process(CountPerKey{})
      .name("count")
      .uid("count")
      .sink_to(file::TransactionalFileSink<std::string>(base + "/out",
                                                        [](const std::string& s, std::string& line) { line += s; }))
      .name("sink")
      .uid("sink");
  auto client = env.execute_async("s3-sink-failover");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);
  const auto source_records = [&] {
    return failover_test::records_out((*client)->metrics(), "s3-sink-failover.numbers.");
  };
  failover_test::inject_seeded_failures(**client, *cp, seed, kFailures, kRecords, source_records, "s3 sink");
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  EXPECT_EQ(static_cast<int32_t>(cp->injected_failures().size()), kFailures);

  // The failure-free run, whatever order the two source subtasks interleave a key's records in: every record v
  // once, and per key the counts 1..n once each (a record replayed onto state that already counted it, or lost,
  // breaks one of the two).
  const std::multiset<std::string> got = committed_lines(**s3, base + "/out");
  EXPECT_EQ(static_cast<int64_t>(got.size()), kRecords);
  std::set<int64_t> records;
  std::map<int64_t, std::multiset<int64_t>> counts;
  for (const std::string& line : got) {
    const size_t a = line.find(','), b = line.rfind(',');
    ASSERT_TRUE(a != std::string::npos && b > a) << "malformed line '" << line << "'";
    const int64_t key = std::stoll(line.substr(0, a)), v = std::stoll(line.substr(a + 1, b - a - 1));
    EXPECT_EQ(key, v % kKeys) << line;
    EXPECT_TRUE(records.insert(v).second) << "record " << v << " committed twice";
    counts[key].insert(std::stoll(line.substr(b + 1)));
  }
  EXPECT_EQ(static_cast<int64_t>(records.size()), kRecords) << "records missing";
  for (const auto& [key, ns] : counts) {
    std::multiset<int64_t> want;
    for (int64_t n = 1; n <= kRecords / kKeys; ++n) want.insert(n);
    EXPECT_EQ(ns, want) << "key " << key << ": its counts are not 1.." << kRecords / kKeys << " once each";
  }
  // Nothing unpublished is left: no hidden object, no open multipart upload.
  auto entries = (*s3)->list_dir(base + "/out");
  ASSERT_TRUE(entries.is_ok());
  for (const fs::DirEntry& e : *entries) EXPECT_EQ(e.name.rfind('.', 0), std::string::npos) << e.name;
  (void)(*s3)->remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(Backends, S3SinkFailoverIT, ::testing::Values(Backend::kHeap, Backend::kRocksDBIncremental),
                         [](const auto& p) { return backend_name(p.param); });

}  // namespace
}  // namespace sluice
