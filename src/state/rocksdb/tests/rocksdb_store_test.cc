// RocksDBStore: the working directory's lifecycle, the list-append merge operator, snapshots and their
// lifetime against the store's, and RocksDB's estimates.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <rocksdb/env.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "sluice/state/rocksdb_state_backend.h"
#include "state/rocksdb/rocksdb_options.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::string test_dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "sluice-rocksdb-store-test/" + name;
  fs::remove_all(dir);
  return dir;
}

std::unique_ptr<RocksDBStore> open_store(const std::string& dir, const std::string& instance = "t") {
  auto s = RocksDBStore::open(RocksDBStore::Options{dir, instance});
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

std::vector<std::pair<std::string, std::string>> scan(RocksDBStore::Iterator& it) {
  std::vector<std::pair<std::string, std::string>> out;
  for (; it.valid(); it.next()) out.emplace_back(it.key(), it.value());
  EXPECT_TRUE(it.status().is_ok());
  return out;
}

TEST(RocksDBStore, WorkingDirectoryLivesUnderTheLocalDirAndGoesWithTheStore) {
  const std::string dir = test_dir("lifecycle/nested");  // parents are created
  std::string path;
  {
    auto store = open_store(dir, "job_1_op_per auction/x_0");
    ASSERT_NE(store, nullptr);
    path = store->path();
    EXPECT_EQ(path.rfind(dir + "/sluice-rocksdb-job_1_op_per_auction_x_0-", 0), 0u) << path;
    EXPECT_TRUE(fs::is_directory(path));
    auto other = open_store(dir, "job_1_op_per auction/x_0");  // same name: a distinct directory
    EXPECT_NE(other->path(), path);
    ASSERT_TRUE(store->column_family("state:v").is_ok());
    store->put(0, "k", "v");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(dir));
}

// RocksDB's messages go to the job's log, never to a LOG file on the state's disk (a full disk made RocksDB 7.8
// append to that file again after a failed write, and Debian's build aborts there).
TEST(RocksDBStore, RocksDBsMessagesGoToTheJobLogNotToAFileInTheWorkingDirectory) {
  const std::string dir = test_dir("info-log");
  {
    auto store = open_store(dir);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->column_family("state:v").is_ok());
    store->put(0, "k", "v");
    ASSERT_TRUE(store->compact_all(0).is_ok());  // a flush and a compaction: RocksDB has things to say
    for (const auto& e : fs::directory_iterator(store->path())) {
      const std::string name = e.path().filename().string();
      EXPECT_NE(name.rfind("LOG", 0), 0u) << "RocksDB wrote its info log into the working folder: " << name;
    }
  }
  std::ostringstream captured;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(captured)));
  const rocksdb::Options options = rocksdb_options::db_options();
  ASSERT_NE(options.info_log, nullptr);
  rocksdb::Log(rocksdb::ERROR_LEVEL, options.info_log, "compaction of %s stopped", "cf-1");
  rocksdb::Log(rocksdb::WARN_LEVEL, options.info_log, "File Deletions Disabled, but already disabled");  // debug
  rocksdb::Log(rocksdb::INFO_LEVEL, options.info_log, "below RocksDB's level, not logged at all");
  spdlog::default_logger()->set_level(spdlog::level::debug);
  rocksdb::Log(rocksdb::WARN_LEVEL, options.info_log, "a warning at debug level");
  spdlog::set_default_logger(previous);
  EXPECT_NE(captured.str().find("[error] rocksdb: compaction of cf-1 stopped"), std::string::npos) << captured.str();
  EXPECT_EQ(captured.str().find("File Deletions"), std::string::npos) << "a warning at the default level";
  EXPECT_NE(captured.str().find("[debug] rocksdb: a warning at debug level"), std::string::npos) << captured.str();
  EXPECT_EQ(captured.str().find("not logged at all"), std::string::npos) << captured.str();
}

TEST(RocksDBStore, AnUnusableLocalDirIsAnIOErrorNamingIt) {
  const std::string dir = test_dir("unusable");
  fs::create_directories(dir);
  const std::string file = dir + "/a-file";
  std::ofstream(file) << "not a directory";
  auto store = RocksDBStore::open(RocksDBStore::Options{file, "t"});
  ASSERT_FALSE(store.is_ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIOError);
  EXPECT_NE(store.status().message().find(file), std::string::npos) << store.status().to_string();

  // Through the backend factories: a Status, or an exception for operator setup code.
  RocksDBStateBackendOptions opts{file, "t"};
  auto backend = make_keyed_state_backend<int64_t>(StateBackendKind::kRocksDB, KeyGroupRange(0, 9), 10, opts);
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kIOError);
  EXPECT_THROW(create_keyed_state_backend<int64_t>("rocksdb", KeyGroupRange(0, 9), 10, opts), std::runtime_error);
}

TEST(RocksDBStore, ColumnFamiliesAreSeparateAndIdsStable) {
  auto store = open_store(test_dir("cfs"));
  auto a = store->column_family("state:a");
  auto b = store->column_family("state:b");
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(*a, 0);
  EXPECT_EQ(*b, 1);
  EXPECT_EQ(store->column_family("state:a").value(), 0);  // looked up, not created again
  EXPECT_EQ(store->column_family_name(1), "state:b");
  store->put(*a, "k", "in a");
  std::string_view v;
  EXPECT_FALSE(store->get(*b, "k", &v));
  ASSERT_TRUE(store->get(*a, "k", &v));
  EXPECT_EQ(v, "in a");
  store->remove(*a, "k");
  EXPECT_FALSE(store->get(*a, "k", &v));
}

