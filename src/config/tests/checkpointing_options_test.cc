// The checkpointing and restart-strategy options: defaults, parsing, Flink 1.x aliases, ranges, and the
// effective values derived from several options (derived_options.h).
#include <gtest/gtest.h>

#include "log_capture.h"
#include "sluice/config/configuration.h"
#include "sluice/config/derived_options.h"
#include "sluice/config/options.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
using testing::LogCapture;

Configuration from_yaml(std::string_view yaml) {
  Result<Configuration> c = Configuration::from_yaml_string(yaml);
  EXPECT_TRUE(c.is_ok()) << c.status().to_string();
  return c.is_ok() ? *c : Configuration();
}

TEST(CheckpointingOptions, Defaults) {
  Configuration c;
  EXPECT_EQ(c.get(options::kCheckpointingInterval), milliseconds(0));
  EXPECT_EQ(c.get(options::kCheckpointingMode), CheckpointingMode::kExactlyOnce);
  EXPECT_EQ(c.get(options::kCheckpointingTimeout), std::chrono::minutes(10));
  EXPECT_EQ(c.get(options::kCheckpointingMinPause), milliseconds(0));
  EXPECT_EQ(c.get(options::kMaxConcurrentCheckpoints), 1);
  EXPECT_EQ(c.get(options::kTolerableFailedCheckpoints), 0);
  EXPECT_EQ(c.get(options::kExternalizedCheckpointRetention),
            ExternalizedCheckpointRetention::kNoExternalizedCheckpoints);
  EXPECT_EQ(c.get(options::kCheckpointsDirectory), "");
  EXPECT_EQ(c.get(options::kMaxRetainedCheckpoints), 1);
  EXPECT_EQ(c.get(options::kCheckpointDataInlineThreshold), MemorySize::of_kibibytes(20));
  EXPECT_TRUE(c.get(options::kCheckpointsAfterTasksFinish));
  EXPECT_EQ(c.get(options::kCheckpointStorage), std::nullopt);
  EXPECT_EQ(c.get(options::kStateRecoveryPath), "");
  EXPECT_EQ(c.get(options::kStateRecoveryClaimMode), RecoveryClaimMode::kNoClaim);
  EXPECT_FALSE(c.get(options::kIncrementalCheckpoints));
  EXPECT_FALSE(checkpointing_enabled(c));
  EXPECT_EQ(checkpoint_storage_type(c).value(), CheckpointStorageType::kJobManager);
}

TEST(RestartStrategyOptions, Defaults) {
  Configuration c;
  EXPECT_EQ(c.get(options::kRestartStrategyType), std::nullopt);
  EXPECT_EQ(c.get(options::kFixedDelayAttempts), 1);
  EXPECT_EQ(c.get(options::kFixedDelayDelay), std::chrono::seconds(1));
  EXPECT_EQ(c.get(options::kFailureRateMaxFailuresPerInterval), 1);
  EXPECT_EQ(c.get(options::kFailureRateInterval), std::chrono::minutes(1));
  EXPECT_EQ(c.get(options::kFailureRateDelay), std::chrono::seconds(1));
  EXPECT_EQ(c.get(options::kExponentialDelayInitialBackoff), std::chrono::seconds(1));
  EXPECT_EQ(c.get(options::kExponentialDelayMaxBackoff), std::chrono::minutes(1));
  EXPECT_EQ(c.get(options::kExponentialDelayBackoffMultiplier), 1.5);
  EXPECT_EQ(c.get(options::kExponentialDelayResetBackoffThreshold), std::chrono::hours(1));
  EXPECT_EQ(c.get(options::kExponentialDelayJitterFactor), 0.1);
  EXPECT_EQ(c.get(options::kExponentialDelayAttemptsBeforeResetBackoff), 2147483647);
}

