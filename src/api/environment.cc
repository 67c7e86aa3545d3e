#include "sluice/api/environment.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <cstdlib>
#include <string_view>

#include <spdlog/spdlog.h>

#include "api/checkpointing_config.h"
#include "api/job_endpoint.h"
#include "api/job_flags.h"
#include "api/job_signals.h"
#include "api/job_summary.h"
#include "api/progress_line.h"
#include "api/rocksdb_backend_options.h"
#include "batch/batch_job.h"
#include "batch/stage_plan.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/local_recovery_storage.h"
#include "checkpoint/restore_path.h"
#include "cluster/job_claims.h"
#include "cluster/mini_cluster.h"
#include "cluster/restore_check.h"
#include "core/log_context.h"
#include "fs/file_systems_from_config.h"
#include "fs/folder_lock.h"
#include "graph/job_graph.h"
#include "graph/job_graph_fingerprint.h"
#include "logging/logging_config.h"
#include "rpc/cluster_process.h"
#include "sluice/api/program_args.h"
#include "sluice/config/cluster_options.h"
#include "sluice/config/derived_options.h"
#include "sluice/config/logging_options.h"
#include "sluice/config/options.h"

namespace sluice {

StreamExecutionEnvironment::StreamExecutionEnvironment(Configuration config) : config_(std::move(config)) {
  logging::log_to_stderr();  // before anything logs: stdout is the program's own
}

Result<StreamExecutionEnvironment> StreamExecutionEnvironment::from_args(int argc, const char* const* argv) {
  SLUICE_ASSIGN_OR_RETURN(ProgramArgs args, parse_program_args(argc, argv));
  if (args.help_requested) {
    // A program with flags of its own calls parse_program_args and prints them after these.
    std::printf("%s", api::program_args_help_for(argc > 0 ? argv[0] : nullptr).c_str());
    std::fflush(stdout);
    std::exit(0);
  }
  // A mistyped flag (--restor) must not run the job afresh as if it were absent.
  if (!args.remaining.empty()) {
    const std::string& arg = args.remaining.front();
    return Status::invalid_argument("unknown argument '" + arg + "'" + api::unknown_argument_hint(arg) +
                                    " (Sluice's flags: --help; a program with flags of its own reads them with "
                                    "sluice::parse_program_args)");
  }
  return std::move(args.env);
}

StreamExecutionEnvironment& StreamExecutionEnvironment::set_parallelism(int32_t parallelism) {
  Status s = config_.try_set(options::kDefaultParallelism, parallelism);
  if (!s.is_ok()) throw std::invalid_argument(s.message());
  return *this;
}

StreamExecutionEnvironment& StreamExecutionEnvironment::enable_checkpointing(int64_t interval_ms, CheckpointingMode mode) {
  if (interval_ms <= 0) {
    throw std::invalid_argument("enable_checkpointing: " + options::kCheckpointingInterval.key +
                                " must be a positive number of milliseconds, got " + std::to_string(interval_ms) +
                                " (checkpointing is off unless enabled)");
  }
  Status s = config_.try_set(options::kCheckpointingInterval, std::chrono::milliseconds(interval_ms));
  if (s.is_ok()) s = config_.try_set(options::kCheckpointingMode, mode);
  if (!s.is_ok()) throw std::invalid_argument(s.message());
  return *this;
}

int32_t StreamExecutionEnvironment::parallelism() const { return config_.get(options::kDefaultParallelism); }

StreamExecutionEnvironment& StreamExecutionEnvironment::set_max_parallelism(int32_t max_parallelism) {
  Status s = config_.try_set(options::kMaxParallelism, max_parallelism);
  if (!s.is_ok()) throw std::invalid_argument(s.message());
  return *this;
}

int32_t StreamExecutionEnvironment::max_parallelism() const { return config_.get(options::kMaxParallelism); }

StreamExecutionEnvironment& StreamExecutionEnvironment::set_job_property(std::string key, std::string value) {
  job_properties_[std::move(key)] = std::move(value);
  return *this;
}

namespace {

// The longest wait between a failure and the restart under `restart` (0 without restarts).
int64_t longest_restart_delay_ms(const RestartStrategyConfig& restart) {
  switch (restart.type) {
    case RestartStrategyType::kFixedDelay: return restart.fixed_delay.delay_ms;
    case RestartStrategyType::kFailureRate: return restart.failure_rate.delay_ms;
    case RestartStrategyType::kExponentialDelay: return restart.exponential_delay.max_backoff_ms;
    case RestartStrategyType::kNone: return 0;
  }
  return 0;
}

// Logs what the job's sinks find wrong with its settings.
void log_submission_warnings(const StreamGraph& graph, const cluster::MiniClusterConfig& mc) {
  SinkSubmissionContext job;
  job.checkpointing = mc.checkpointing;
  if (mc.checkpointing) {
    job.checkpoint_interval_ms = mc.checkpoint_config.interval.count();
    job.checkpoint_timeout_ms = mc.checkpoint_config.timeout.count();
    job.max_restart_delay_ms = longest_restart_delay_ms(mc.restart);
  }
  for (const auto& node : graph.nodes) {
    if (!node.submission_warnings) continue;
    for (const auto& w : node.submission_warnings(job)) spdlog::warn("{}", w);
  }
}

// execution.runtime-mode: BATCH, or AUTOMATIC with every source bounded.
bool runs_in_batch(const Configuration& config, const StreamGraph& graph) {
  switch (config.get(options::kRuntimeMode)) {
    case RuntimeExecutionMode::kStreaming: return false;
    case RuntimeExecutionMode::kBatch: return true;
    case RuntimeExecutionMode::kAutomatic: return batch::unbounded_sources(graph).empty();
  }
  return false;
}

// The BATCH job's settings; checkpointing keys do not apply (no checkpoints in BATCH).
Result<batch::BatchJobConfig> batch_config(const Configuration& config, const cluster::MiniClusterConfig& mc) {
  if (!config.get(options::kStateRecoveryPath).empty() || config.contains(options::kStateRecoveryPath.key)) {
    return Status::invalid_argument("--restore / execution.state-recovery.path is set, but a BATCH job (execution.runtime-mode) "
                                    "takes no checkpoints and restores none: run it in STREAMING to restore");
  }
  if (checkpointing_enabled(config)) {
    spdlog::warn("execution.runtime-mode BATCH: execution.checkpointing.interval is ignored (a BATCH job takes no "
                 "checkpoints; a failed stage re-runs from its inputs)");
  }
  if (config.get(options::kStateBackendType) != StateBackendType::kHashMap) {
    spdlog::warn("execution.runtime-mode BATCH: state.backend.type is ignored (BATCH keyed state holds one key at a "
                 "time on the heap, as Flink's batch state backend; docs/batch.md)");
  }
  batch::BatchJobConfig bc;
  bc.network = mc.network;
  bc.clock = mc.clock;
  bc.file_systems = mc.file_systems;
  bc.names = mc.names;
  bc.job_id = mc.job_id;
  std::string tmp = config.get(options::kIoTmpDirs);
  tmp = tmp.substr(0, tmp.find(':'));
  bc.tmp_dir = tmp.empty() ? "/tmp" : tmp;
  bc.sort_memory_bytes = static_cast<int64_t>(config.get(options::kSortedInputsMemory).bytes);
  bc.auto_watermark_interval_ms = mc.auto_watermark_interval_ms;
  // Recovery by replay is the point of BATCH: restarts are on by default, as with checkpointing in STREAMING.
  SLUICE_ASSIGN_OR_RETURN(bc.restart, restart_strategy_config(config, true));
  return bc;
}

// --check-restore (execution.state-recovery.check-only): would this job restore the configured path? Prints the
// report (cluster/restore_check.h) and exits the process: 0 when it would restore, 1 when not. Checkpointing need
// not be on for the check: the snapshot is read through a filesystem checkpoint storage.
[[noreturn]] void check_restore_and_exit(const Configuration& config, const fs::FileSystemRegistry& file_systems,
                                         const StreamGraph& graph,
                                         const std::map<std::string, std::string>& properties,
                                         graph::JobGraphOptions jo) {
  auto fail = [](const std::string& problem) {
    std::printf("problem: %s\nwould NOT restore: 1 problem\n", problem.c_str());
    std::fflush(stdout);
    std::exit(1);
  };
  const std::string path = config.get(options::kStateRecoveryPath);
  if (path.empty()) fail("--check-restore: no savepoint or checkpoint path given (execution.state-recovery.path)");
  auto rp = checkpoint::resolve_restore_path(path, config.get(options::kCheckpointsDirectory), file_systems,
                                             "--check-restore");
  if (!rp.is_ok()) fail(rp.status().to_string());
  cluster::RestoreFrom restore{std::move(rp->metadata), std::move(rp->location)};
  restore.allow_non_restored_state = config.get(options::kIgnoreUnclaimedState);
  restore.ignore_generated_id_changes = config.get(options::kIgnoreGeneratedIdChanges);
  if (config.get(options::kRehashKeyGroups)) restore.rehash_key_groups = cluster::KeyGroupRehash::kRehash;
  if (Status s = checkpoint::check_restore_properties(restore.metadata, properties); !s.is_ok()) fail(s.to_string());
  auto max_p = cluster::max_parallelism_for_restore(restore.metadata, restore.location, jo.max_parallelism,
                                                    restore.rehash_key_groups);
  if (!max_p.is_ok()) fail(max_p.status().to_string());
  jo.max_parallelism = *max_p;
  auto jg = graph::build_job_graph(graph, jo);
  if (!jg.is_ok()) fail(jg.status().to_string());
  checkpoint::FileSystemStorageOptions storage_options;
  storage_options.file_systems = file_systems;
  checkpoint::FileSystemCheckpointStorage storage(config.get(options::kCheckpointsDirectory), storage_options);
  const cluster::RestoreCheck check = cluster::check_restore(
      graph, *jg, restore, storage, OptionType<StateBackendType>::format(state_backend_kind_of(config)));
  std::printf("%s", check.to_text().c_str());
  std::fflush(stdout);
  std::exit(check.would_restore() ? 0 : 1);
}

// The job's exclusive claims: its sinks' outputs, its checkpoint folder and the checkpoint it restores in CLAIM mode (a
// savepoint is never claimed - cluster/mini_cluster.h - so never deleted by this job).
Result<std::vector<std::unique_ptr<HeldClaim>>> take_claims(const Configuration& config, const StreamGraph& sg,
                                                            const cluster::MiniClusterConfig& mc,
                                                            const ClaimingJob& claimant) {
  const std::string checkpoint_dir = mc.checkpointing ? config.get(options::kCheckpointsDirectory) : "";
  const std::string claimed_restore =
      mc.restore && mc.restore->claim && mc.restore->metadata.type != checkpoint::SnapshotType::kSavepoint
          ? mc.restore->location
          : "";
  return cluster::take_job_claims(sg, claimant, checkpoint_dir, mc.file_systems, claimed_restore);
}

// The settings a job's tasks must share wherever they run (Flink ships them with every deployment): part of the
// cluster's JobGraph fingerprint, so a TaskManager started with others (another checkpointing mode, state backend,
// checkpoint folder, buffer sizes) is refused instead of running subtasks that disagree with their peers.
std::map<std::string, std::string> task_settings(const Configuration& config, const cluster::MiniClusterConfig& mc) {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  return {{"checkpointing", b(mc.checkpointing)},
          {"checkpointing.at-least-once", b(mc.at_least_once)},
          {"checkpointing.unaligned", b(mc.unaligned.enabled)},
          {"checkpointing.aligned-timeout-ms", std::to_string(mc.unaligned.aligned_checkpoint_timeout.count())},
          {"checkpointing.after-tasks-finish", b(mc.checkpoints_after_tasks_finish)},
          {"checkpointing.incremental", b(mc.incremental_checkpoints)},
          {"checkpointing.dir", mc.checkpointing ? config.get(options::kCheckpointsDirectory) : ""},
          {"state.backend", mc.state_backend_type},
          {"network.buffer-bytes", std::to_string(mc.network.buffer_size_bytes)},
          {"network.credits", std::to_string(mc.network.credits_per_channel)},
          {"network.max-buffers", std::to_string(mc.network.max_buffers_per_channel)},
          {"buffer-timeout-ms", mc.buffer_timeout_enabled ? std::to_string(mc.buffer_timeout.count()) : "off"},
          {"auto-watermark-interval-ms", std::to_string(mc.auto_watermark_interval_ms)}};
}

// Where the job writes, as every process of a cluster resolves it: the checkpoint folder and each sink's claims
// (output folders, transaction prefixes; sluice/core/exclusive_claim.h), a local folder by its canonical absolute
// path. Part of the JobGraph fingerprint, so a TaskManager that would write elsewhere - a relative path started in
// another working directory, another --output - is refused at registration instead of the job reporting success
// over output the JobManager never sees.
std::map<std::string, std::string> write_locations(const StreamGraph& graph, const std::string& job_name,
                                                   const Configuration& config, const cluster::MiniClusterConfig& mc) {
  std::map<std::string, std::string> out;
  if (mc.checkpointing && !mc.storage->keeps_checkpoints_in_memory()) {
    const std::string dir = config.get(options::kCheckpointsDirectory);
    const std::optional<ExclusiveClaim> local = fs::local_folder_claim(dir, dir);
    out["writes.checkpoints"] = local && !local->key.empty() ? local->key : dir;
  }
  for (const StreamNode& node : graph.nodes) {
    if (!node.exclusive_claims) continue;
    std::string where;
    for (const ExclusiveClaim& c : node.exclusive_claims(ClaimContext{job_name, node.uid, mc.file_systems})) {
      where += (c.key.empty() ? c.what : c.key) + ";";
    }
    out["writes.sink." + std::to_string(node.id)] = where;
  }
  return out;
}

// execution.state-recovery.from-local: the tasks of this process write a local copy of their state files next to
// checkpoint storage (checkpoint/local_recovery_storage.h), in a directory of this process's own.
Status keep_local_state(const Configuration& config, cluster::MiniClusterConfig& mc) {
  if (!mc.checkpointing || !config.get(options::kLocalRecovery)) return Status::ok();
  if (mc.storage->keeps_checkpoints_in_memory()) {
    spdlog::warn("{} is on, but the checkpoints are kept in memory ({}): there are no state files to copy, so local "
                 "recovery does nothing",
                 options::kLocalRecovery.key, mc.storage->describe());
    return Status::ok();
  }
  std::string root = config.get(options::kLocalRecoveryRootDirs);
  if (root.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    root = tmp != nullptr && *tmp == '/' ? tmp : "/tmp";
  }
  const std::string dir =
      root + "/sluice-local-state-" + std::to_string(::getpid()) + "-" + mc.names->hex("local-state", 8);
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> local_fs, mc.file_systems->for_path(dir));
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<checkpoint::LocalRecoveryStorage> local,
                          checkpoint::LocalRecoveryStorage::create(mc.storage, std::move(local_fs), dir));
  spdlog::info("local recovery: local copies of the state in {}", dir);
  mc.storage = std::move(local);
  return Status::ok();
}

