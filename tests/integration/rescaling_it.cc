// Restoring savepoints into a changed deployment (issue 7; docs/savepoints.md), on the main job (per-auction
// count/sum/max into the exactly-once file sink), every run checked against the single-threaded oracle:
// - max parallelism: adopted from the savepoint when the job sets none, a conflicting explicit value refused with a
//   clear error, and --rehash-key-groups re-hashing every key into the new key groups (on another backend and
//   parallelism too); the re-hashed and the adopted restore end in the same final value per auction.
#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace
}  // namespace sluice
