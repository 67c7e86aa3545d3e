#include "sluice/config/options.h"

#include "sluice/config/cluster_options.h"
#include "sluice/config/logging_options.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <unordered_map>

#include "config/edit_distance.h"
#include "sluice/core/duration.h"
#include "sluice/core/ids.h"

namespace sluice {
namespace options {

using std::chrono::milliseconds;

namespace {
Constraint<int32_t> at_least(int32_t min) {
  return {[min](const int32_t& v) { return v >= min; }, ">= " + std::to_string(min)};
}
Constraint<milliseconds> at_least(milliseconds min) {
  return {[min](const milliseconds& v) { return v >= min; }, ">= " + format_duration(min)};
}
// Flink's MINIMAL_CHECKPOINT_TIME: the smallest checkpoint interval and timeout it accepts.
constexpr milliseconds kMinimalCheckpointTime{10};
// Folders only a local disk can hold (a database's working files, spill files): a value starting with a URI
// scheme ("s3://b", "gs:/b", "file:///x") is refused instead of becoming a local folder named "s3:".
Constraint<std::string> local_folder() {
  return {[](const std::string& v) {
            size_t i = 0;
            while (i < v.size() && (std::isalnum(static_cast<unsigned char>(v[i])) != 0 || v[i] == '+' ||
                                    v[i] == '.' || v[i] == '-')) {
              ++i;
            }
            const bool scheme = i >= 2 && i < v.size() && v[i] == ':' && std::isalpha(static_cast<unsigned char>(v[0]));
            return !scheme;
          },
          "a local folder path, not a URI (these files are written on this machine's disk)"};
}
}  // namespace

const ConfigOption<int32_t> kDefaultParallelism{
    "parallelism.default", 1,
    "Parallelism of every operator that does not set its own (StreamExecutionEnvironment or operator).",
    {}, at_least(1)};

const ConfigOption<int32_t> kMaxParallelism{
    "pipeline.max-parallelism", -1,
    "Maximum parallelism, i.e. the number of key groups keyed state is split into; the upper bound for "
    "rescaling. -1 derives it from the parallelism (round_up_pow2(p + p/2) clamped to [128, 32768]), or "
    "adopts the value recorded in the checkpoint being restored.",
    {},
    {[](const int32_t& v) { return v == -1 || (v >= 1 && v <= 32768); }, "-1 or in [1, 32768]"}};

const ConfigOption<std::string> kPipelineName{
    "pipeline.name", "", "Name of the job; empty uses the name passed to execute().", {}, {}};

const ConfigOption<std::string> kFixedJobId{
    "$internal.pipeline.job-id", "",
    "The job id of the run (32 lowercase hex digits); empty draws it from the job's name source.", {},
    {[](const std::string& v) {
       if (v.empty()) return true;
       JobId id;
       return JobId::parse(v, &id);
     },
     "empty or 32 lowercase hex digits"}};

const ConfigOption<milliseconds> kBufferTimeoutInterval{
    "execution.buffer-timeout.interval", milliseconds(100),
    "Longest time a partly filled output buffer waits before it is flushed downstream; 0 flushes after "
    "every record (lowest latency). Ignored when execution.buffer-timeout.enabled is false.",
    {"execution.buffer-timeout"}, {}};

const ConfigOption<milliseconds> kAutoWatermarkInterval{
    "pipeline.auto-watermark-interval", milliseconds(200),
    "How often periodic watermark generators emit a watermark (processing time); 0 disables periodic "
    "emission (punctuated generators still emit on events).",
    {}, {[](const milliseconds& v) { return v.count() >= 0; }, ">= 0"}};

const ConfigOption<bool> kBufferTimeoutEnabled{
    "execution.buffer-timeout.enabled", true,
    "Whether output buffers are flushed on the buffer timeout; false flushes only full buffers "
    "(highest throughput).",
    {}, {}};

const ConfigOption<MemorySize> kMemorySegmentSize{
    "taskmanager.memory.segment-size", MemorySize::of_kibibytes(32),
    "Size of one network buffer (memory segment): the unit records are batched into between tasks and the "
    "unit of credit-based flow control.",
    {},
    {[](const MemorySize& v) {
       return v.bytes >= (4u << 10) && v.bytes <= (16u << 20) && (v.bytes & (v.bytes - 1)) == 0;
     },
     "a power of two in [4kb, 16mb]"}};

const ConfigOption<int32_t> kNetworkBuffersPerChannel{
    "taskmanager.network.memory.buffers-per-channel", 2,
    "Exclusive buffers, i.e. credits, a receiving task grants per input channel in credit-based flow "
    "control. At least 2 lets one buffer be filled while another is in flight.",
    {}, at_least(1)};

const ConfigOption<int32_t> kNetworkMaxBuffersPerChannel{
    "taskmanager.network.memory.max-buffers-per-channel", 10,
    "Buffers a sending task may hold for one output channel before it blocks; bounds in-flight data, and so "
    "checkpoint alignment time, under data skew.",
    {}, at_least(1)};

const ConfigOption<StateBackendType> kStateBackendType{
    "state.backend.type", StateBackendType::kHashMap,
    "Backend for keyed state. HASHMAP keeps state as objects on the heap and snapshots it copy-on-write; "
    "ROCKSDB keeps it serialized in an embedded RocksDB on local disk (bounded by disk, not memory). The legacy "
    "names also choose the checkpoint storage: JOBMANAGER / MEMORYSTATEBACKEND = HASHMAP + JOBMANAGER storage, "
    "FILESYSTEM / FSSTATEBACKEND = HASHMAP + FILESYSTEM storage, ROCKSDBSTATEBACKEND = ROCKSDB + FILESYSTEM "
    "storage.",
    {"state.backend"}, {}};

const ConfigOption<std::string> kRocksDBLocalDir{
    "state.backend.rocksdb.localdir", "",
    "Directory under which the RocksDB state backend creates one working directory per keyed operator subtask "
    "(deleted when the subtask ends). Empty: the system temp directory ($TMPDIR or /tmp). A local folder: a "
    "URI (s3://..., file://...) is refused.",
    {}, local_folder()};

const ConfigOption<bool> kRocksDBCacheEnabled{
    "state.backend.rocksdb.cache.enabled", true,
    "Puts a write-back cache of recently used keys in front of each subtask's RocksDB instance: reads and "
    "updates of hot keys stay in memory; changes are written to RocksDB on eviction and before every snapshot, "
    "so checkpoints are the same as without it. On by default (about 7x the events per CPU-second of plain "
    "RocksDB on a hot-key job); false gives Flink's behaviour. Sluice's own option (Flink has none).",
    {}, {}};

const ConfigOption<MemorySize> kRocksDBCacheMaxSize{
    "state.backend.rocksdb.cache.max-size", MemorySize::of_mebibytes(64),
    "Memory of the write-back cache per keyed operator subtask (keys + values + about 128 bytes per entry); "
    "least recently used entries are evicted beyond it. Not set while managed memory bounds RocksDB: the caches "
    "share half of that budget instead (docs/state-backends.md); set: this size per subtask, beside the budget.",
    {},
    {[](const MemorySize& v) { return v.bytes >= (4u << 10); }, ">= 4kb"}};
const ConfigOption<PredefinedOptions> kRocksDBPredefinedOptions{
    "state.backend.rocksdb.predefined-options", PredefinedOptions::kDefault,
    "A profile of RocksDB settings applied before the options factory: DEFAULT, SPINNING_DISK_OPTIMIZED, "
    "SPINNING_DISK_OPTIMIZED_HIGH_MEM, FLASH_SSD_OPTIMIZED (Flink's) or FLASH_SSD_OPTIMIZED_HIGH_MEM (Sluice's). "
    "What each sets: docs/state-backends.md.",
    {}, {}};

const ConfigOption<TimerServiceFactory> kRocksDBTimerServiceFactory{
    "state.backend.rocksdb.timer-service.factory", TimerServiceFactory::kRocksDB,
    "Where the RocksDB backend keeps timers: ROCKSDB (a column family per timer queue, ordered by key group and "
    "timestamp, with a cached head per key group) or HEAP (on the heap as with the hashmap backend: faster, "
    "bounded by memory, and copied synchronously at each checkpoint).",
    {}, {}};

const ConfigOption<bool> kRocksDBMemoryManaged{
    "state.backend.rocksdb.memory.managed", true,
    "Bound the memory of all RocksDB instances of the process by taskmanager.memory.managed.size: one block "
    "cache and one write-buffer manager shared by every instance, with memtables and index/filter blocks "
    "charged to the cache. false (and no fixed-per-tm): each instance uses RocksDB's own, unbounded defaults.",
    {}, {}};

const ConfigOption<std::optional<MemorySize>> kRocksDBMemoryFixedPerTm{
    "state.backend.rocksdb.memory.fixed-per-tm", std::nullopt,
    "A fixed memory budget shared by all RocksDB instances of the process (a process is one slot until cluster "
    "mode). When set it is the budget, whatever state.backend.rocksdb.memory.managed says.",
    {},
    {[](const std::optional<MemorySize>& v) { return !v || v->bytes > 0; }, "empty or > 0"}};

const ConfigOption<double> kRocksDBMemoryWriteBufferRatio{
    "state.backend.rocksdb.memory.write-buffer-ratio", 0.5,
    "Share of the RocksDB memory budget that memtables may take (the write-buffer manager is sized 2/3 of it, "
    "since memtables can reach 1.5 x its size before it flushes: Flink's formula).",
    {}, {[](const double& v) { return v > 0.0 && v < 1.0; }, "in (0, 1)"}};

const ConfigOption<double> kRocksDBMemoryHighPrioPoolRatio{
    "state.backend.rocksdb.memory.high-prio-pool-ratio", 0.1,
    "Share of the shared block cache reserved for index and filter blocks (cached with high priority, so data "
    "blocks do not evict them). write-buffer-ratio + high-prio-pool-ratio must be below 1.",
    {}, {[](const double& v) { return v > 0.0 && v < 1.0; }, "in (0, 1)"}};

const ConfigOption<MemorySize> kManagedMemorySize{
    "taskmanager.memory.managed.size", MemorySize::of_mebibytes(256),
    "Managed memory of the process: the RocksDB budget when state.backend.rocksdb.memory.managed is true. Flink "
    "derives its default from the process size (0.4 of Flink memory); Sluice has no process size, so a fixed "
    "256mb: an upper bound RocksDB grows into only as state needs it.",
    {}, {}};

namespace {
ConfigOption<bool> native_metric(const char* property, const char* what) {
  return ConfigOption<bool>{std::string("state.backend.rocksdb.metrics.") + property, false,
                            std::string("Export RocksDB's native metric rocksdb.") + property + " (" + what +
                                ") as a gauge per state of each keyed operator subtask.",
                            {}, {}};
}
}  // namespace

const ConfigOption<bool> kRocksDBMetricsBlockCacheCapacity =
    native_metric("block-cache-capacity", "the block cache's capacity in bytes");
const ConfigOption<bool> kRocksDBMetricsBlockCacheUsage =
    native_metric("block-cache-usage", "bytes in the block cache, memtable reservations included");
const ConfigOption<bool> kRocksDBMetricsCurSizeAllMemTables =
    native_metric("cur-size-all-mem-tables", "bytes of the active, unflushed and pinned memtables");
const ConfigOption<bool> kRocksDBMetricsMemTableFlushPending =
    native_metric("mem-table-flush-pending", "1 when a memtable flush is pending, else 0");
const ConfigOption<bool> kRocksDBMetricsNumRunningFlushes =
    native_metric("num-running-flushes", "flushes running now");
const ConfigOption<bool> kRocksDBMetricsNumRunningCompactions =
    native_metric("num-running-compactions", "compactions running now");

// ---- checkpointing ------------------------------------------------------------------------------------

const ConfigOption<milliseconds> kCheckpointingInterval{
    "execution.checkpointing.interval", milliseconds(0),
    "Period of checkpoint triggers. 0 (the default) disables periodic checkpointing: Flink has no default and "
    "treats an unset interval as disabled; Sluice stores unset as 0. As in Flink, savepoints and restores still "
    "work with it off. Triggers may be delayed by "
    "execution.checkpointing.min-pause and execution.checkpointing.max-concurrent-checkpoints.",
    {},
    {[](const milliseconds& v) { return v.count() == 0 || v >= kMinimalCheckpointTime; },
     "0 (disabled) or >= 10ms"}};

const ConfigOption<RuntimeExecutionMode> kRuntimeMode{
    "execution.runtime-mode", RuntimeExecutionMode::kStreaming,
    "Runtime execution mode. STREAMING: pipelined exchanges and checkpoints (when enabled). BATCH: bounded sources "
    "only; stages separated by blocking exchanges on local disk, keyed input sorted by key, no checkpoints, a "
    "failed task re-runs its stage. AUTOMATIC: BATCH when every source is bounded, else STREAMING.",
    {}, {}};

const ConfigOption<MemorySize> kSortedInputsMemory{
    "execution.sorted-inputs.memory", MemorySize::of_mebibytes(64),
    "BATCH: memory a keyed task's input sorter holds before it spills a sorted run to disk; the runs are merged "
    "(k-way) at the end of the input.",
    {},
    {[](const MemorySize& v) { return v.bytes >= (64u << 10); }, ">= 64kb"}};

const ConfigOption<std::string> kIoTmpDirs{
    "io.tmp.dirs", "/tmp",
    "BATCH: directory for blocking exchange files and sort spills (the first of a ':'-separated list); each job "
    "writes into its own folder below, removed when the job ends. Local folders: a URI (hdfs://..., "
    "file://...) is refused.",
    {}, {[](const std::string& v) { return v.find("://") == std::string::npos; },
         "local folders separated by ':', not URIs (these files are written on this machine's disk)"}};

const ConfigOption<CheckpointingMode> kCheckpointingMode{
    "execution.checkpointing.mode", CheckpointingMode::kExactlyOnce,
    "Checkpointing guarantee. EXACTLY_ONCE aligns barriers: a task with several input channels blocks a channel "
    "that delivered barrier n until n arrived on all of them. AT_LEAST_ONCE never blocks: the task snapshots "
    "once n arrived on every open channel, having processed what came after n on the others, so a restore may "
    "replay those records (duplicates, never losses). Tasks with one input channel behave alike in both modes.",
    {}, {}};

const ConfigOption<milliseconds> kCheckpointingTimeout{
    "execution.checkpointing.timeout", std::chrono::minutes(10),
    "Longest time a checkpoint may take; one that is not complete by then is aborted and counts as a failed "
    "checkpoint.",
    {}, at_least(kMinimalCheckpointTime)};

const ConfigOption<milliseconds> kCheckpointingMinPause{
    "execution.checkpointing.min-pause", milliseconds(0),
    "Least time between the end of one checkpoint and the trigger of the next. Above 0, at most one "
    "checkpoint is in progress at a time, whatever execution.checkpointing.max-concurrent-checkpoints says.",
    {}, {}};

const ConfigOption<int32_t> kMaxConcurrentCheckpoints{
    "execution.checkpointing.max-concurrent-checkpoints", 1,
    "Most checkpoints in progress at the same time; no new one is triggered while this many are in flight.",
    {}, at_least(1)};

const ConfigOption<int32_t> kTolerableFailedCheckpoints{
    "execution.checkpointing.tolerable-failed-checkpoints", 0,
    "Consecutive checkpoint failures (timeout, asynchronous-phase error, storage I/O error, declined) "
    "tolerated before the job fails over through the restart strategy; a completed checkpoint resets the "
    "count. 0 tolerates none.",
    {}, at_least(0)};

const ConfigOption<ExternalizedCheckpointRetention> kExternalizedCheckpointRetention{
    "execution.checkpointing.externalized-checkpoint-retention",
    ExternalizedCheckpointRetention::kNoExternalizedCheckpoints,
    "What happens to retained checkpoints when the job ends: NO_EXTERNALIZED_CHECKPOINTS deletes them when "
    "the job is cancelled or fails; DELETE_ON_CANCELLATION keeps them only when it fails; "
    "RETAIN_ON_CANCELLATION keeps them when it is cancelled or fails. A finished job deletes them in every "
    "mode; a process that dies deletes nothing.",
    {}, {}};

const ConfigOption<std::string> kCheckpointsDirectory{
    "execution.checkpointing.dir", "",
    "Root directory of checkpoints: each run of a job writes <dir>/<job-id>/{shared,taskowned,chk-<n>}. "
    "Empty keeps checkpoints in the JobManager's memory (see execution.checkpointing.storage).",
    {"state.checkpoints.dir", "state.backend.fs.checkpointdir"}, {}};

const ConfigOption<int32_t> kMaxRetainedCheckpoints{
    "execution.checkpointing.num-retained", 1,
    "Completed checkpoints kept; when a new one completes, the oldest beyond this number is deleted.",
    {"state.checkpoints.num-retained"}, at_least(1)};

const ConfigOption<MemorySize> kCheckpointDataInlineThreshold{
    "execution.checkpointing.data-inline-threshold", MemorySize::of_kibibytes(20),
    "State handles smaller than this are stored inline in the checkpoint's _metadata file instead of in "
    "files of their own. At most 1mb (Flink's limit).",
    {"state.storage.fs.memory-threshold", "state.backend.fs.memory-threshold"},
    {[](const MemorySize& v) { return v <= MemorySize::of_mebibytes(1); }, "<= 1mb"}};

const ConfigOption<bool> kCheckpointsAfterTasksFinish{
    "execution.checkpointing.checkpoints-after-tasks-finish", true,
    "Whether checkpoints continue after some tasks finished. true: a task whose input ended stays and takes part "
    "in every checkpoint until a final checkpoint, triggered once all inputs ended, completed, so that "
    "two-phase-commit sinks commit the last data. false: such a task finishes at once; from then on every "
    "checkpoint fails (task not ready; not counted as a tolerable failure) and there is no final checkpoint, so "
    "what a two-phase-commit sink took after the last completed checkpoint is not committed.",
    {"execution.checkpointing.checkpoints-after-tasks-finish.enabled"}, {}};

const ConfigOption<bool> kUnalignedCheckpoints{
    "execution.checkpointing.unaligned.enabled", false,
    "Unaligned checkpoints: on the first barrier a task snapshots at once and its barrier overtakes the data "
    "queued in its outputs; the data it overtook (in flight on hash, rebalance, rescale, shuffle, global and "
    "custom exchanges) is persisted with "
    "the checkpoint and replayed on restore. Checkpoints then take about as long under back-pressure as without. "
    "Needs execution.checkpointing.mode EXACTLY_ONCE and execution.checkpointing.max-concurrent-checkpoints 1. "
    "Forward and broadcast edges stay aligned; savepoints are always aligned.",
    {"execution.checkpointing.unaligned"}, {}};

const ConfigOption<milliseconds> kAlignedCheckpointTimeout{
    "execution.checkpointing.aligned-checkpoint-timeout", milliseconds(0),
    "With unaligned checkpoints: 0 starts every checkpoint unaligned; a positive value starts each checkpoint "
    "aligned and switches it to unaligned once this long has passed since its trigger (barriers still queued "
    "in output buffers then overtake the data ahead of them, and aligning tasks snapshot at once).",
    {"execution.checkpointing.alignment-timeout"},
    {[](const milliseconds& v) { return v.count() >= 0; }, ">= 0ms"}};

const ConfigOption<std::optional<CheckpointStorageType>> kCheckpointStorage{
    "execution.checkpointing.storage", std::nullopt,
    "Where completed checkpoints are kept: JOBMANAGER (the coordinator's memory) or FILESYSTEM (files under "
    "execution.checkpointing.dir, which must be set). Unset: FILESYSTEM if execution.checkpointing.dir is "
    "set, else JOBMANAGER.",
    {"state.checkpoint-storage"}, {}};

const ConfigOption<std::string> kStateRecoveryPath{
    "execution.state-recovery.path", "",
    "Checkpoint or savepoint to restore the job from (the --restore flag), or 'latest' for the newest valid "
    "checkpoint under execution.checkpointing.dir. Unset starts the job without state; an empty value is an error.",
    {"execution.savepoint.path"}, {}};

const ConfigOption<RecoveryClaimMode> kStateRecoveryClaimMode{
    "execution.state-recovery.claim-mode", RecoveryClaimMode::kNoClaim,
    "Who owns the checkpoint a job restores from (the --claim-mode flag). NO_CLAIM: the user; the job never "
    "deletes it and its first checkpoint is a full one, so later checkpoints refer to none of its files. CLAIM: "
    "the job; its incremental checkpoints may refer to the restored shared files, and it deletes the restored "
    "checkpoint once subsumed (as its own).",
    {"execution.savepoint-restore-mode"}, {}};

const ConfigOption<std::string> kSavepointDirectory{
    "execution.checkpointing.savepoint-dir", "",
    "Default target directory of savepoints (`sluice savepoint JOB`, `sluice stop JOB`, POST "
    "/jobs/:jobid/savepoints and /stop without a target-directory). Each savepoint is a new folder "
    "savepoint-<job>-<random> in it. Empty: a savepoint request must name a directory.",
    {"state.savepoints.dir"}, {}};

const ConfigOption<bool> kIgnoreUnclaimedState{
    "execution.state-recovery.ignore-unclaimed-state", false,
    "Restore even when the checkpoint or savepoint holds state of operators (by uid) the job no longer has (the "
    "--allow-non-restored-state flag); the dropped state is reported, operator by operator. false: such a "
    "restore fails, listing every unmatched operator.",
    {"execution.savepoint.ignore-unclaimed-state"}, {}};

const ConfigOption<bool> kIgnoreGeneratedIdChanges{
    "execution.state-recovery.ignore-generated-id-changes", false,
    "Restore state into operators without a uid by their generated id even when the operators around them changed "
    "since the snapshot (refused by default: an operator inserted before one without a uid takes its generated id "
    "and its state). Sluice's own key; set uids instead.",
    {}, {}};

const ConfigOption<bool> kCheckRestoreOnly{
    "execution.state-recovery.check-only", false,
    "Do not run the job: check whether it would restore execution.state-recovery.path (operators matched by uid, "
    "max parallelism, in-flight data, every state file read and assigned to the new subtasks), print what it would "
    "restore, start empty, drop or re-hash, and exit with status 0 (it would restore) or 1 (it would not). Set by "
    "--check-restore PATH of programs built on StreamExecutionEnvironment::from_args (Sluice's own).",
    {}, {}};

const ConfigOption<bool> kRehashKeyGroups{
    "execution.state-recovery.rehash-key-groups", false,
    "Restore keyed state recorded with another max parallelism than the job's by hashing every key again into the "
    "job's key groups (the --rehash-key-groups flag; Sluice's own, not in Flink). Needs canonical keyed state "
    "(savepoints, full checkpoints); incremental RocksDB checkpoints are refused. false: a job that sets another "
    "pipeline.max-parallelism than the snapshot's fails to restore (one that sets none adopts the snapshot's).",
    {}, {}};

const ConfigOption<bool> kLocalRecovery{
    "execution.state-recovery.from-local", false,
    "Task-local recovery: every process that runs tasks (the MiniCluster, a TaskManager) keeps a local copy of the "
    "state files its tasks write to checkpoint storage, under taskmanager.state.local.root-dirs; a task restored in "
    "the same process reads its state from there, and from checkpoint storage when the copy is missing or damaged. "
    "Copies of full snapshots and in-flight data only (incremental RocksDB files always come from checkpoint "
    "storage); the directory is removed when the process ends.",
    {"state.backend.local-recovery"}, {}};

const ConfigOption<std::string> kLocalRecoveryRootDirs{
    "taskmanager.state.local.root-dirs", "",
    "Where each process makes its local-recovery directory (sluice-local-state-<pid>-<random>); empty: $TMPDIR, else "
    "/tmp. One directory (Sluice does not spread copies over several).",
    {}, {[](const std::string& v) { return v.find(',') == std::string::npos; }, "one directory, no comma"}};

const ConfigOption<bool> kIncrementalCheckpoints{
    "execution.checkpointing.incremental", false,
    "Incremental checkpoints of RocksDB keyed state: each checkpoint uploads only the SST files no earlier "
    "completed checkpoint uploaded (to <dir>/<job-id>/shared/) and refers to the others. Needs filesystem "
    "checkpoint storage; the HASHMAP backend and savepoints always take full, portable snapshots.",
    {"state.backend.incremental"}, {}};

// ---- restart strategies -------------------------------------------------------------------------------

const ConfigOption<FailoverStrategy> kFailoverStrategy{
    "jobmanager.execution.failover-strategy", FailoverStrategy::kRegion,
    "What a task failure restarts: region restarts only the failed task's pipelined region (the subtasks it "
    "exchanges records with, directly or through others; a job with a key_by, rebalance or broadcast between "
    "all its vertices has one region, so the whole job restarts), full restarts every task. Either way through "
    "the restart strategy, from the latest completed checkpoint. A failure that is not a task's (a checkpoint "
    "failure past the tolerable number, a lost TaskManager in cluster mode) restarts the whole job.",
    {}, {}};

const ConfigOption<std::optional<RestartStrategyType>> kRestartStrategyType{
    "restart-strategy.type", std::nullopt,
    "Restart strategy on job failures: NONE (also OFF, DISABLE), FIXED-DELAY, FAILURE-RATE or "
    "EXPONENTIAL-DELAY (the names without the dash are accepted too). Unset: EXPONENTIAL-DELAY when "
    "checkpointing is enabled, else NONE.",
    {"restart-strategy"}, {}};

const ConfigOption<int32_t> kFixedDelayAttempts{
    "restart-strategy.fixed-delay.attempts", 1,
    "Restarts before the job is declared failed (restart-strategy.type FIXED-DELAY).", {}, at_least(0)};

const ConfigOption<milliseconds> kFixedDelayDelay{
    "restart-strategy.fixed-delay.delay", std::chrono::seconds(1),
    "Wait before each restart (restart-strategy.type FIXED-DELAY); gives external systems time to time out "
    "connections or transactions.",
    {}, {}};

const ConfigOption<int32_t> kFailureRateMaxFailuresPerInterval{
    "restart-strategy.failure-rate.max-failures-per-interval", 1,
    "Restarts allowed within one failure-rate-interval; one more failure inside the interval fails the job "
    "(restart-strategy.type FAILURE-RATE).",
    {}, at_least(1)};

const ConfigOption<milliseconds> kFailureRateInterval{
    "restart-strategy.failure-rate.failure-rate-interval", std::chrono::minutes(1),
    "Length of the sliding window the failure rate is measured over (restart-strategy.type FAILURE-RATE).",
    {}, at_least(milliseconds(1))};

const ConfigOption<milliseconds> kFailureRateDelay{
    "restart-strategy.failure-rate.delay", std::chrono::seconds(1),
    "Wait before each restart (restart-strategy.type FAILURE-RATE).", {}, {}};

const ConfigOption<milliseconds> kExponentialDelayInitialBackoff{
    "restart-strategy.exponential-delay.initial-backoff", std::chrono::seconds(1),
    "Backoff before the first restart, and after a reset (restart-strategy.type EXPONENTIAL-DELAY).", {},
    at_least(milliseconds(1))};

const ConfigOption<milliseconds> kExponentialDelayMaxBackoff{
    "restart-strategy.exponential-delay.max-backoff", std::chrono::minutes(1),
    "Largest backoff between restarts; must be >= initial-backoff (restart-strategy.type EXPONENTIAL-DELAY).",
    {}, at_least(milliseconds(1))};

const ConfigOption<double> kExponentialDelayBackoffMultiplier{
    "restart-strategy.exponential-delay.backoff-multiplier", 1.5,
    "Factor the backoff grows by with each consecutive failure, up to max-backoff (restart-strategy.type "
    "EXPONENTIAL-DELAY).",
    {}, {[](const double& v) { return v > 1.0; }, "> 1"}};

const ConfigOption<milliseconds> kExponentialDelayResetBackoffThreshold{
    "restart-strategy.exponential-delay.reset-backoff-threshold", std::chrono::hours(1),
    "How long the job must run without a failure for the backoff and the attempt count to reset to their "
    "initial values (restart-strategy.type EXPONENTIAL-DELAY).",
    {}, at_least(milliseconds(1))};

const ConfigOption<double> kExponentialDelayJitterFactor{
    "restart-strategy.exponential-delay.jitter-factor", 0.1,
    "Each backoff is moved by a uniformly random amount within +-(factor x backoff), so that many jobs do "
    "not restart at the same moment (restart-strategy.type EXPONENTIAL-DELAY).",
    {}, {[](const double& v) { return v >= 0.0 && v <= 1.0; }, "in [0, 1]"}};

const ConfigOption<int32_t> kExponentialDelayAttemptsBeforeResetBackoff{
    "restart-strategy.exponential-delay.attempts-before-reset-backoff", std::numeric_limits<int32_t>::max(),
    "Restarts before the job is declared failed, counted since the last backoff reset; the default "
    "2147483647 means unlimited (restart-strategy.type EXPONENTIAL-DELAY).",
    {}, at_least(1)};

const ConfigOption<int32_t> kMaxIdenticalFailures{
    "restart-strategy.max-identical-failures", 10,
    "The job fails, naming the error, when this many failures in a row are identical: same status code and same "
    "message once numbers and hex ids in it are replaced by a placeholder, with no checkpoint completed since the "
    "first of them. Applies under every restart strategy; 0 turns the check off.",
    {}, at_least(0)};

const ConfigOption<int32_t> kRestPort{
    "rest.port", 0,
    "Port of the job's REST endpoint; 0 lets the kernel choose a free one (the job registry tells the CLI which). "
    "Flink's default is 8081 for its one cluster endpoint; every Sluice job serves its own.",
    {}, {[](const int32_t& v) { return v >= 0 && v <= 65535; }, "in [0, 65535]"}};

const ConfigOption<std::string> kRestAddress{
    "rest.address", "",
    "Address clients use to reach the job's REST endpoint (recorded in the job registry); also the address it "
    "binds to when rest.bind-address is unset. Empty: the bind address.",
    {}, {}};

const ConfigOption<std::string> kRestBindAddress{
    "rest.bind-address", "",
    "Address the job's REST endpoint binds to. Empty: rest.address, else 127.0.0.1 (loopback only).", {}, {}};

const ConfigOption<int32_t> kMetricsPrometheusPort{
    "metrics.reporter.prom.port", -1,
    "Port on which a TaskManager process serves GET /metrics (its tasks' metrics in Prometheus' text format, as "
    "the REST endpoint's /metrics; Flink's Prometheus reporter key), bound on taskmanager.host. -1: none; 0: a free "
    "port the kernel chooses (printed at start). Processes with a REST endpoint serve /metrics there.",
    {}, {[](const int32_t& v) { return v >= -1 && v <= 65535; }, "in [-1, 65535]"}};

// ---- S3 client (src/fs/s3) -------------------------------------------------------------------------------

namespace {
Constraint<milliseconds> s3_at_least_1ms() {
  return {[](const milliseconds& v) { return v.count() >= 1; }, ">= 1ms"};
}
Constraint<int32_t> in_range(int32_t lo, int32_t hi) {
  return {[lo, hi](const int32_t& v) { return v >= lo && v <= hi; },
          "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"};
}
constexpr uint64_t kS3MinPartSizeBytes = uint64_t{5} << 20;  // S3: every part but the last
constexpr uint64_t kS3MaxPartSizeBytes = uint64_t{5} << 30;  // S3: 5 GiB per part
}  // namespace

const ConfigOption<std::string> kS3Endpoint{
    "s3.endpoint", "",
    "URL of the S3 API, e.g. http://127.0.0.1:9000 (no scheme means https). Empty: AWS's regional endpoint "
    "https://s3.<s3.region>.amazonaws.com.",
    {}, {}};

const ConfigOption<std::string> kS3Region{
    "s3.region", "us-east-1", "Region requests are signed for (AWS Signature Version 4).", {"s3.endpoint.region"},
    {[](const std::string& v) { return !v.empty(); }, "not empty"}};

const ConfigOption<std::string> kS3AccessKey{
    "s3.access-key", "", "Access key id. Empty: the environment variable AWS_ACCESS_KEY_ID.", {"s3.access.key"}, {}};

const ConfigOption<std::string> kS3SecretKey{
    "s3.secret-key", "",
    "Secret access key; never printed or logged. Empty: the environment variable AWS_SECRET_ACCESS_KEY.",
    {"s3.secret.key"}, {}};

const ConfigOption<bool> kS3PathStyleAccess{
    "s3.path.style.access", false,
    "Address buckets as <endpoint>/<bucket>/<key> instead of <bucket>.<endpoint host>/<key>; most S3-compatible "
    "stores need true. An endpoint whose host is an IP address or localhost is always addressed this way.",
    {"s3.path-style-access"}, {}};

const ConfigOption<milliseconds> kS3ConnectTimeout{
    "s3.connection.establish.timeout", std::chrono::seconds(10),
    "Longest wait for a TCP (and TLS) connection to the endpoint; a timeout is retried.", {}, s3_at_least_1ms()};

const ConfigOption<milliseconds> kS3RequestTimeout{
    "s3.connection.request.timeout", std::chrono::seconds(60),
    "Longest time one HTTP request may take, body included; a timeout is retried.", {}, s3_at_least_1ms()};

const ConfigOption<int32_t> kS3RetryLimit{
    "s3.retry.limit", 5,
    "Retries of a request that failed with a retriable error (HTTP 5xx, 429, SlowDown, connection errors, "
    "timeouts) after its first attempt.",
    {}, in_range(0, 30)};

const ConfigOption<milliseconds> kS3RetryInterval{
    "s3.retry.interval", milliseconds(100),
    "Base delay of the exponential backoff: retry n waits a random time in [0, min(max-interval, interval x "
    "2^(n-1))].",
    {}, s3_at_least_1ms()};

const ConfigOption<milliseconds> kS3RetryMaxInterval{
    "s3.retry.max-interval", std::chrono::seconds(5), "Cap of one backoff delay between retries.", {},
    s3_at_least_1ms()};

const ConfigOption<MemorySize> kS3MultipartSize{
    "s3.multipart.size", MemorySize::of_mebibytes(8),
    "Size of each part of a multipart upload but the last (S3 requires at least 5mb), and of each ranged GET of a "
    "parallel download.",
    {},
    {[](const MemorySize& v) { return v.bytes >= kS3MinPartSizeBytes && v.bytes <= kS3MaxPartSizeBytes; },
     "in [5mb, 5gb]"}};

const ConfigOption<MemorySize> kS3MultipartThreshold{
    "s3.multipart.threshold", MemorySize::of_mebibytes(8),
    "Files of at least this size are uploaded as a multipart upload with parts in parallel; smaller ones with one "
    "PUT.",
    {}, {[](const MemorySize& v) { return v.bytes >= kS3MinPartSizeBytes; }, ">= 5mb"}};

const ConfigOption<int32_t> kS3UploadParallelism{
    "s3.upload.parallelism", 4,
    "Parts of one multipart upload in flight at once (a checkpoint file's, or an open part file of the file sink).",
    {}, in_range(1, 64)};

const ConfigOption<int32_t> kS3DownloadParallelism{
    "s3.download.parallelism", 4, "Ranged GETs of one large download in flight at once.", {}, in_range(1, 64)};

const ConfigOption<std::string> kS3EntropyKey{
    "s3.entropy.key", "",
    "Marker in a checkpoint directory: state data files replace it by s3.entropy.length random characters, every "
    "other path drops it.",
    {}, {[](const std::string& v) { return v.find('/') == std::string::npos; }, "no '/'"}};

const ConfigOption<int32_t> kS3EntropyLength{
    "s3.entropy.length", 4, "Random characters that replace s3.entropy.key in the path of a state data file.", {},
    {[](const int32_t& v) { return v > 0; }, "> 0"}};

}  // namespace options

const std::vector<const ConfigOptionBase*>& all_options() {
  static const std::vector<const ConfigOptionBase*> kAll = {
      &options::kDefaultParallelism,       &options::kMaxParallelism,
      &options::kPipelineName,             &options::kFixedJobId,
      &options::kBufferTimeoutInterval,
      &options::kBufferTimeoutEnabled,     &options::kMemorySegmentSize,
      &options::kAutoWatermarkInterval,
      &options::kNetworkBuffersPerChannel, &options::kNetworkMaxBuffersPerChannel,
      &options::kStateBackendType,         &options::kRocksDBLocalDir,
      &options::kRocksDBCacheEnabled,      &options::kRocksDBCacheMaxSize,
      // RocksDB memory, tuning and native metrics
      &options::kRocksDBPredefinedOptions, &options::kRocksDBTimerServiceFactory,
      &options::kRocksDBMemoryManaged,
      &options::kRocksDBMemoryFixedPerTm,  &options::kRocksDBMemoryWriteBufferRatio,
      &options::kRocksDBMemoryHighPrioPoolRatio, &options::kManagedMemorySize,
      &options::kRocksDBMetricsBlockCacheCapacity, &options::kRocksDBMetricsBlockCacheUsage,
      &options::kRocksDBMetricsCurSizeAllMemTables, &options::kRocksDBMetricsMemTableFlushPending,
      &options::kRocksDBMetricsNumRunningFlushes, &options::kRocksDBMetricsNumRunningCompactions,
      // checkpointing
      &options::kRuntimeMode,              &options::kSortedInputsMemory,
      &options::kIoTmpDirs,
      &options::kCheckpointingInterval,    &options::kCheckpointingMode,
      &options::kCheckpointingTimeout,     &options::kCheckpointingMinPause,
      &options::kMaxConcurrentCheckpoints, &options::kTolerableFailedCheckpoints,
      &options::kExternalizedCheckpointRetention,
      &options::kCheckpointsDirectory,     &options::kMaxRetainedCheckpoints,
      &options::kCheckpointDataInlineThreshold,
      &options::kCheckpointsAfterTasksFinish,
      &options::kUnalignedCheckpoints,     &options::kAlignedCheckpointTimeout,
      &options::kCheckpointStorage,        &options::kStateRecoveryPath,
      &options::kStateRecoveryClaimMode,   &options::kIncrementalCheckpoints,
      &options::kSavepointDirectory,       &options::kIgnoreUnclaimedState,      &options::kIgnoreGeneratedIdChanges,
      &options::kRehashKeyGroups,         &options::kCheckRestoreOnly,
      &options::kLocalRecovery,           &options::kLocalRecoveryRootDirs,
      // cluster mode (cluster_options.h)
      &options::kProcessRole,             &options::kJobManagerRpcAddress,
      &options::kJobManagerRpcPort,       &options::kTaskManagerHost,
      &options::kTaskManagerRpcPort,      &options::kTaskManagerDataPort,
      &options::kNumberOfTaskSlots,       &options::kTaskManagerResourceId,
      &options::kHeartbeatInterval,       &options::kHeartbeatTimeout,
      &options::kHeartbeatRpcFailureThreshold, &options::kSlotRequestTimeout, &options::kAskTimeout,
      &options::kEvenlySpreadOutSlots,    &options::kTaskManagerRegistrationTimeout,
      // restart strategies
      &options::kFailoverStrategy,        &options::kRestartStrategyType,
      &options::kFixedDelayAttempts,       &options::kFixedDelayDelay,
      &options::kFailureRateMaxFailuresPerInterval,
      &options::kFailureRateInterval,      &options::kFailureRateDelay,
      &options::kExponentialDelayInitialBackoff,
      &options::kExponentialDelayMaxBackoff,
      &options::kExponentialDelayBackoffMultiplier,
      &options::kExponentialDelayResetBackoffThreshold,
      &options::kExponentialDelayJitterFactor,
      &options::kExponentialDelayAttemptsBeforeResetBackoff,
      &options::kMaxIdenticalFailures,
      // REST endpoint
      &options::kRestPort,                 &options::kRestAddress,
      &options::kRestBindAddress,          &options::kMetricsPrometheusPort,
      // S3 client
      &options::kS3Endpoint,               &options::kS3Region,
      &options::kS3AccessKey,              &options::kS3SecretKey,
      &options::kS3PathStyleAccess,        &options::kS3ConnectTimeout,
      &options::kS3RequestTimeout,         &options::kS3RetryLimit,
      &options::kS3RetryInterval,          &options::kS3RetryMaxInterval,
      &options::kS3MultipartSize,          &options::kS3MultipartThreshold,
      &options::kS3UploadParallelism,      &options::kS3DownloadParallelism,
      &options::kS3EntropyKey,             &options::kS3EntropyLength,
      // logging (logging_options.h)
      &options::kLogLevel,                 &options::kLogFormat,
      &options::kLogPattern,               &options::kProgressLine,
      &options::kJobSummaryPath,
  };
  return kAll;
}

namespace {

const std::unordered_map<std::string_view, OptionLookup>& key_index() {
  static const auto kIndex = [] {
    std::unordered_map<std::string_view, OptionLookup> index;
    for (const ConfigOptionBase* option : all_options()) {
      index.emplace(option->key, OptionLookup{option, false});
      for (const std::string& alias : option->deprecated_keys) index.emplace(alias, OptionLookup{option, true});
    }
    return index;
  }();
  return kIndex;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_segment_prefix_or_suffix(std::string_view part, std::string_view key) {
  if (part.empty() || part.size() >= key.size()) return false;
  bool prefix = key.substr(0, part.size()) == part && key[part.size()] == '.';
  bool suffix = key.substr(key.size() - part.size()) == part && key[key.size() - part.size() - 1] == '.';
  return prefix || suffix;
}

}  // namespace

OptionLookup find_option(std::string_view key) {
  const auto& index = key_index();
  auto it = index.find(key);
  return it == index.end() ? OptionLookup{} : it->second;
}

std::vector<std::string> suggest_keys(std::string_view unknown_key, size_t max_count) {
  const std::string wanted = to_lower(unknown_key);
  // A typo is a few edits; a third of the key's length still reads as "the same key" to a person.
  const size_t threshold = std::max<size_t>(2, wanted.size() / 3);
  std::vector<std::pair<size_t, const std::string*>> candidates;
  for (const ConfigOptionBase* option : all_options()) {
    size_t best = SIZE_MAX;
    bool structural = false;
    std::vector<std::string_view> names{option->key};
    names.insert(names.end(), option->deprecated_keys.begin(), option->deprecated_keys.end());
    for (std::string_view name : names) structural = structural || is_segment_prefix_or_suffix(wanted, name);
    for (std::string_view name : names) {
      // The distance is at least the difference in length, so beyond the threshold it only orders structural
      // matches; computing it anyway for a long unknown key took seconds per megabyte of key.
      const size_t length_difference =
          wanted.size() > name.size() ? wanted.size() - name.size() : name.size() - wanted.size();
      if (structural || length_difference <= threshold) best = std::min(best, config::edit_distance(wanted, name));
    }
    if (best <= threshold || structural) candidates.emplace_back(best, &option->key);
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : *a.second < *b.second; });
  std::vector<std::string> out;
  for (size_t i = 0; i < candidates.size() && i < max_count; ++i) out.push_back(*candidates[i].second);
  return out;
}

}  // namespace sluice