// execution.process-role JOBMANAGER or TASKMANAGER: the program runs as one process of a cluster
// (rpc/cluster_process.h); `graph` is handed over as by execute_async.
Result<std::unique_ptr<JobClient>> execute_in_cluster(const Configuration& config, std::shared_ptr<StreamGraph>& graph,
                                                      ProcessRole role, graph::JobGraph jg,
                                                      const cluster::MiniClusterConfig& mc, const ClaimingJob& claimant) {
  const std::string role_name(OptionType<ProcessRole>::format(role));
  SLUICE_ASSIGN_OR_RETURN(rpc::ClusterProcessConfig process, rpc::ClusterProcessConfig::from(config));
  if (mc.checkpointing && mc.storage->keeps_checkpoints_in_memory()) {
    // JobManager checkpoint storage is one process's memory: a TaskManager could not read back what it restores.
    return Status::invalid_argument(options::kProcessRole.key + " " + role_name + ": checkpoint storage " +
                                    mc.storage->describe() + " lives in one process's memory; set " +
                                    options::kCheckpointsDirectory.key +
                                    " to an s3:// path or a folder every host of the cluster reaches");
  }
  std::map<std::string, std::string> settings = task_settings(config, mc);
  for (auto& [key, value] : write_locations(*graph, jg.job_name, config, mc)) settings[key] = std::move(value);
  const uint64_t fingerprint = graph::job_graph_fingerprint(*graph, jg, mc.properties, settings);
  std::map<std::string, std::string> named = graph::fingerprint_settings(mc.properties, settings);
  std::shared_ptr<const StreamGraph> sg = std::move(graph);
  graph = std::make_shared<StreamGraph>();
  if (role == ProcessRole::kTaskManager) {
    // The JobManager holds the job's claims; a TaskManager only runs the subtasks it is given.
    return rpc::start_task_manager(std::move(sg), std::move(jg), mc, process, fingerprint, std::move(named));
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<HeldClaim>> claims, take_claims(config, *sg, mc, claimant));
  return rpc::start_job_manager(std::move(sg), std::move(jg), mc, std::move(claims), process, fingerprint,
                                std::move(named));
}

}  // namespace

