// Every configuration option Sluice knows, with its documented default, and the registry over them.
//
// Keys are Flink's (2.x names canonical, 1.x names as deprecated aliases). Each option has a row in
// docs/configuration.md; a unit test fails when one is missing. To add an option: declare it here, define it
// in src/config/options.cc, add it to all_options() there, and document it.
//
// Thread-safety: all of this is immutable after static initialization.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/config/config_option.h"

namespace sluice {

// state.backend.type. Flink's shortcut names, plus Flink 1.x's legacy backend names, each of which also selects
// a checkpoint storage (derived_options.h: state_backend_kind_of / checkpoint_storage_type):
//   JOBMANAGER, MEMORYSTATEBACKEND   = HASHMAP + JobManager checkpoint storage (Flink's MemoryStateBackend)
//   FILESYSTEM, FSSTATEBACKEND       = HASHMAP + filesystem checkpoint storage (FsStateBackend)
//   ROCKSDBSTATEBACKEND              = ROCKSDB + filesystem checkpoint storage (RocksDBStateBackend)
enum class StateBackendType { kHashMap, kRocksDB, kLegacyJobManager, kLegacyFileSystem, kLegacyRocksDB };

template <>
struct EnumOptionNames<StateBackendType> {
  static constexpr std::array<std::pair<StateBackendType, std::string_view>, 7> kValues{{
      {StateBackendType::kHashMap, "HASHMAP"},
      {StateBackendType::kRocksDB, "ROCKSDB"},
      {StateBackendType::kLegacyJobManager, "JOBMANAGER"},
      {StateBackendType::kLegacyJobManager, "MEMORYSTATEBACKEND"},
      {StateBackendType::kLegacyFileSystem, "FILESYSTEM"},
      {StateBackendType::kLegacyFileSystem, "FSSTATEBACKEND"},
      {StateBackendType::kLegacyRocksDB, "ROCKSDBSTATEBACKEND"},
  }};
};

// state.backend.rocksdb.timer-service.factory: where the RocksDB backend keeps timers (Flink's
// PriorityQueueStateType).
enum class TimerServiceFactory { kRocksDB, kHeap };

template <>
struct EnumOptionNames<TimerServiceFactory> {
  static constexpr std::array<std::pair<TimerServiceFactory, std::string_view>, 2> kValues{{
      {TimerServiceFactory::kRocksDB, "ROCKSDB"},
      {TimerServiceFactory::kHeap, "HEAP"},
  }};
};

// state.backend.rocksdb.predefined-options: Flink's PredefinedOptions profiles plus Sluice's
// FLASH_SSD_OPTIMIZED_HIGH_MEM (what each sets: docs/state-backends.md).
enum class PredefinedOptions {
  kDefault,
  kSpinningDiskOptimized,
  kSpinningDiskOptimizedHighMem,
  kFlashSsdOptimized,
  kFlashSsdOptimizedHighMem
};

template <>
struct EnumOptionNames<PredefinedOptions> {
  static constexpr std::array<std::pair<PredefinedOptions, std::string_view>, 5> kValues{{
      {PredefinedOptions::kDefault, "DEFAULT"},
      {PredefinedOptions::kSpinningDiskOptimized, "SPINNING_DISK_OPTIMIZED"},
      {PredefinedOptions::kSpinningDiskOptimizedHighMem, "SPINNING_DISK_OPTIMIZED_HIGH_MEM"},
      {PredefinedOptions::kFlashSsdOptimized, "FLASH_SSD_OPTIMIZED"},
      {PredefinedOptions::kFlashSsdOptimizedHighMem, "FLASH_SSD_OPTIMIZED_HIGH_MEM"},
  }};
};

// execution.checkpointing.mode. EXACTLY_ONCE: a task with several input channels aligns barriers (blocks a
// channel that delivered barrier n until n arrived on all). AT_LEAST_ONCE: it only tracks them (snapshots when
// n arrived on every open channel, never blocks): records after barrier n on one channel are processed before
// checkpoint n is taken, so a restore may replay them - duplicates, never losses. A job whose tasks all have
// one input channel (forward edges only) is exactly-once in both modes.
enum class CheckpointingMode { kExactlyOnce, kAtLeastOnce };

template <>
struct EnumOptionNames<CheckpointingMode> {
  static constexpr std::array<std::pair<CheckpointingMode, std::string_view>, 2> kValues{{
      {CheckpointingMode::kExactlyOnce, "EXACTLY_ONCE"},
      {CheckpointingMode::kAtLeastOnce, "AT_LEAST_ONCE"},
  }};
};

// execution.runtime-mode (Flink's RuntimeExecutionMode; docs/batch.md). STREAMING: pipelined exchanges,
// checkpoints when enabled. BATCH: every source must be bounded; the job runs in stages separated by blocking
// exchanges written to local disk, keyed operators read their input sorted by key, no checkpoints. AUTOMATIC:
// BATCH when every source is bounded, else STREAMING.
enum class RuntimeExecutionMode { kStreaming, kBatch, kAutomatic };

template <>
struct EnumOptionNames<RuntimeExecutionMode> {
  static constexpr std::array<std::pair<RuntimeExecutionMode, std::string_view>, 3> kValues{{
      {RuntimeExecutionMode::kStreaming, "STREAMING"},
      {RuntimeExecutionMode::kBatch, "BATCH"},
      {RuntimeExecutionMode::kAutomatic, "AUTOMATIC"},
  }};
};

// execution.checkpointing.externalized-checkpoint-retention: what happens to the retained checkpoints of a
// job that ends. Every mode deletes them when the job FINISHES; they differ on cancel and failure:
//   NO_EXTERNALIZED_CHECKPOINTS  deleted on cancel and on failure
//   DELETE_ON_CANCELLATION       deleted on cancel, kept on failure
//   RETAIN_ON_CANCELLATION       kept on cancel and on failure
// A process that dies deletes nothing.
enum class ExternalizedCheckpointRetention { kNoExternalizedCheckpoints, kDeleteOnCancellation, kRetainOnCancellation };

// execution.state-recovery.claim-mode (Flink's RecoveryClaimMode): who owns the checkpoint a job restores from.
//   NO_CLAIM (default)  the user: the job never deletes it; its first checkpoint is full (refers to none of
//                       the restored checkpoint's files)
//   CLAIM               the job: it may refer to the restored files and deletes the checkpoint once subsumed
enum class RecoveryClaimMode { kNoClaim, kClaim };

template <>
struct EnumOptionNames<RecoveryClaimMode> {
  static constexpr std::array<std::pair<RecoveryClaimMode, std::string_view>, 2> kValues{{
      {RecoveryClaimMode::kNoClaim, "NO_CLAIM"},
      {RecoveryClaimMode::kClaim, "CLAIM"},
  }};
};

template <>
struct EnumOptionNames<ExternalizedCheckpointRetention> {
  static constexpr std::array<std::pair<ExternalizedCheckpointRetention, std::string_view>, 3> kValues{{
      {ExternalizedCheckpointRetention::kNoExternalizedCheckpoints, "NO_EXTERNALIZED_CHECKPOINTS"},
      {ExternalizedCheckpointRetention::kDeleteOnCancellation, "DELETE_ON_CANCELLATION"},
      {ExternalizedCheckpointRetention::kRetainOnCancellation, "RETAIN_ON_CANCELLATION"},
  }};
};

// execution.checkpointing.storage: where completed checkpoints live. Flink's shortcut names.
enum class CheckpointStorageType { kJobManager, kFileSystem };

template <>
struct EnumOptionNames<CheckpointStorageType> {
  static constexpr std::array<std::pair<CheckpointStorageType, std::string_view>, 2> kValues{{
      {CheckpointStorageType::kJobManager, "JOBMANAGER"},
      {CheckpointStorageType::kFileSystem, "FILESYSTEM"},
  }};
};

// restart-strategy.type. Several names per strategy, as Flink accepts them; the first is the canonical one.
enum class RestartStrategyType { kNone, kFixedDelay, kFailureRate, kExponentialDelay };

template <>
struct EnumOptionNames<RestartStrategyType> {
  static constexpr std::array<std::pair<RestartStrategyType, std::string_view>, 9> kValues{{
      {RestartStrategyType::kNone, "NONE"},
      {RestartStrategyType::kNone, "OFF"},
      {RestartStrategyType::kNone, "DISABLE"},
      {RestartStrategyType::kFixedDelay, "FIXED-DELAY"},
      {RestartStrategyType::kFixedDelay, "FIXEDDELAY"},
      {RestartStrategyType::kFailureRate, "FAILURE-RATE"},
      {RestartStrategyType::kFailureRate, "FAILURERATE"},
      {RestartStrategyType::kExponentialDelay, "EXPONENTIAL-DELAY"},
      {RestartStrategyType::kExponentialDelay, "EXPONENTIALDELAY"},
  }};
};

// jobmanager.execution.failover-strategy: what restarts when a task fails.
enum class FailoverStrategy { kFull, kRegion };

template <>
struct EnumOptionNames<FailoverStrategy> {
  static constexpr std::array<std::pair<FailoverStrategy, std::string_view>, 2> kValues{{
      {FailoverStrategy::kFull, "full"},
      {FailoverStrategy::kRegion, "region"},
  }};
};

namespace options {

// parallelism.default (Integer, 1, >= 1): parallelism of operators that set none.
extern const ConfigOption<int32_t> kDefaultParallelism;
// pipeline.max-parallelism (Integer, -1 = derived from the parallelism as DESIGN.md section 3; else in
// [1, 32768]): number of key groups.
extern const ConfigOption<int32_t> kMaxParallelism;
// pipeline.name (String, ""): the job name; empty means the name given to execute().
extern const ConfigOption<std::string> kPipelineName;
// $internal.pipeline.job-id (String, "" = from the job's name source; Flink's PipelineOptionsInternal): the job id
// of the run, 32 lowercase hex digits. Fixes the checkpoint folder <dir>/<job-id>/ (tests; a restored run that must
// keep writing into its predecessor's folder). kInvalidArgument at execute() for anything but 32 hex digits.
extern const ConfigOption<std::string> kFixedJobId;
// execution.buffer-timeout.interval (Duration, 100ms; alias execution.buffer-timeout): a partly filled
// output buffer is flushed at the latest this long after its first record; 0 flushes after every record.
extern const ConfigOption<std::chrono::milliseconds> kBufferTimeoutInterval;
// execution.buffer-timeout.enabled (Boolean, true): false flushes only full buffers (max throughput).
extern const ConfigOption<bool> kBufferTimeoutEnabled;
// pipeline.auto-watermark-interval (Duration, 200ms, >= 0): how often periodic watermark generators emit
// (WatermarkGenerator::on_periodic_emit); 0 disables periodic emission (punctuated generators still emit).
extern const ConfigOption<std::chrono::milliseconds> kAutoWatermarkInterval;
// execution.runtime-mode (Enum, STREAMING; BATCH or AUTOMATIC; see RuntimeExecutionMode).
extern const ConfigOption<RuntimeExecutionMode> kRuntimeMode;
// execution.sorted-inputs.memory (MemorySize, 64mb, >= 64kb): BATCH - memory each keyed task's input sorter may
// hold before it spills a sorted run to disk (then merged k-way at the end of the input).
extern const ConfigOption<MemorySize> kSortedInputsMemory;
// io.tmp.dirs (String, "/tmp"): BATCH - where blocking exchanges and sort spills are written (the first entry of
// a ':'-separated list); each job uses its own folder below, removed when the job ends. Local folders only: a
// value containing "://" is refused (kInvalidArgument naming the key).
extern const ConfigOption<std::string> kIoTmpDirs;
// taskmanager.memory.segment-size (MemorySize, 32kb, a power of two in [4kb, 16mb]): size of one network
// buffer.
extern const ConfigOption<MemorySize> kMemorySegmentSize;
// taskmanager.network.memory.buffers-per-channel (Integer, 2, >= 1): credits a receiver grants per input
// channel (credit-based flow control).
extern const ConfigOption<int32_t> kNetworkBuffersPerChannel;
// taskmanager.network.memory.max-buffers-per-channel (Integer, 10, >= 1): buffers a sender may hold per
// output channel before it blocks (bounds in-flight data under data skew).
extern const ConfigOption<int32_t> kNetworkMaxBuffersPerChannel;
// state.backend.type (Enum, HASHMAP; alias state.backend): the keyed state backend, HASHMAP or ROCKSDB, or a
// legacy name that also selects the checkpoint storage (see StateBackendType).
extern const ConfigOption<StateBackendType> kStateBackendType;
// state.backend.rocksdb.localdir (String, "" = the system temp directory): where the RocksDB backend puts each
// subtask's working directory (deleted when the subtask ends). A local folder only: a value starting with a URI
// scheme ("s3://b", "file:///x", "gs:/b") is refused (kInvalidArgument naming the key).
extern const ConfigOption<std::string> kRocksDBLocalDir;
// state.backend.rocksdb.cache.enabled (Boolean, true) and state.backend.rocksdb.cache.max-size (MemorySize,
// 64mb, >= 4kb; unset under managed memory: half the budget shared): a write-back cache per subtask (Sluice's).
extern const ConfigOption<bool> kRocksDBCacheEnabled;
extern const ConfigOption<MemorySize> kRocksDBCacheMaxSize;
// state.backend.rocksdb.predefined-options (Enum, DEFAULT): a profile of RocksDB settings (PredefinedOptions).
extern const ConfigOption<PredefinedOptions> kRocksDBPredefinedOptions;
// state.backend.rocksdb.timer-service.factory (Enum, ROCKSDB): timers in a RocksDB column family, or on the heap
// (HEAP: faster, bounded by memory, snapshotted synchronously).
extern const ConfigOption<TimerServiceFactory> kRocksDBTimerServiceFactory;
// state.backend.rocksdb.memory.managed (Boolean, true): bound all RocksDB instances of the process together by
// taskmanager.memory.managed.size (one shared block cache + write-buffer manager).
extern const ConfigOption<bool> kRocksDBMemoryManaged;
// state.backend.rocksdb.memory.fixed-per-tm (MemorySize, unset; else > 0): a fixed budget shared by all RocksDB
// instances of the process; when set it is the budget, whatever .managed says.
extern const ConfigOption<std::optional<MemorySize>> kRocksDBMemoryFixedPerTm;
// state.backend.rocksdb.memory.write-buffer-ratio (Double, 0.5, in (0, 1)): share of the budget for memtables.
extern const ConfigOption<double> kRocksDBMemoryWriteBufferRatio;
// state.backend.rocksdb.memory.high-prio-pool-ratio (Double, 0.1, in (0, 1)): share of the block cache kept for
// index and filter blocks. With write-buffer-ratio it must sum below 1 (checked when the job is submitted).
extern const ConfigOption<double> kRocksDBMemoryHighPrioPoolRatio;
// taskmanager.memory.managed.size (MemorySize, 256mb): the process's managed memory, RocksDB's budget when
// state.backend.rocksdb.memory.managed is on. Flink derives its default from the process size; ours is fixed.
extern const ConfigOption<MemorySize> kManagedMemorySize;
// state.backend.rocksdb.metrics.<property> (Boolean, false each): export RocksDB's property
// "rocksdb.<property>" as a gauge per state of each keyed operator subtask.
extern const ConfigOption<bool> kRocksDBMetricsBlockCacheCapacity;
extern const ConfigOption<bool> kRocksDBMetricsBlockCacheUsage;
extern const ConfigOption<bool> kRocksDBMetricsCurSizeAllMemTables;
extern const ConfigOption<bool> kRocksDBMetricsMemTableFlushPending;
extern const ConfigOption<bool> kRocksDBMetricsNumRunningFlushes;
extern const ConfigOption<bool> kRocksDBMetricsNumRunningCompactions;

// ---- checkpointing (Flink's CheckpointingOptions; effective values: derived_options.h) ----------------

// execution.checkpointing.interval (Duration, 0 = no periodic checkpoints; else >= 10ms, Flink's minimum): period of
// checkpoint triggers. Flink has no default (unset = disabled); Sluice's unset is 0. With 0 a STREAMING job still takes
// and restores savepoints (docs/savepoints.md, "Without periodic checkpoints"); restarts then default to none.
extern const ConfigOption<std::chrono::milliseconds> kCheckpointingInterval;
// execution.checkpointing.mode (Enum, EXACTLY_ONCE; or AT_LEAST_ONCE; see CheckpointingMode).
extern const ConfigOption<CheckpointingMode> kCheckpointingMode;
// execution.checkpointing.timeout (Duration, 10min, >= 10ms): a checkpoint not complete after this long is
// aborted (and counts against tolerable-failed-checkpoints).
extern const ConfigOption<std::chrono::milliseconds> kCheckpointingTimeout;
// execution.checkpointing.min-pause (Duration, 0): least time between the end of one checkpoint and the
// trigger of the next. Above 0 it also means one checkpoint at a time, whatever max-concurrent-checkpoints.
extern const ConfigOption<std::chrono::milliseconds> kCheckpointingMinPause;
// execution.checkpointing.max-concurrent-checkpoints (Integer, 1, >= 1): checkpoints in flight at once.
extern const ConfigOption<int32_t> kMaxConcurrentCheckpoints;
// execution.checkpointing.tolerable-failed-checkpoints (Integer, 0, >= 0): consecutive checkpoint failures
// tolerated before the job fails over; the count resets when a checkpoint completes.
extern const ConfigOption<int32_t> kTolerableFailedCheckpoints;
// execution.checkpointing.externalized-checkpoint-retention (Enum, NO_EXTERNALIZED_CHECKPOINTS).
extern const ConfigOption<ExternalizedCheckpointRetention> kExternalizedCheckpointRetention;
// execution.checkpointing.dir (String, "" = none; aliases state.checkpoints.dir,
// state.backend.fs.checkpointdir): root directory of checkpoints, <dir>/<job-id>/chk-<n>/.
extern const ConfigOption<std::string> kCheckpointsDirectory;
// execution.checkpointing.num-retained (Integer, 1, >= 1; alias state.checkpoints.num-retained): completed
// checkpoints kept; older ones are deleted when a newer one completes.
extern const ConfigOption<int32_t> kMaxRetainedCheckpoints;
// execution.checkpointing.data-inline-threshold (MemorySize, 20kb, at most 1mb; aliases
// state.storage.fs.memory-threshold, state.backend.fs.memory-threshold): state handles smaller than this are
// stored inline in _metadata instead of in their own file.
extern const ConfigOption<MemorySize> kCheckpointDataInlineThreshold;
// execution.checkpointing.checkpoints-after-tasks-finish (Boolean, true; alias
// execution.checkpointing.checkpoints-after-tasks-finish.enabled). true: a task whose input ended stays and
// takes part in every checkpoint (never waited on: its snapshot has nothing left to wait for) until the final
// checkpoint, triggered once every task's input ended, completed - so checkpoints keep completing while some
// sources ended and others run, and two-phase-commit sinks commit their last data. false (Flink before
// FLIP-147): such a task finishes at once; every later checkpoint fails (reason "task not ready", not counted
// against tolerable-failed-checkpoints) and there is no final checkpoint, so what a two-phase-commit sink took
// after the last completed checkpoint is never committed.
extern const ConfigOption<bool> kCheckpointsAfterTasksFinish;
// execution.checkpointing.unaligned.enabled (Boolean, false; alias execution.checkpointing.unaligned): barriers
// overtake in-flight data on all-to-all exchanges, which is persisted with the checkpoint. Needs EXACTLY_ONCE
// and max-concurrent-checkpoints 1 (validate_unaligned_checkpoints in derived_options.h).
extern const ConfigOption<bool> kUnalignedCheckpoints;
// execution.checkpointing.aligned-checkpoint-timeout (Duration, 0; alias
// execution.checkpointing.alignment-timeout): with unaligned checkpoints, 0 starts every checkpoint unaligned;
// a positive value starts it aligned and switches its barriers to unaligned once this long has passed since
// its trigger.
extern const ConfigOption<std::chrono::milliseconds> kAlignedCheckpointTimeout;
// execution.checkpointing.storage (Enum, unset = derived; alias state.checkpoint-storage): JOBMANAGER or
// FILESYSTEM. Unset: FILESYSTEM if execution.checkpointing.dir is set, else JOBMANAGER (see
// checkpoint_storage_type() in derived_options.h).
extern const ConfigOption<std::optional<CheckpointStorageType>> kCheckpointStorage;
// execution.state-recovery.path (String, unset = start fresh, set but empty = error; alias
// execution.savepoint.path): the checkpoint or
// savepoint to restore the job from (`--restore`), or `latest`.
extern const ConfigOption<std::string> kStateRecoveryPath;
// execution.state-recovery.claim-mode (Enum, NO_CLAIM); the sluice tool's --claim-mode.
extern const ConfigOption<RecoveryClaimMode> kStateRecoveryClaimMode;
// execution.checkpointing.savepoint-dir (String, empty = none; deprecated key state.savepoints.dir): the default
// target directory of savepoints and stop-with-savepoint.
extern const ConfigOption<std::string> kSavepointDirectory;
// execution.state-recovery.ignore-unclaimed-state (Boolean, false; deprecated key
// execution.savepoint.ignore-unclaimed-state); the sluice tool's --allow-non-restored-state: restore even when
// state of operators the job no longer has would be dropped (and report what was dropped).
extern const ConfigOption<bool> kIgnoreUnclaimedState;
extern const ConfigOption<bool> kIgnoreGeneratedIdChanges;
// execution.state-recovery.rehash-key-groups (Boolean, false; Sluice's own); the sluice tool's --rehash-key-groups:
// keyed state recorded with another max parallelism is re-hashed into the job's key groups (canonical snapshots
// only) instead of failing the restore (docs/savepoints.md).
extern const ConfigOption<bool> kRehashKeyGroups;
// execution.state-recovery.check-only (Boolean, false; Sluice's own); --check-restore PATH of from_args programs:
// execute() checks whether the job would restore execution.state-recovery.path, prints the report and exits
// the process (0: it would restore, 1: it would not) instead of running (docs/savepoints.md).
extern const ConfigOption<bool> kCheckRestoreOnly;
// execution.state-recovery.from-local (Boolean, false; Flink's task-local recovery, deprecated key
// state.backend.local-recovery): a process that runs tasks keeps a local copy of the state files they write and a
// restore in the same process reads it, falling back to checkpoint storage when it is missing or damaged
// (checkpoint/local_recovery_storage.h).
extern const ConfigOption<bool> kLocalRecovery;
// taskmanager.state.local.root-dirs (String, empty = $TMPDIR, else /tmp): where each process makes
// its local-recovery directory (one directory; Sluice does not spread copies over several).
extern const ConfigOption<std::string> kLocalRecoveryRootDirs;
// execution.checkpointing.incremental (Boolean, false; deprecated key state.backend.incremental): incremental
// checkpoints of RocksDB keyed state.
extern const ConfigOption<bool> kIncrementalCheckpoints;

// ---- restart strategies (Flink's RestartStrategyOptions; see src/restart) ---------------------------------

// jobmanager.execution.failover-strategy (Enum full|region, region as in Flink): region restarts only the pipelined
// region of the failed task (graph/pipelined_regions.h), full the whole job.
extern const ConfigOption<FailoverStrategy> kFailoverStrategy;
// restart-strategy.type (Enum, unset = derived; alias restart-strategy): unset means EXPONENTIAL-DELAY when
// checkpointing is enabled, else NONE (Flink's rule).
extern const ConfigOption<std::optional<RestartStrategyType>> kRestartStrategyType;
// restart-strategy.fixed-delay.attempts (Integer, 1, >= 0): restarts before the job fails.
extern const ConfigOption<int32_t> kFixedDelayAttempts;
// restart-strategy.fixed-delay.delay (Duration, 1s): wait before each restart.
extern const ConfigOption<std::chrono::milliseconds> kFixedDelayDelay;
// restart-strategy.failure-rate.max-failures-per-interval (Integer, 1, >= 1): restarts allowed within one
// failure-rate-interval; one more failure inside the interval fails the job.
extern const ConfigOption<int32_t> kFailureRateMaxFailuresPerInterval;
// restart-strategy.failure-rate.failure-rate-interval (Duration, 1min, >= 1ms): the sliding window.
extern const ConfigOption<std::chrono::milliseconds> kFailureRateInterval;
// restart-strategy.failure-rate.delay (Duration, 1s): wait before each restart.
extern const ConfigOption<std::chrono::milliseconds> kFailureRateDelay;
// restart-strategy.exponential-delay.initial-backoff (Duration, 1s, >= 1ms): the first backoff.
extern const ConfigOption<std::chrono::milliseconds> kExponentialDelayInitialBackoff;
// restart-strategy.exponential-delay.max-backoff (Duration, 1min, >= 1ms, >= initial-backoff): the cap.
extern const ConfigOption<std::chrono::milliseconds> kExponentialDelayMaxBackoff;
// restart-strategy.exponential-delay.backoff-multiplier (Double, 1.5, > 1): growth per attempt.
extern const ConfigOption<double> kExponentialDelayBackoffMultiplier;
// restart-strategy.exponential-delay.reset-backoff-threshold (Duration, 1h, >= 1ms): running this long
// without a failure resets the backoff and the attempt count.
extern const ConfigOption<std::chrono::milliseconds> kExponentialDelayResetBackoffThreshold;
// restart-strategy.exponential-delay.jitter-factor (Double, 0.1, in [0, 1]): each backoff is moved by a
// uniform random amount within +-factor x backoff.
extern const ConfigOption<double> kExponentialDelayJitterFactor;
// restart-strategy.exponential-delay.attempts-before-reset-backoff (Integer, 2147483647 = unlimited, >= 1):
// restarts before the job fails, counted since the last reset.
extern const ConfigOption<int32_t> kExponentialDelayAttemptsBeforeResetBackoff;
// restart-strategy.max-identical-failures (Integer, 10, >= 0; Sluice's own): the job fails, naming the error, when
// this many failures in a row are identical (same code, same message after numbers and hex ids are normalised)
// with no checkpoint completed between them, whatever the strategy; 0 = off (restart/failure_classifier.h).
extern const ConfigOption<int32_t> kMaxIdenticalFailures;

// ---- REST endpoint of a running job (Flink's RestOptions; src/rest, docs/rest-api.md) ------------------------

// rest.port (Integer, 0 = an ephemeral port, in [0, 65535]): the port the job's REST endpoint listens on. Flink's
// default is 8081 for its one cluster endpoint; every Sluice job serves its own, so the default lets the kernel
// choose (the job registry tells the CLI which).
extern const ConfigOption<int32_t> kRestPort;
// rest.address (String, "" = the bind address): the address clients use to reach the endpoint (recorded in the
// job registry); also the bind address when rest.bind-address is unset.
extern const ConfigOption<std::string> kRestAddress;
// rest.bind-address (String, "" = rest.address, else 127.0.0.1): the address the endpoint binds to.
extern const ConfigOption<std::string> kRestBindAddress;
extern const ConfigOption<int32_t> kMetricsPrometheusPort;

// ---- S3 client (src/fs/s3; Flink's s3.* keys, which its S3 filesystems forward to Hadoop's fs.s3a.*) ----------

// s3.endpoint (String, "" = https://s3.<s3.region>.amazonaws.com): URL of the S3 API.
extern const ConfigOption<std::string> kS3Endpoint;
// s3.region (String, "us-east-1"; alias s3.endpoint.region): the region requests are signed for.
extern const ConfigOption<std::string> kS3Region;
// s3.access-key (String, "" = env AWS_ACCESS_KEY_ID; alias s3.access.key).
extern const ConfigOption<std::string> kS3AccessKey;
// s3.secret-key (String, "" = env AWS_SECRET_ACCESS_KEY; alias s3.secret.key). Never printed.
extern const ConfigOption<std::string> kS3SecretKey;
// s3.path.style.access (Boolean, false; alias s3.path-style-access).
extern const ConfigOption<bool> kS3PathStyleAccess;
// s3.connection.establish.timeout (Duration, 10s, >= 1ms).
extern const ConfigOption<std::chrono::milliseconds> kS3ConnectTimeout;
// s3.connection.request.timeout (Duration, 60s, >= 1ms): one whole HTTP request.
extern const ConfigOption<std::chrono::milliseconds> kS3RequestTimeout;
// s3.retry.limit (Integer, 5, in [0, 30]): retries of one request after its first attempt.
extern const ConfigOption<int32_t> kS3RetryLimit;
// s3.retry.interval (Duration, 100ms, >= 1ms): base delay of the exponential backoff.
extern const ConfigOption<std::chrono::milliseconds> kS3RetryInterval;
// s3.retry.max-interval (Duration, 5s, >= 1ms; Sluice's own): cap of one backoff delay.
extern const ConfigOption<std::chrono::milliseconds> kS3RetryMaxInterval;
// s3.multipart.size (MemorySize, 8mb, in [5mb, 5gb]): size of each part but the last.
extern const ConfigOption<MemorySize> kS3MultipartSize;
// s3.multipart.threshold (MemorySize, 8mb, >= 5mb): files of at least this size are uploaded in parts.
extern const ConfigOption<MemorySize> kS3MultipartThreshold;
// s3.upload.parallelism (Integer, 4, in [1, 64]; Sluice's own): parts of one upload in flight.
extern const ConfigOption<int32_t> kS3UploadParallelism;
// s3.download.parallelism (Integer, 4, in [1, 64]; Sluice's own): ranged GETs of one download in flight.
extern const ConfigOption<int32_t> kS3DownloadParallelism;
// s3.entropy.key (String, "" = off; Flink's): a marker in a checkpoint directory that the paths of state data files
// replace by random characters and every other path drops (fs/entropy_injection.h; Flink's docs, "Entropy injection
// for S3 file systems"). No '/'.
extern const ConfigOption<std::string> kS3EntropyKey;
// s3.entropy.length (Integer, 4, > 0; Flink's): how many random characters replace s3.entropy.key.
extern const ConfigOption<int32_t> kS3EntropyLength;

}  // namespace options

// Every registered option, in documentation order. Keys and aliases are unique across the list.
const std::vector<const ConfigOptionBase*>& all_options();

struct OptionLookup {
  const ConfigOptionBase* option = nullptr;  // nullptr: unknown key
  bool deprecated = false;                   // true: `key` was a deprecated alias of option->key
};
// Resolves a canonical key or a deprecated alias.
OptionLookup find_option(std::string_view key);

// Up to `max_count` registered keys closest to `unknown_key` by edit distance (aliases count as their
// canonical key), closest first; empty when nothing is reasonably close. Used for "did you mean" hints.
std::vector<std::string> suggest_keys(std::string_view unknown_key, size_t max_count = 3);

}  // namespace sluice