TEST(CheckpointingOptions, ParseFromYaml) {
  Configuration c = from_yaml(R"(
execution:
  checkpointing:
    interval: 1 s
    mode: exactly_once
    timeout: 2 min
    min-pause: 500 ms
    max-concurrent-checkpoints: 2
    tolerable-failed-checkpoints: 3
    externalized-checkpoint-retention: retain_on_cancellation
    dir: /tmp/sluice-checkpoints
    num-retained: 5
    data-inline-threshold: 1kb
    checkpoints-after-tasks-finish: false
    storage: filesystem
  state-recovery:
    path: latest
)");
  EXPECT_EQ(c.get(options::kCheckpointingInterval), milliseconds(1000));
  EXPECT_EQ(c.get(options::kCheckpointingTimeout), std::chrono::minutes(2));
  EXPECT_EQ(c.get(options::kCheckpointingMinPause), milliseconds(500));
  EXPECT_EQ(c.get(options::kMaxConcurrentCheckpoints), 2);
  EXPECT_EQ(c.get(options::kTolerableFailedCheckpoints), 3);
  EXPECT_EQ(c.get(options::kExternalizedCheckpointRetention), ExternalizedCheckpointRetention::kRetainOnCancellation);
  EXPECT_EQ(c.get(options::kCheckpointsDirectory), "/tmp/sluice-checkpoints");
  EXPECT_EQ(c.get(options::kMaxRetainedCheckpoints), 5);
  EXPECT_EQ(c.get(options::kCheckpointDataInlineThreshold), MemorySize::of_kibibytes(1));
  EXPECT_FALSE(c.get(options::kCheckpointsAfterTasksFinish));
  EXPECT_EQ(c.get(options::kCheckpointStorage), CheckpointStorageType::kFileSystem);
  EXPECT_EQ(c.get(options::kStateRecoveryPath), "latest");
  EXPECT_TRUE(checkpointing_enabled(c));
  auto m = c.to_map();
  EXPECT_EQ(m["execution.checkpointing.mode"], "EXACTLY_ONCE");
  EXPECT_EQ(m["execution.checkpointing.externalized-checkpoint-retention"], "RETAIN_ON_CANCELLATION");
  EXPECT_EQ(m["execution.checkpointing.storage"], "FILESYSTEM");
  EXPECT_EQ(m["execution.checkpointing.interval"], "1s");
}

TEST(RestartStrategyOptions, ParseDoublesAndOptionalType) {
  Configuration c;
  ASSERT_TRUE(c.set_string("restart-strategy.exponential-delay.backoff-multiplier", "2").is_ok());
  ASSERT_TRUE(c.set_string("restart-strategy.exponential-delay.jitter-factor", "0.25").is_ok());
  ASSERT_TRUE(c.set_string("restart-strategy.type", "Exponential-Delay").is_ok());
  EXPECT_EQ(c.get(options::kExponentialDelayBackoffMultiplier), 2.0);
  EXPECT_EQ(c.get(options::kExponentialDelayJitterFactor), 0.25);
  EXPECT_EQ(c.get(options::kRestartStrategyType), RestartStrategyType::kExponentialDelay);
  EXPECT_EQ(c.to_map()["restart-strategy.type"], "EXPONENTIAL-DELAY");
  EXPECT_EQ(c.to_map()["restart-strategy.exponential-delay.backoff-multiplier"], "2");
  // An empty value unsets the type again: the default rule applies.
  ASSERT_TRUE(c.apply_dynamic_property("restart-strategy.type=").is_ok());
  EXPECT_EQ(c.get(options::kRestartStrategyType), std::nullopt);
  EXPECT_EQ(restart_strategy_type(c, /*checkpointing_enabled=*/false), RestartStrategyType::kNone);
}