Result<std::unique_ptr<JobClient>> StreamExecutionEnvironment::execute_async(const std::string& job_name) {
  if (graph_->nodes.empty()) {
    return Status::invalid_argument(
        "the job has no operators: add a source and a sink (a program's operators are used up by execute(); "
        "build the program again to run it again)");
  }
  SLUICE_RETURN_IF_ERROR(logging::configure_logging(config_));
  if (config_.get(options::kCheckRestoreOnly)) {
    graph::JobGraphOptions jo;
    jo.job_name = job_name;
    jo.default_parallelism = parallelism();
    jo.max_parallelism = max_parallelism();
    check_restore_and_exit(config_, file_systems_ ? *file_systems_ : fs::file_systems_from(config_), *graph_,
                           job_properties_, jo);
  }
  cluster::MiniClusterConfig mc;
  mc.network.buffer_size_bytes = static_cast<int32_t>(config_.get(options::kMemorySegmentSize).bytes);
  mc.network.credits_per_channel = config_.get(options::kNetworkBuffersPerChannel);
  mc.network.max_buffers_per_channel = config_.get(options::kNetworkMaxBuffersPerChannel);
  mc.buffer_timeout = config_.get(options::kBufferTimeoutInterval);
  mc.buffer_timeout_enabled = config_.get(options::kBufferTimeoutEnabled);
  mc.auto_watermark_interval_ms = config_.get(options::kAutoWatermarkInterval).count();
  mc.state_backend_type = OptionType<StateBackendType>::format(state_backend_kind_of(config_));
  mc.rocksdb = api::rocksdb_backend_options(config_);
  if (state_backend_kind_of(config_) == StateBackendType::kRocksDB) SLUICE_RETURN_IF_ERROR(mc.rocksdb.memory.validate());
  mc.rocksdb.options_factory = rocksdb_options_factory_;
  mc.clock = clock_;
  mc.names = name_source_or_random(names_);
  if (const std::string fixed = config_.get(options::kFixedJobId); !fixed.empty()) {
    JobId id;
    if (!JobId::parse(fixed, &id)) {
      return Status::invalid_argument(options::kFixedJobId.key + ": '" + fixed + "' is not 32 lowercase hex digits");
    }
    mc.job_id = id;
  }
  mc.file_systems = file_systems_ ? file_systems_
                                  : std::make_shared<const fs::FileSystemRegistry>(fs::file_systems_from(config_, mc.names));
  graph::JobGraphOptions jo;
  std::string configured_name = config_.get(options::kPipelineName);
  jo.job_name = configured_name.empty() ? job_name : configured_name;
  jo.default_parallelism = parallelism();
  jo.max_parallelism = max_parallelism();
  // The job id is decided here, so the job's claims (output folders, checkpoint folder) record it.
  if (!mc.job_id) mc.job_id = mc.names->job_id();
  const ClaimingJob claimant = cluster::claiming_job(jo.job_name, *mc.job_id);
  const ProcessRole role = config_.get(options::kProcessRole);
  // The job's id on what submitting logs (a TaskManager's own id is not the job's: none there).
  log::ScopedLogContext submission_log_context(role == ProcessRole::kTaskManager ? "" : mc.job_id->to_hex(), "");
  if (runs_in_batch(config_, *graph_)) {
    if (role != ProcessRole::kMiniCluster) {
      // Every process would otherwise run the whole job by itself and write its output once each.
      return Status::invalid_argument(
          options::kProcessRole.key + " " + std::string(OptionType<ProcessRole>::format(role)) + ": the job runs in " +
          "BATCH (" + options::kRuntimeMode.key + ", or AUTOMATIC with bounded sources only), which cluster mode does "
          "not run yet; set " + options::kRuntimeMode.key + " to STREAMING");
    }
    SLUICE_ASSIGN_OR_RETURN(batch::BatchJobConfig bc, batch_config(config_, mc));
    SLUICE_ASSIGN_OR_RETURN(graph::JobGraph batch_jg, graph::build_job_graph(*graph_, jo));
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<HeldClaim>> claims,
                            cluster::take_job_claims(*graph_, claimant, "", mc.file_systems));
    std::shared_ptr<const StreamGraph> sg = std::move(graph_);
    graph_ = std::make_shared<StreamGraph>();
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<batch::BatchJobClient> job,
                            batch::submit_batch_job(std::move(sg), std::move(batch_jg), bc, std::move(claims)));
    return std::unique_ptr<JobClient>(std::move(job));
  }
  SLUICE_RETURN_IF_ERROR(api::configure_checkpointing(config_, job_properties_, *mc.file_systems, &mc));
  if (mc.restore) {
    // Set none: the snapshot's is adopted (Flink's rule); another one fails unless its keys are re-hashed.
    SLUICE_ASSIGN_OR_RETURN(jo.max_parallelism,
                            cluster::max_parallelism_for_restore(mc.restore->metadata, mc.restore->location,
                                                                 max_parallelism(), mc.restore->rehash_key_groups));
  }
  auto jg = graph::build_job_graph(*graph_, jo);
  if (!jg.is_ok() && mc.restore && max_parallelism() == -1 && jo.max_parallelism != -1) {
    return jg.status().with_context("max parallelism " + std::to_string(jo.max_parallelism) + " adopted from " +
                                    mc.restore->location);
  }
  if (!jg.is_ok()) return jg.status();
  log_submission_warnings(*graph_, mc);
  if (role != ProcessRole::kJobManager) SLUICE_RETURN_IF_ERROR(keep_local_state(config_, mc));
  if (role != ProcessRole::kMiniCluster) {
    return execute_in_cluster(config_, graph_, role, std::move(jg).value(), mc, claimant);
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<HeldClaim>> claims, take_claims(config_, *graph_, mc, claimant));

  // The graph now belongs to the job; the environment starts a fresh program (as Flink clears its
  // transformations after execute).
  std::shared_ptr<const StreamGraph> sg = std::move(graph_);
  graph_ = std::make_shared<StreamGraph>();
  return cluster::submit_job(std::move(sg), std::move(jg).value(), mc, std::move(claims));
}

