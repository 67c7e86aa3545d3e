// RocksDB options: the managed-memory split and sharing, the predefined options and the options factory as
// RocksDB reports them back from an open database (GetDBOptions / GetOptions), and the native metrics.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>

#include <filesystem>
#include <map>
#include <string>

#include "rocksdb_memory.h"
#include "rocksdb_options.h"
#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "sluice/state/rocksdb_options_factory.h"

namespace sluice {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

RocksDBStateBackendOptions options_in(const std::string& name) {
  RocksDBStateBackendOptions o;
  o.local_dir = ::testing::TempDir() + "sluice-rocksdb-options-test/" + name;
  std::filesystem::remove_all(o.local_dir);
  o.instance_name = "t";
  return o;
}

std::unique_ptr<RocksDBStore> open_store(const RocksDBStateBackendOptions& o) {
  auto s = RocksDBStore::open(o);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

// What RocksDB runs with for a state's column family.
struct Applied {
  rocksdb::DBOptions db;
  rocksdb::Options cf;
  rocksdb::BlockBasedTableOptions table;
};

Applied applied(RocksDBStore& store) {
  Result<int32_t> cf = store.column_family("state:x");
  EXPECT_TRUE(cf.is_ok());
  Applied a;
  a.db = store.db_for_test()->GetDBOptions();
  a.cf = store.db_for_test()->GetOptions(store.column_family_handle_for_test(*cf));
  const auto* t = a.cf.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  EXPECT_NE(t, nullptr);
  if (t != nullptr) a.table = *t;
  return a;
}

uint64_t cache_capacity(RocksDBStore& store) {
  uint64_t v = 0;
  EXPECT_TRUE(store.db_for_test()->GetIntProperty(store.column_family_handle_for_test(0),
                                                  rocksdb::DB::Properties::kBlockCacheCapacity, &v));
  return v;
}

TEST(RocksDBMemory, BudgetSplitFollowsFlinksFormula) {
  // cache = (3 - r) * M / 3, write-buffer manager = 2 * r * M / 3 (RocksDBMemoryControllerUtils).
  auto s = rocksdb_memory::split_budget(300 * kMiB, 0.5);
  EXPECT_EQ(s.cache_capacity_bytes, 250 * kMiB);
  EXPECT_EQ(s.write_buffer_manager_bytes, 100 * kMiB);
  s = rocksdb_memory::split_budget(300 * kMiB, 0.2);
  EXPECT_EQ(s.cache_capacity_bytes, 280 * kMiB);
  EXPECT_EQ(s.write_buffer_manager_bytes, 40 * kMiB);
}

TEST(RocksDBMemory, BadSettingsNameTheKey) {
  RocksDBMemoryOptions m;
  m.write_buffer_ratio = 1.0;
  EXPECT_NE(m.validate().message().find("state.backend.rocksdb.memory.write-buffer-ratio"), std::string::npos);
  m = {};
  m.high_prio_pool_ratio = 0;
  EXPECT_NE(m.validate().message().find("high-prio-pool-ratio"), std::string::npos);
  m = {};
  m.write_buffer_ratio = 0.6;
  m.high_prio_pool_ratio = 0.4;
  Status st = m.validate();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("must be below 1"), std::string::npos) << st.to_string();
  // Ratios as typed, not with six decimals.
  EXPECT_NE(st.message().find("(0.6) + state.backend.rocksdb.memory.high-prio-pool-ratio (0.4)"), std::string::npos)
      << st.to_string();
  m = {};
  m.write_buffer_ratio = 1.25;
  EXPECT_EQ(m.validate().message(),
            "state.backend.rocksdb.memory.write-buffer-ratio: 1.25 is out of range (expected in (0, 1))");
  m = {};
  m.managed_size_bytes = 0;
  EXPECT_NE(m.validate().message().find("taskmanager.memory.managed.size"), std::string::npos);

  auto o = options_in("bad-memory");
  o.memory.write_buffer_ratio = 0.95;
  auto store = RocksDBStore::open(o);
  ASSERT_FALSE(store.is_ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::filesystem::is_empty(o.local_dir));  // no working directory left behind
}

// A full local disk while RocksDB writes is an I/O error naming the working directory, not a
// failure of the user function: RocksDBError is a StatusError that keeps the code through the task boundary.
TEST(RocksDBFailures, FullDiskIsAnIoErrorNamingTheDirectory) {
  const std::string dir = "/data/rocks/sluice-rocksdb-job_1_op_x_0-0123456789abcdef";
  Status st = rocksdb_options::rocksdb_failure(
      rocksdb::Status::NoSpace("While appending to file: " + dir + "/000012.sst", "No space left on device"),
      "RocksDB put in column family 'count' of " + dir, dir);
  EXPECT_EQ(st.code(), StatusCode::kIOError) << st.to_string();
  EXPECT_NE(st.message().find("working directory '" + dir + "' is full"), std::string::npos) << st.to_string();
  // Some RocksDB versions report ENOSPC as a plain IOError with the errno text.
  st = rocksdb_options::rocksdb_failure(rocksdb::Status::IOError(dir + "/000012.sst", "No space left on device"),
                                        "RocksDB flush", dir);
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("is full"), std::string::npos) << st.to_string();
  st = rocksdb_options::rocksdb_failure(rocksdb::Status::Corruption("block checksum mismatch"), "RocksDB get", dir);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find(dir), std::string::npos);
  try {
    throw RocksDBError(rocksdb_options::rocksdb_failure(rocksdb::Status::NoSpace(), "RocksDB put", dir));
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kIOError);
  }
}