TEST(CheckpointingOptions, DeprecatedFlinkOneKeysWarn) {
  LogCapture log;
  Configuration c = from_yaml(R"(
state.checkpoints.dir: /data/chk
state.checkpoints.num-retained: 3
state.checkpoint-storage: jobmanager
state.storage.fs.memory-threshold: 4kb
execution.checkpointing.checkpoints-after-tasks-finish.enabled: false
execution.savepoint.path: /data/sp-1
restart-strategy: failure-rate
)");
  EXPECT_EQ(c.get(options::kCheckpointsDirectory), "/data/chk");
  EXPECT_EQ(c.get(options::kMaxRetainedCheckpoints), 3);
  EXPECT_EQ(c.get(options::kCheckpointStorage), CheckpointStorageType::kJobManager);
  EXPECT_EQ(c.get(options::kCheckpointDataInlineThreshold), MemorySize::of_kibibytes(4));
  EXPECT_FALSE(c.get(options::kCheckpointsAfterTasksFinish));
  EXPECT_EQ(c.get(options::kStateRecoveryPath), "/data/sp-1");
  EXPECT_EQ(c.get(options::kRestartStrategyType), RestartStrategyType::kFailureRate);
  const std::string text = log.text();
  for (const char* pair : {"'state.checkpoints.dir' is deprecated; use 'execution.checkpointing.dir'",
                           "'state.checkpoints.num-retained' is deprecated; use 'execution.checkpointing.num-retained'",
                           "'state.checkpoint-storage' is deprecated; use 'execution.checkpointing.storage'",
                           "'state.storage.fs.memory-threshold' is deprecated; use "
                           "'execution.checkpointing.data-inline-threshold'",
                           "'execution.savepoint.path' is deprecated; use 'execution.state-recovery.path'",
                           "'restart-strategy' is deprecated; use 'restart-strategy.type'"}) {
    EXPECT_NE(text.find(pair), std::string::npos) << pair << "\n" << text;
  }
  // Stored under the canonical keys only.
  auto m = c.to_map();
  EXPECT_EQ(m.count("state.checkpoints.dir"), 0u);
  EXPECT_EQ(m["execution.checkpointing.dir"], "/data/chk");
  EXPECT_TRUE(c.contains("state.checkpoints.dir"));
}

TEST(CheckpointingOptions, CanonicalKeyWinsOverItsAlias) {
  LogCapture log;
  Configuration c = from_yaml("execution.checkpointing.dir: /new\nstate.checkpoints.dir: /old\n");
  EXPECT_EQ(c.get(options::kCheckpointsDirectory), "/new");
  EXPECT_NE(log.text().find("ignoring deprecated key 'state.checkpoints.dir'"), std::string::npos) << log.text();
}

struct Rejected {
  const char* key;
  const char* value;
  const char* message;
};

TEST(CheckpointingOptions, RangesAndAcceptedValues) {
  const Rejected cases[] = {
      {"execution.checkpointing.interval", "5ms",
       "execution.checkpointing.interval: 5ms is out of range (expected 0 (disabled) or >= 10ms)"},
      {"execution.checkpointing.timeout", "9ms",
       "execution.checkpointing.timeout: 9ms is out of range (expected >= 10ms)"},
      {"execution.checkpointing.max-concurrent-checkpoints", "0",
       "execution.checkpointing.max-concurrent-checkpoints: 0 is out of range (expected >= 1)"},
      {"execution.checkpointing.tolerable-failed-checkpoints", "-1",
       "execution.checkpointing.tolerable-failed-checkpoints: -1 is out of range (expected >= 0)"},
      {"execution.checkpointing.num-retained", "0",
       "execution.checkpointing.num-retained: 0 is out of range (expected >= 1)"},
      {"execution.checkpointing.data-inline-threshold", "2mb",
       "execution.checkpointing.data-inline-threshold: 2mb is out of range (expected <= 1mb)"},
      {"execution.checkpointing.mode", "AT_MOST_ONCE",
       "execution.checkpointing.mode: 'AT_MOST_ONCE' is not an accepted value (expected one of EXACTLY_ONCE, "
       "AT_LEAST_ONCE, case-insensitive)"},
      {"execution.checkpointing.externalized-checkpoint-retention", "keep",
       "execution.checkpointing.externalized-checkpoint-retention: 'keep' is not an accepted value (expected one "
       "of NO_EXTERNALIZED_CHECKPOINTS, DELETE_ON_CANCELLATION, RETAIN_ON_CANCELLATION, case-insensitive)"},
      {"execution.checkpointing.storage", "rocksdb",
       "execution.checkpointing.storage: 'rocksdb' is not an accepted value (expected one of JOBMANAGER, "
       "FILESYSTEM, case-insensitive)"},
      {"restart-strategy.type", "always",
       "restart-strategy.type: 'always' is not an accepted value (expected one of NONE, OFF, DISABLE, FIXED-DELAY, "
       "FIXEDDELAY, FAILURE-RATE, FAILURERATE, EXPONENTIAL-DELAY, EXPONENTIALDELAY, case-insensitive)"},
      {"restart-strategy.fixed-delay.attempts", "-1",
       "restart-strategy.fixed-delay.attempts: -1 is out of range (expected >= 0)"},
      {"restart-strategy.failure-rate.max-failures-per-interval", "0",
       "restart-strategy.failure-rate.max-failures-per-interval: 0 is out of range (expected >= 1)"},
      {"restart-strategy.failure-rate.failure-rate-interval", "0",
       "restart-strategy.failure-rate.failure-rate-interval: 0ms is out of range (expected >= 1ms)"},
      {"restart-strategy.exponential-delay.initial-backoff", "0 s",
       "restart-strategy.exponential-delay.initial-backoff: 0ms is out of range (expected >= 1ms)"},
      {"restart-strategy.exponential-delay.backoff-multiplier", "1",
       "restart-strategy.exponential-delay.backoff-multiplier: 1 is out of range (expected > 1)"},
      {"restart-strategy.exponential-delay.backoff-multiplier", "two",
       "restart-strategy.exponential-delay.backoff-multiplier: 'two' is not a number (expected a decimal such as "
       "1.5 or 0.1)"},
      {"restart-strategy.exponential-delay.jitter-factor", "1.01",
       "restart-strategy.exponential-delay.jitter-factor: 1.01 is out of range (expected in [0, 1])"},
      {"restart-strategy.exponential-delay.jitter-factor", "-0.1",
       "restart-strategy.exponential-delay.jitter-factor: -0.1 is out of range (expected in [0, 1])"},
      {"restart-strategy.exponential-delay.attempts-before-reset-backoff", "0",
       "restart-strategy.exponential-delay.attempts-before-reset-backoff: 0 is out of range (expected >= 1)"},
      {"restart-strategy.max-identical-failures", "-1",
       "restart-strategy.max-identical-failures: -1 is out of range (expected >= 0)"},
  };
  for (const Rejected& r : cases) {
    Configuration c;
    Status s = c.set_string(r.key, r.value);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << r.key << "=" << r.value;
    EXPECT_EQ(s.message(), r.message);
    EXPECT_FALSE(c.contains(r.key)) << r.key;
  }
}