Result<JobExecutionResult> StreamExecutionEnvironment::execute(const std::string& job_name) {
  api::JobSignalScope signals;  // from here on SIGINT / SIGTERM cancel the job cleanly; a second one exits
  // The REST endpoint binds before the job is submitted, so a bad rest.* value fails before anything runs. A
  // TaskManager serves none: its JobManager serves the job's.
  std::unique_ptr<api::JobEndpoint> endpoint;
  if (config_.get(options::kProcessRole) != ProcessRole::kTaskManager) {
    SLUICE_ASSIGN_OR_RETURN(endpoint, api::JobEndpoint::open(config_));
    endpoint->describe(*this, job_name);
  }
  // The summary file is opened before the job runs, so a path that cannot be written fails first.
  std::optional<api::JobSummaryFile> summary_file;
  if (config_.get(options::kProcessRole) != ProcessRole::kTaskManager) {
    SLUICE_ASSIGN_OR_RETURN(summary_file, api::open_job_summary(config_));
  }
  std::vector<std::string> sources;  // by name, for the progress line (the graph goes with execute_async)
  for (const StreamNode& node : graph_->nodes) {
    if (node.kind == StreamNode::Kind::kSource) sources.push_back(node.name);
  }
  const bool show_progress = api::progress_line_wanted(config_, stderr);
  auto client = execute_async(job_name);
  if (!client.is_ok()) {
    signals.set_cancel({});
    return client.status();
  }
  signals.set_cancel([c = client->get()] { c->cancel(); });
  const std::string job_id = (*client)->job_id().to_hex();
  // Lines of threads outside the job's own carry its id (core/log_context.h). Not in a TaskManager: its client's id
  // is its own, the JobManager's job id reaches it with the deployments (its task threads log that one).
  std::optional<log::ScopedRunningJob> running;
  if (config_.get(options::kProcessRole) != ProcessRole::kTaskManager) running.emplace(job_id);
  if (endpoint) {
    endpoint->serve(**client);
    spdlog::info("job {}: REST endpoint {} (sluice list, cancel, savepoint, stop)", job_id, endpoint->url());
  }
  std::optional<api::ProgressLine> progress;
  if (show_progress) {
    progress.emplace(**client, std::move(sources), stderr, "records");
  }
  JobExecutionResult result = (*client)->wait();
  if (progress) progress->stop();
  if (endpoint) endpoint->close();  // unregistered and no longer served
  signals.set_cancel({});           // the job ended: a signal now exits at once
  if (const int sig = signals.received(); sig != 0) {
    spdlog::info("job {}: cancelled by {}", result.job_id.to_hex(), sig == SIGINT ? "SIGINT" : "SIGTERM");
  }
  if (endpoint) {
    if (const std::optional<std::string> savepoint = endpoint->stopped_with_savepoint()) {
      spdlog::info("job {}: stopped with a savepoint: {}", result.job_id.to_hex(), *savepoint);
    }
  }
  if (summary_file) {
    nlohmann::json summary = nlohmann::json::object();
    api::add_job_summary(summary, result, **client);
    // The job ran: a summary that cannot be written is logged, the job's own result stands.
    if (Status s = summary_file->write(summary); !s.is_ok()) spdlog::error("job {}: {}", job_id, s.to_string());
  }
  return result;
}

template class SourceOperator<std::string, IndexRangeSplit>;
template class SourceCoordinator<std::string, IndexRangeSplit>;
template class SourceOperator<int64_t, IndexRangeSplit>;
template class SourceCoordinator<int64_t, IndexRangeSplit>;

}  // namespace sluice