TEST(RocksDBMemory, ManagedInstancesShareOneCacheAndWriteBufferManager) {
  ASSERT_EQ(rocksdb_memory::live_shared_resources(), 0);
  auto o = options_in("managed");
  o.memory.managed_size_bytes = 48 * kMiB;
  const auto split = rocksdb_memory::split_budget(48 * kMiB, 0.5);
  {
    auto a = open_store(o);
    auto b = open_store(o);
    Applied x = applied(*a), y = applied(*b);
    EXPECT_EQ(x.table.block_cache.get(), y.table.block_cache.get());
    EXPECT_EQ(x.db.write_buffer_manager.get(), y.db.write_buffer_manager.get());
    ASSERT_NE(x.db.write_buffer_manager, nullptr);
    EXPECT_EQ(x.db.write_buffer_manager->buffer_size(), static_cast<size_t>(split.write_buffer_manager_bytes));
    EXPECT_TRUE(x.db.write_buffer_manager->cost_to_cache());
    EXPECT_EQ(cache_capacity(*a), static_cast<uint64_t>(split.cache_capacity_bytes));
    // Index and filter blocks are charged to the cache, with high priority, L0 and top level pinned.
    EXPECT_TRUE(x.table.cache_index_and_filter_blocks);
    EXPECT_TRUE(x.table.cache_index_and_filter_blocks_with_high_priority);
    EXPECT_TRUE(x.table.pin_l0_filter_and_index_blocks_in_cache);
    EXPECT_TRUE(x.table.pin_top_level_index_and_filter);
    EXPECT_EQ(rocksdb_memory::live_shared_resources(), 1);

    // Another budget: other objects. fixed-per-tm wins over managed = false.
    auto other = options_in("managed-other");
    other.memory.managed = false;
    other.memory.fixed_per_tm_bytes = 24 * kMiB;
    auto c = open_store(other);
    EXPECT_NE(applied(*c).table.block_cache.get(), x.table.block_cache.get());
    EXPECT_EQ(cache_capacity(*c), static_cast<uint64_t>(rocksdb_memory::split_budget(24 * kMiB, 0.5).cache_capacity_bytes));
    EXPECT_EQ(rocksdb_memory::live_shared_resources(), 2);
  }
  // Gone with their last user; the next instance creates them again.
  EXPECT_EQ(rocksdb_memory::live_shared_resources(), 0);
  auto again = open_store(o);
  EXPECT_EQ(rocksdb_memory::live_shared_resources(), 1);
}

TEST(RocksDBMemory, UnmanagedInstancesHaveTheirOwnDefaults) {
  auto o = options_in("unmanaged");
  o.memory.managed = false;
  auto store = open_store(o);
  Applied a = applied(*store);
  // RocksDB makes a disabled manager of its own when none is given.
  EXPECT_TRUE(a.db.write_buffer_manager == nullptr || !a.db.write_buffer_manager->enabled());
  EXPECT_TRUE(a.db.write_buffer_manager == nullptr || !a.db.write_buffer_manager->cost_to_cache());
  EXPECT_FALSE(a.table.cache_index_and_filter_blocks);
  EXPECT_EQ(rocksdb_memory::live_shared_resources(), 0);
}