TEST(CheckpointingOptions, BoundaryValuesAreAccepted) {
  Configuration c;
  for (auto [key, value] : std::initializer_list<std::pair<const char*, const char*>>{
           {"execution.checkpointing.interval", "0"},
           {"execution.checkpointing.interval", "10ms"},
           {"execution.checkpointing.timeout", "10ms"},
           {"execution.checkpointing.tolerable-failed-checkpoints", "0"},
           {"execution.checkpointing.data-inline-threshold", "1mb"},
           {"execution.checkpointing.data-inline-threshold", "0"},
           {"execution.checkpointing.externalized-checkpoint-retention", "delete_on_cancellation"},
           {"restart-strategy.fixed-delay.attempts", "0"},
           {"restart-strategy.fixed-delay.delay", "0"},
           {"restart-strategy.exponential-delay.jitter-factor", "0"},
           {"restart-strategy.exponential-delay.jitter-factor", "1"},
           {"restart-strategy.exponential-delay.backoff-multiplier", "1.0001"},
       }) {
    EXPECT_TRUE(c.set_string(key, value).is_ok()) << key << "=" << value;
  }
}

TEST(DerivedOptions, CheckpointStorageFollowsTheDirectory) {
  Configuration c;
  EXPECT_EQ(checkpoint_storage_type(c).value(), CheckpointStorageType::kJobManager);
  c.set(options::kCheckpointsDirectory, std::string("/tmp/chk"));
  EXPECT_EQ(checkpoint_storage_type(c).value(), CheckpointStorageType::kFileSystem);
  // Set explicitly: JOBMANAGER stays JOBMANAGER even with a directory.
  c.set(options::kCheckpointStorage, std::optional(CheckpointStorageType::kJobManager));
  EXPECT_EQ(checkpoint_storage_type(c).value(), CheckpointStorageType::kJobManager);
  // FILESYSTEM without a directory is an error that names both keys.
  Configuration no_dir;
  no_dir.set(options::kCheckpointStorage, std::optional(CheckpointStorageType::kFileSystem));
  auto r = checkpoint_storage_type(no_dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(),
            "execution.checkpointing.storage: FILESYSTEM needs a checkpoint directory, but "
            "execution.checkpointing.dir is empty");
}

