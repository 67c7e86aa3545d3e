// The RocksDB memory, tuning and native-metric keys: defaults, accepted values, and errors that name the key and
// what it accepts.
#include <gtest/gtest.h>

#include <string>

#include "sluice/config/configuration.h"
#include "sluice/config/options.h"

namespace sluice {
namespace {

// The error of setting `key` to `value` ("" if it was accepted).
std::string error_of(const std::string& key, const std::string& value) {
  Configuration c;
  Status s = c.set_string(key, value);
  return s.is_ok() ? "" : s.to_string();
}

void expect_error(const std::string& key, const std::string& value, const std::string& expected) {
  const std::string e = error_of(key, value);
  EXPECT_NE(e.find(key), std::string::npos) << key << "=" << value << ": " << e;
  EXPECT_NE(e.find(expected), std::string::npos) << key << "=" << value << ": " << e;
}

TEST(RocksDBOptionsConfig, Defaults) {
  Configuration c;
  EXPECT_EQ(c.get(options::kRocksDBPredefinedOptions), PredefinedOptions::kDefault);
  EXPECT_TRUE(c.get(options::kRocksDBMemoryManaged));
  EXPECT_FALSE(c.get(options::kRocksDBMemoryFixedPerTm).has_value());
  EXPECT_EQ(c.get(options::kRocksDBMemoryWriteBufferRatio), 0.5);
  EXPECT_EQ(c.get(options::kRocksDBMemoryHighPrioPoolRatio), 0.1);
  EXPECT_EQ(c.get(options::kManagedMemorySize), MemorySize::of_mebibytes(256));
  for (const ConfigOption<bool>* m :
       {&options::kRocksDBMetricsBlockCacheCapacity, &options::kRocksDBMetricsBlockCacheUsage,
        &options::kRocksDBMetricsCurSizeAllMemTables, &options::kRocksDBMetricsMemTableFlushPending,
        &options::kRocksDBMetricsNumRunningFlushes, &options::kRocksDBMetricsNumRunningCompactions}) {
    EXPECT_FALSE(c.get(*m)) << m->key;
    EXPECT_EQ(m->key.rfind("state.backend.rocksdb.metrics.", 0), 0u) << m->key;
  }
}

TEST(RocksDBOptionsConfig, ParsesEveryValue) {
  Configuration c;
  const std::pair<const char*, PredefinedOptions> names[] = {
      {"default", PredefinedOptions::kDefault},
      {"SPINNING_DISK_OPTIMIZED", PredefinedOptions::kSpinningDiskOptimized},
      {"spinning_disk_optimized_high_mem", PredefinedOptions::kSpinningDiskOptimizedHighMem},
      {"FLASH_SSD_OPTIMIZED", PredefinedOptions::kFlashSsdOptimized},
      {"FLASH_SSD_OPTIMIZED_HIGH_MEM", PredefinedOptions::kFlashSsdOptimizedHighMem},
  };
  for (const auto& [text, value] : names) {
    ASSERT_TRUE(c.set_string("state.backend.rocksdb.predefined-options", text).is_ok()) << text;
    EXPECT_EQ(c.get(options::kRocksDBPredefinedOptions), value) << text;
  }
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.memory.fixed-per-tm", "64mb").is_ok());
  EXPECT_EQ(c.get(options::kRocksDBMemoryFixedPerTm), std::optional(MemorySize::of_mebibytes(64)));
  ASSERT_TRUE(c.set_string("taskmanager.memory.managed.size", "1gb").is_ok());
  EXPECT_EQ(c.get(options::kManagedMemorySize), MemorySize::of_mebibytes(1024));
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.memory.write-buffer-ratio", "0.25").is_ok());
  EXPECT_EQ(c.get(options::kRocksDBMemoryWriteBufferRatio), 0.25);
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.memory.managed", "false").is_ok());
  EXPECT_FALSE(c.get(options::kRocksDBMemoryManaged));
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.metrics.block-cache-usage", "true").is_ok());
  EXPECT_TRUE(c.get(options::kRocksDBMetricsBlockCacheUsage));
}

TEST(RocksDBOptionsConfig, BadValuesNameTheKeyAndTheAcceptedValues) {
  expect_error("state.backend.rocksdb.predefined-options", "SSD",
               "DEFAULT, SPINNING_DISK_OPTIMIZED, SPINNING_DISK_OPTIMIZED_HIGH_MEM, FLASH_SSD_OPTIMIZED, "
               "FLASH_SSD_OPTIMIZED_HIGH_MEM");
  expect_error("state.backend.rocksdb.memory.write-buffer-ratio", "1", "in (0, 1)");
  expect_error("state.backend.rocksdb.memory.write-buffer-ratio", "0", "in (0, 1)");
  expect_error("state.backend.rocksdb.memory.write-buffer-ratio", "half", "'half'");
  expect_error("state.backend.rocksdb.memory.high-prio-pool-ratio", "-0.1", "in (0, 1)");
  expect_error("state.backend.rocksdb.memory.fixed-per-tm", "0", "empty or > 0");
  expect_error("state.backend.rocksdb.memory.fixed-per-tm", "lots", "lots");
  expect_error("taskmanager.memory.managed.size", "12 parsecs", "12 parsecs");
  expect_error("state.backend.rocksdb.memory.managed", "yes", "yes");
  expect_error("state.backend.rocksdb.metrics.num-running-flushes", "on", "on");
}

}  // namespace
}  // namespace sluice
