// api::rocksdb_backend_options: which write-back cache sizing a configuration gives every RocksDB instance - a share
// of managed memory by default, a fixed size when cache.max-size is set or no budget bounds RocksDB, none when the
// cache is disabled - and that the memory keys reach the options.
#include "api/rocksdb_backend_options.h"

#include <gtest/gtest.h>

#include "sluice/config/options.h"

namespace sluice::api {
namespace {

using Sizing = RocksDBWriteBackCacheOptions::Sizing;

Configuration config_of(std::initializer_list<std::pair<const char*, const char*>> entries) {
  Configuration c;
  for (const auto& [key, value] : entries) {
    const Status s = c.set_string(key, value);
    EXPECT_TRUE(s.is_ok()) << key << ": " << s.to_string();
  }
  return c;
}

TEST(RocksDBBackendOptions, ByDefaultTheWriteBackCacheSharesManagedMemory) {
  const RocksDBStateBackendOptions o = rocksdb_backend_options(Configuration());
  EXPECT_EQ(o.write_back_cache.sizing, Sizing::kManagedMemoryShare);
  EXPECT_TRUE(o.memory.managed);
  EXPECT_EQ(o.memory.budget_bytes(), int64_t{256} << 20);  // taskmanager.memory.managed.size's default
}

TEST(RocksDBBackendOptions, ASetMaxSizeIsAFixedSizeBesideTheBudget) {
  const RocksDBStateBackendOptions o = rocksdb_backend_options(config_of({{"state.backend.rocksdb.cache.max-size", "8mb"}}));
  EXPECT_EQ(o.write_back_cache.sizing, Sizing::kFixed);
  EXPECT_EQ(o.write_back_cache.max_size_bytes, int64_t{8} << 20);
  EXPECT_EQ(o.memory.budget_bytes(), int64_t{256} << 20);
}

TEST(RocksDBBackendOptions, WithoutManagedMemoryTheCacheHasMaxSizesDefault) {
  const RocksDBStateBackendOptions o =
      rocksdb_backend_options(config_of({{"state.backend.rocksdb.memory.managed", "false"}}));
  EXPECT_EQ(o.memory.budget_bytes(), 0);
  EXPECT_EQ(o.write_back_cache.sizing, Sizing::kFixed);
  EXPECT_EQ(o.write_back_cache.max_size_bytes, int64_t{64} << 20);
}

TEST(RocksDBBackendOptions, AFixedPerTaskManagerBudgetIsSharedToo) {
  const RocksDBStateBackendOptions o =
      rocksdb_backend_options(config_of({{"state.backend.rocksdb.memory.managed", "false"},
                                         {"state.backend.rocksdb.memory.fixed-per-tm", "128mb"}}));
  EXPECT_EQ(o.memory.budget_bytes(), int64_t{128} << 20);
  EXPECT_EQ(o.write_back_cache.sizing, Sizing::kManagedMemoryShare);
}

TEST(RocksDBBackendOptions, ADisabledCacheIsOffWhateverItsSize) {
  for (const char* size : {"", "8mb"}) {
    Configuration c = config_of({{"state.backend.rocksdb.cache.enabled", "false"}});
    if (*size != '\0') {
      ASSERT_TRUE(c.set_string("state.backend.rocksdb.cache.max-size", size).is_ok());
    }
    EXPECT_EQ(rocksdb_backend_options(c).write_back_cache.sizing, Sizing::kOff) << size;
  }
}

}  // namespace
}  // namespace sluice::api