TEST(DerivedOptions, StateBackendTypeAndTheSeedsLegacyNames) {
  auto with = [](std::string_view backend, std::string_view dir) {
    Configuration c;
    EXPECT_TRUE(c.set_string("state.backend.type", backend).is_ok()) << backend;
    if (!dir.empty()) c.set(options::kCheckpointsDirectory, std::string(dir));
    return c;
  };
  // Flink's names choose the backend only; the storage follows the directory.
  EXPECT_EQ(state_backend_kind_of(Configuration()), StateBackendType::kHashMap);
  EXPECT_EQ(state_backend_kind_of(with("rocksdb", "")), StateBackendType::kRocksDB);
  EXPECT_EQ(checkpoint_storage_type(with("rocksdb", "")).value(), CheckpointStorageType::kJobManager);
  EXPECT_EQ(checkpoint_storage_type(with("RocksDB", "/tmp/chk")).value(), CheckpointStorageType::kFileSystem);
  // Legacy names choose both: MemoryStateBackend = heap + JobManager storage (even with a directory) ...
  for (std::string_view name : {"jobmanager", "MemoryStateBackend"}) {
    Configuration c = with(name, "/tmp/chk");
    EXPECT_EQ(state_backend_kind_of(c), StateBackendType::kHashMap) << name;
    EXPECT_EQ(checkpoint_storage_type(c).value(), CheckpointStorageType::kJobManager) << name;
  }
  // ... FsStateBackend = heap + filesystem storage, RocksDBStateBackend = RocksDB + filesystem storage.
  for (std::string_view name : {"filesystem", "FsStateBackend", "RocksDBStateBackend"}) {
    Configuration c = with(name, "/tmp/chk");
    EXPECT_EQ(state_backend_kind_of(c),
              name == "RocksDBStateBackend" ? StateBackendType::kRocksDB : StateBackendType::kHashMap)
        << name;
    EXPECT_EQ(checkpoint_storage_type(c).value(), CheckpointStorageType::kFileSystem) << name;
    auto no_dir = checkpoint_storage_type(with(name, ""));
    ASSERT_FALSE(no_dir.is_ok()) << name;
    EXPECT_NE(no_dir.status().message().find("execution.checkpointing.dir is empty"), std::string::npos)
        << no_dir.status().to_string();
  }
  // The canonical text of a legacy value is its first name.
  EXPECT_EQ(with("MemoryStateBackend", "").to_map().at("state.backend.type"), "JOBMANAGER");
  // A legacy name and a contradicting explicit storage: an error naming both keys.
  Configuration both = with("FsStateBackend", "/tmp/chk");
  both.set(options::kCheckpointStorage, std::optional(CheckpointStorageType::kJobManager));
  auto r = checkpoint_storage_type(both);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("state.backend.type"), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().message().find("execution.checkpointing.storage is JOBMANAGER"), std::string::npos)
      << r.status().to_string();
  // An agreeing explicit storage is fine.
  Configuration agree = with("jobmanager", "");
  agree.set(options::kCheckpointStorage, std::optional(CheckpointStorageType::kJobManager));
  EXPECT_EQ(checkpoint_storage_type(agree).value(), CheckpointStorageType::kJobManager);
}