TEST(RocksDBPredefinedOptions, EachProfileIsAppliedToTheDatabase) {
  struct Case {
    RocksDBPredefinedOptions p;
    int max_background_jobs;
    int max_open_files;
    bool dynamic_level_bytes;
    size_t write_buffer_size;
    size_t block_size;
    bool bloom;
  };
  const rocksdb::Options defaults;
  const rocksdb::BlockBasedTableOptions table_defaults;
  const size_t dflt_wb = defaults.write_buffer_size;
  const Case cases[] = {
      {RocksDBPredefinedOptions::kDefault, defaults.max_background_jobs, defaults.max_open_files, false, dflt_wb,
       table_defaults.block_size, false},
      {RocksDBPredefinedOptions::kSpinningDiskOptimized, 4, -1, true, dflt_wb, table_defaults.block_size, false},
      {RocksDBPredefinedOptions::kSpinningDiskOptimizedHighMem, 4, -1, true, 64u << 20, 128u << 10, true},
      {RocksDBPredefinedOptions::kFlashSsdOptimized, 4, -1, false, dflt_wb, table_defaults.block_size, false},
      {RocksDBPredefinedOptions::kFlashSsdOptimizedHighMem, 4, -1, true, 64u << 20, 4u << 10, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(rocksdb_predefined_options_name(c.p)));
    auto o = options_in("predefined");
    o.predefined_options = c.p;
    auto store = open_store(o);
    ASSERT_NE(store, nullptr);
    Applied a = applied(*store);
    EXPECT_EQ(a.db.max_background_jobs, c.max_background_jobs);
    EXPECT_EQ(a.db.max_open_files, c.max_open_files);
    EXPECT_EQ(a.cf.level_compaction_dynamic_level_bytes, c.dynamic_level_bytes);
    EXPECT_EQ(a.cf.write_buffer_size, c.write_buffer_size);
    EXPECT_EQ(a.table.block_size, c.block_size);
    EXPECT_EQ(a.table.filter_policy != nullptr, c.bloom);
    if (c.p == RocksDBPredefinedOptions::kSpinningDiskOptimizedHighMem) {
      EXPECT_EQ(a.cf.max_write_buffer_number, 4);
      EXPECT_EQ(a.cf.min_write_buffer_number_to_merge, 3);
      EXPECT_EQ(a.cf.target_file_size_base, 256u << 20);
      EXPECT_EQ(a.cf.max_bytes_for_level_base, 1024u << 20);
    }
    if (c.p == RocksDBPredefinedOptions::kSpinningDiskOptimized) {
      EXPECT_EQ(a.cf.compaction_style, rocksdb::kCompactionStyleLevel);
    }
    // Managed memory (the default) replaces the HIGH_MEM profiles' own 256 MiB caches by the shared one.
    EXPECT_EQ(cache_capacity(*store),
              static_cast<uint64_t>(rocksdb_memory::split_budget(o.memory.managed_size_bytes, 0.5).cache_capacity_bytes));
    EXPECT_EQ(rocksdb_predefined_options_name(c.p).empty(), false);
  }
  // Unmanaged, a HIGH_MEM profile keeps its own 256 MiB cache.
  auto o = options_in("predefined-unmanaged");
  o.memory.managed = false;
  o.predefined_options = RocksDBPredefinedOptions::kFlashSsdOptimizedHighMem;
  auto store = open_store(o);
  applied(*store);
  EXPECT_EQ(cache_capacity(*store), 256u << 20);
}

// Sets options of its own, and tries to undo Sluice's non-negotiable settings.
class TuningFactory final : public RocksDBOptionsFactory {
 public:
  void create_db_options(rocksdb::DBOptions& o) const override {
    o.max_background_jobs = 7;
    o.max_open_files = 100;  // over SPINNING_DISK_OPTIMIZED's -1
    o.create_if_missing = false;
    o.write_buffer_manager.reset();
  }
  void create_column_options(rocksdb::ColumnFamilyOptions& o) const override {
    o.write_buffer_size = 3 << 20;
    o.merge_operator.reset();
    rocksdb::BlockBasedTableOptions t;
    t.block_size = 16 << 10;
    t.cache_index_and_filter_blocks = false;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  }
};