TEST(RocksDBStore, MergeAppendsOperandsInOrder) {
  auto store = open_store(test_dir("merge"));
  const int32_t cf = store->column_family("state:l").value();
  store->merge(cf, "k", "a");
  store->merge(cf, "k", "bc");
  std::string_view v;
  ASSERT_TRUE(store->get(cf, "k", &v));
  EXPECT_EQ(v, "abc");
  store->put(cf, "k", "x");
  store->merge(cf, "k", "y");
  RocksDBStore::WriteBatch batch(*store);
  batch.merge(cf, "k", "z");
  batch.merge(cf, "other", "1");
  store->write(batch);
  ASSERT_TRUE(store->get(cf, "k", &v));
  EXPECT_EQ(v, "xyz");
  ASSERT_TRUE(store->get(cf, "other", &v));
  EXPECT_EQ(v, "1");
}

TEST(RocksDBStore, IteratorsRespectBoundsAndDeleteRangeEmptiesThem) {
  auto store = open_store(test_dir("bounds"));
  const int32_t cf = store->column_family("state:v").value();
  for (const char* k : {"a", "b1", "b2", "c"}) store->put(cf, k, k);
  auto it = store->new_iterator(cf, "b", "c");
  EXPECT_EQ(scan(*it), (std::vector<std::pair<std::string, std::string>>{{"b1", "b1"}, {"b2", "b2"}}));
  EXPECT_TRUE(store->has_key_in(cf, "a", "b"));
  RocksDBStore::WriteBatch batch(*store);
  batch.delete_range(cf, "b", "c");
  EXPECT_EQ(batch.count(), 1u);
  store->write(batch);
  EXPECT_FALSE(store->has_key_in(cf, "b", "c"));
  auto all = store->new_iterator(cf, "", "");
  EXPECT_EQ(scan(*all).size(), 2u);
}

TEST(RocksDBStore, SnapshotSeesItsPointUntilReleased) {
  auto store = open_store(test_dir("snapshot"));
  const int32_t cf = store->column_family("state:v").value();
  store->put(cf, "k", "1");
  std::shared_ptr<RocksDBStore::Snapshot> snap = store->snapshot();
  EXPECT_EQ(store->live_snapshots(), 1u);
  store->put(cf, "k", "2");
  store->put(cf, "new", "x");
  const int32_t later = store->column_family("state:later").value();  // created after the snapshot
  store->put(later, "k", "y");
  ASSERT_TRUE(snap->acquire_reader());
  {
    auto it = snap->new_iterator(cf, "", "");
    EXPECT_EQ(scan(*it), (std::vector<std::pair<std::string, std::string>>{{"k", "1"}}));
  }
  snap->release_reader();
  std::string_view v;
  ASSERT_TRUE(store->get(cf, "k", &v));
  EXPECT_EQ(v, "2");
  snap->release();
  snap->release();  // idempotent
  EXPECT_EQ(store->live_snapshots(), 0u);
  EXPECT_FALSE(snap->acquire_reader());
  auto again = store->snapshot();
  again.reset();  // the destructor releases
  EXPECT_EQ(store->live_snapshots(), 0u);
}

TEST(RocksDBStore, ClosingTheStoreEndsItsSnapshots) {
  auto store = open_store(test_dir("close"));
  const int32_t cf = store->column_family("state:v").value();
  store->put(cf, "k", "1");
  auto snap = store->snapshot();
  const std::string path = store->path();
  store.reset();  // releases the RocksDB snapshot, closes, deletes the directory
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(snap->acquire_reader());
  snap->release();  // a no-op now
}

TEST(RocksDBStore, EstimatesCountKeysAndBytes) {
  auto store = open_store(test_dir("estimates"));
  const int32_t cf = store->column_family("state:v").value();
  EXPECT_EQ(store->estimate_num_keys(), 0);
  for (int i = 0; i < 1000; ++i) store->put(cf, "key-" + std::to_string(i), std::string(100, 'x'));
  EXPECT_EQ(store->estimate_num_keys(), 1000);
  EXPECT_GE(store->estimate_size_bytes(), 1000 * 100);
}

TEST(RocksDBStore, BackendWorkingDirectoryIsDeletedWithTheBackend) {
  const std::string dir = test_dir("backend");
  EmbeddedRocksDBStateBackend config(RocksDBStateBackendOptions{dir, "job_x_op_y_3"});
  auto b = config.create_keyed_state_backend<int64_t>(KeyGroupRange(0, 127), 128);
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  auto& rocks = dynamic_cast<RocksDBKeyedStateBackend<int64_t>&>(**b);
  const std::string path = rocks.working_directory();
  EXPECT_EQ(path.rfind(dir + "/sluice-rocksdb-job_x_op_y_3-", 0), 0u) << path;
  auto& v = (*b)->get_state(ValueStateDescriptor<int64_t>("v"));
  (*b)->set_current_key(1);
  v.update(1);
  auto snap = (*b)->snapshot();
  EXPECT_EQ(rocks.live_snapshots(), 1u);
  snap.reset();  // ending the KeyedStateSnapshot returns the RocksDB snapshot
  EXPECT_EQ(rocks.live_snapshots(), 0u);
  b->reset();
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace sluice