TEST(DerivedOptions, RocksDBLocalDir) {
  Configuration c;
  EXPECT_EQ(c.get(options::kRocksDBLocalDir), "");
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.localdir", "/var/tmp/sluice-rocksdb").is_ok());
  EXPECT_EQ(c.get(options::kRocksDBLocalDir), "/var/tmp/sluice-rocksdb");
  for (const char* local : {"rocksdb", "./a:b", "/x/s3://y", "a", "1x:/y"}) {
    EXPECT_TRUE(c.set_string("state.backend.rocksdb.localdir", local).is_ok()) << local;
  }
  // A URI would otherwise become a local folder named after its scheme ("./gs:/b/r").
  for (const char* uri : {"gs://b/r", "s3://b/r", "s3:/b", "file:///tmp/r", "hdfs:x"}) {
    Status s = c.set_string("state.backend.rocksdb.localdir", uri);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << uri;
    EXPECT_NE(s.message().find("state.backend.rocksdb.localdir"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("not a URI"), std::string::npos) << s.message();
  }
}

TEST(DerivedOptions, IoTmpDirsAreLocalFolders) {
  Configuration c;
  ASSERT_TRUE(c.set_string("io.tmp.dirs", "/a:/b").is_ok());
  EXPECT_EQ(c.get(options::kIoTmpDirs), "/a:/b");
  for (const char* uri : {"hdfs:///t", "/a:s3://b/t", "file:///tmp"}) {
    Status s = c.set_string("io.tmp.dirs", uri);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << uri;
    EXPECT_NE(s.message().find("io.tmp.dirs"), std::string::npos) << s.message();
  }
}

TEST(DerivedOptions, RocksDBWriteBackCache) {
  Configuration c;
  EXPECT_TRUE(c.get(options::kRocksDBCacheEnabled));  // on by default; false is the documented way off
  EXPECT_EQ(c.get(options::kRocksDBCacheMaxSize).bytes, 64u << 20);
  EXPECT_FALSE(c.contains("state.backend.rocksdb.cache.max-size"));  // unset: a share of managed memory
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.cache.enabled", "false").is_ok());
  EXPECT_FALSE(c.get(options::kRocksDBCacheEnabled));
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.cache.max-size", "8 mb").is_ok());
  EXPECT_TRUE(c.contains("state.backend.rocksdb.cache.max-size"));
  EXPECT_EQ(c.get(options::kRocksDBCacheMaxSize).bytes, 8u << 20);
  Status tiny = c.set_string("state.backend.rocksdb.cache.max-size", "1kb");
  ASSERT_FALSE(tiny.is_ok());
  EXPECT_NE(tiny.message().find("state.backend.rocksdb.cache.max-size"), std::string::npos) << tiny.to_string();
  EXPECT_NE(tiny.message().find(">= 4kb"), std::string::npos) << tiny.to_string();
}

TEST(DerivedOptions, CheckpointingEnabledAndRestartDefault) {
  Configuration c;
  EXPECT_FALSE(checkpointing_enabled(c));
  EXPECT_EQ(restart_strategy_type(c, checkpointing_enabled(c)), RestartStrategyType::kNone);
  ASSERT_TRUE(c.set_string("execution.checkpointing.interval", "1 s").is_ok());
  EXPECT_TRUE(checkpointing_enabled(c));
  EXPECT_EQ(restart_strategy_type(c, checkpointing_enabled(c)), RestartStrategyType::kExponentialDelay);
  ASSERT_TRUE(c.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_EQ(restart_strategy_type(c, true), RestartStrategyType::kFixedDelay);
  ASSERT_TRUE(c.set_string("execution.checkpointing.interval", "0").is_ok());
  EXPECT_FALSE(checkpointing_enabled(c));
}

TEST(CheckpointingOptions, IncrementalAndClaimModeWithFlinkNamesAndAliases) {
  Configuration c;
  ASSERT_TRUE(c.set_string("state.backend.incremental", "true").is_ok());  // Flink 1.x name
  EXPECT_TRUE(c.get(options::kIncrementalCheckpoints));
  ASSERT_TRUE(c.set_string("execution.checkpointing.incremental", "false").is_ok());
  EXPECT_FALSE(c.get(options::kIncrementalCheckpoints));
  ASSERT_TRUE(c.set_string("execution.state-recovery.claim-mode", "CLAIM").is_ok());
  EXPECT_EQ(c.get(options::kStateRecoveryClaimMode), RecoveryClaimMode::kClaim);
  // Flink 1.15-1.19 name: ignored once the canonical key is set (the canonical key wins in any order) ...
  ASSERT_TRUE(c.set_string("execution.savepoint-restore-mode", "no_claim").is_ok());
  EXPECT_EQ(c.get(options::kStateRecoveryClaimMode), RecoveryClaimMode::kClaim);
  Configuration alone;  // ... and read on its own.
  ASSERT_TRUE(alone.set_string("execution.savepoint-restore-mode", "no_claim").is_ok());
  EXPECT_EQ(alone.get(options::kStateRecoveryClaimMode), RecoveryClaimMode::kNoClaim);
  Status bad = c.set_string("execution.state-recovery.claim-mode", "LEGACY");
  EXPECT_FALSE(bad.is_ok());
  EXPECT_NE(bad.message().find("claim-mode"), std::string::npos) << bad.to_string();
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(UnalignedCheckpointOptions, DefaultsAndFlinkAliases) {
  Configuration c;
  EXPECT_FALSE(c.get(options::kUnalignedCheckpoints));
  EXPECT_EQ(c.get(options::kAlignedCheckpointTimeout), std::chrono::milliseconds(0));
  EXPECT_TRUE(validate_unaligned_checkpoints(c).is_ok());

  Configuration flink = from_yaml("execution.checkpointing.unaligned: true\n"
                                  "execution.checkpointing.alignment-timeout: 30 s\n");
  EXPECT_TRUE(flink.get(options::kUnalignedCheckpoints));
  EXPECT_EQ(flink.get(options::kAlignedCheckpointTimeout), std::chrono::seconds(30));

  Configuration current = from_yaml("execution.checkpointing.unaligned.enabled: true\n"
                                    "execution.checkpointing.aligned-checkpoint-timeout: 100ms\n");
  EXPECT_TRUE(current.get(options::kUnalignedCheckpoints));
  EXPECT_EQ(current.get(options::kAlignedCheckpointTimeout), std::chrono::milliseconds(100));
  EXPECT_TRUE(validate_unaligned_checkpoints(current).is_ok());
  Configuration negative;
  EXPECT_FALSE(negative.set_string("execution.checkpointing.aligned-checkpoint-timeout", "-1ms").is_ok());
}

TEST(UnalignedCheckpointOptions, NeedOneCheckpointAtATime) {
  Configuration c;
  ASSERT_TRUE(c.set_string("execution.checkpointing.unaligned.enabled", "true").is_ok());
  ASSERT_TRUE(c.set_string("execution.checkpointing.max-concurrent-checkpoints", "2").is_ok());
  Status s = validate_unaligned_checkpoints(c);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("execution.checkpointing.unaligned.enabled"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("execution.checkpointing.max-concurrent-checkpoints = 1, got 2"), std::string::npos)
      << s.message();
  // The same concurrency is fine with aligned checkpoints.
  ASSERT_TRUE(c.set_string("execution.checkpointing.unaligned.enabled", "false").is_ok());
  EXPECT_TRUE(validate_unaligned_checkpoints(c).is_ok());
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// Options of a mode that is off are refused, never ignored: unaligned and AT_LEAST_ONCE without checkpointing,
// an alignment timeout without unaligned checkpoints.
TEST(ModeDependentOptions, RefusedWhenTheirModeIsOff) {
  Configuration none;
  EXPECT_TRUE(validate_mode_dependent_options(none).is_ok());

  auto refused = [](const Configuration& c, const std::string& needle) {
    Status s = validate_mode_dependent_options(c);
    ASSERT_FALSE(s.is_ok()) << needle;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  Configuration unaligned_off = from_yaml("execution.checkpointing.interval: 0\n"
                                          "execution.checkpointing.unaligned.enabled: true\n");
  refused(unaligned_off, "execution.checkpointing.unaligned.enabled = true has no effect while checkpointing is off");
  Configuration alo_off = from_yaml("execution.checkpointing.mode: AT_LEAST_ONCE\n");  // interval unset: off
  refused(alo_off, "execution.checkpointing.mode = AT_LEAST_ONCE has no effect while checkpointing is off");
  Configuration timeout_aligned = from_yaml("execution.checkpointing.interval: 1 s\n"
                                            "execution.checkpointing.aligned-checkpoint-timeout: 100ms\n");
  refused(timeout_aligned, "execution.checkpointing.aligned-checkpoint-timeout is set (100ms) but has no effect");
  Configuration timeout_flink_key = from_yaml("execution.checkpointing.interval: 1 s\n"
                                              "execution.checkpointing.alignment-timeout: 0ms\n");
  refused(timeout_flink_key, "aligned-checkpoint-timeout is set (0ms)");

  // The same options where they act are fine; EXACTLY_ONCE without checkpointing is the default anyway.
  Configuration ok = from_yaml("execution.checkpointing.interval: 1 s\n"
                               "execution.checkpointing.unaligned.enabled: true\n"
                               "execution.checkpointing.aligned-checkpoint-timeout: 100ms\n");
  EXPECT_TRUE(validate_mode_dependent_options(ok).is_ok());
  Configuration alo = from_yaml("execution.checkpointing.interval: 1 s\nexecution.checkpointing.mode: AT_LEAST_ONCE\n");
  EXPECT_TRUE(validate_mode_dependent_options(alo).is_ok());
  Configuration exactly_once_off = from_yaml("execution.checkpointing.mode: EXACTLY_ONCE\n");
  EXPECT_TRUE(validate_mode_dependent_options(exactly_once_off).is_ok());
}

}  // namespace
}  // namespace sluice