TEST(RocksDBOptionsFactory, AppliedAfterThePredefinedOptionsAndBeforeSluicesOwnSettings) {
  auto o = options_in("factory");
  o.predefined_options = RocksDBPredefinedOptions::kSpinningDiskOptimized;
  o.options_factory = std::make_shared<TuningFactory>();
  auto store = open_store(o);
  ASSERT_NE(store, nullptr);
  Applied a = applied(*store);
  EXPECT_EQ(a.db.max_background_jobs, 7);
  EXPECT_EQ(a.db.max_open_files, 100);
  EXPECT_TRUE(a.cf.level_compaction_dynamic_level_bytes);  // the profile's, untouched by the factory
  EXPECT_EQ(a.cf.write_buffer_size, 3u << 20);
  EXPECT_EQ(a.table.block_size, 16u << 10);  // the factory's table settings are kept ...
  // ... but Sluice's win: the merge operator, the shared cache with index/filter blocks, the write-buffer manager.
  ASSERT_NE(a.cf.merge_operator, nullptr);
  EXPECT_STREQ(a.cf.merge_operator->Name(), "SluiceListAppend");
  EXPECT_TRUE(a.table.cache_index_and_filter_blocks);
  EXPECT_NE(a.db.write_buffer_manager, nullptr);
  EXPECT_TRUE(a.db.create_if_missing);
  // The merge operator works (ListState appends).
  store->merge(0, "k", "a");
  store->merge(0, "k", "b");
  std::string_view v;
  ASSERT_TRUE(store->get(0, "k", &v));
  EXPECT_EQ(v, "ab");
}

class PlainTableFactory final : public RocksDBOptionsFactory {
 public:
  void create_column_options(rocksdb::ColumnFamilyOptions& o) const override {
    o.table_factory.reset(rocksdb::NewPlainTableFactory());
  }
};

TEST(RocksDBOptionsFactory, ANonBlockBasedTableUnderManagedMemoryIsRejected) {
  auto o = options_in("plain");
  o.options_factory = std::make_shared<PlainTableFactory>();
  auto store = RocksDBStore::open(o);
  ASSERT_FALSE(store.is_ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(store.status().message().find("block-based"), std::string::npos) << store.status().to_string();
  o.memory.managed = false;  // without managed memory it is the user's business
  EXPECT_TRUE(RocksDBStore::open(o).is_ok());
}

TEST(RocksDBNativeMetrics, EnabledPropertiesArePublishedPerColumnFamilyAndOutliveTheStore) {
  std::map<std::string, std::function<double()>> gauges;  // "<group>/<name>"
  auto o = options_in("metrics");
  o.memory.managed_size_bytes = 30 * kMiB;
  o.native_metrics.block_cache_capacity = true;
  o.native_metrics.cur_size_all_mem_tables = true;
  o.native_metrics.num_running_compactions = true;
  o.native_metric_registrar = [&](const std::string& group, const std::string& name, std::function<double()> read) {
    gauges[group + "/" + name] = std::move(read);
  };
  {
    auto store = open_store(o);
    ASSERT_TRUE(store->column_family("state:count").is_ok());
    store->publish_native_metrics(0, "count");
    for (int i = 0; i < 1000; ++i) store->put(0, "key" + std::to_string(i), std::string(100, 'v'));
    ASSERT_EQ(gauges.size(), 3u);
    EXPECT_EQ(gauges.at("count/rocksdb.block-cache-capacity")(),
              static_cast<double>(rocksdb_memory::split_budget(30 * kMiB, 0.5).cache_capacity_bytes));
    EXPECT_GT(gauges.at("count/rocksdb.cur-size-all-mem-tables")(), 100.0 * 1000);
    EXPECT_GE(gauges.at("count/rocksdb.num-running-compactions")(), 0.0);
    EXPECT_EQ(gauges.count("count/rocksdb.block-cache-usage"), 0u);  // not enabled
  }
  // After the store closed: the values read at close.
  EXPECT_GT(gauges.at("count/rocksdb.cur-size-all-mem-tables")(), 100.0 * 1000);

  // Nothing enabled: nothing published.
  gauges.clear();
  auto off = options_in("metrics-off");
  off.native_metric_registrar = o.native_metric_registrar;
  auto store = open_store(off);
  ASSERT_TRUE(store->column_family("state:count").is_ok());
  store->publish_native_metrics(0, "count");
  EXPECT_TRUE(gauges.empty());
}

}  // namespace
}  // namespace sluice
