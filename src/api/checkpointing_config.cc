#include "api/checkpointing_config.h"

#include <chrono>
#include <memory>
#include <utility>

#include <spdlog/spdlog.h>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/jobmanager_checkpoint_storage.h"
#include "checkpoint/restore_path.h"
#include "restart/restart_strategy_factory.h"
#include "sluice/config/derived_options.h"
#include "sluice/config/options.h"

namespace sluice::api {
namespace {

// execution.state-recovery.* -> mc->restore: the savepoint or checkpoint at `restore_path` (`latest`: the newest
// under `checkpoint_dir`).
Status configure_restore(const Configuration& config, const std::string& restore_path,
                         const std::string& checkpoint_dir, const fs::FileSystemRegistry& file_systems,
                         cluster::MiniClusterConfig* mc) {
  SLUICE_ASSIGN_OR_RETURN(checkpoint::RestorePoint rp,
                          checkpoint::resolve_restore_path(restore_path, checkpoint_dir, file_systems));
  SLUICE_RETURN_IF_ERROR(checkpoint::check_restore_properties(rp.metadata, mc->properties)
                             .with_context("--restore " + restore_path + " (" + rp.location + ")"));
  mc->restore = cluster::RestoreFrom{std::move(rp.metadata), std::move(rp.location)};
  mc->restore->claim = config.get(options::kStateRecoveryClaimMode) == RecoveryClaimMode::kClaim;
  if (mc->restore->claim && !mc->checkpointing) {
    // No checkpoint of this job would ever subsume it: it stays where the user keeps it.
    spdlog::warn("{} CLAIM is ignored for {}: checkpointing is off, so the job restores it in NO_CLAIM mode and "
                 "never deletes it", options::kStateRecoveryClaimMode.key, mc->restore->location);
    mc->restore->claim = false;
  }
  mc->restore->allow_non_restored_state = config.get(options::kIgnoreUnclaimedState);
  mc->restore->ignore_generated_id_changes = config.get(options::kIgnoreGeneratedIdChanges);
  if (config.get(options::kRehashKeyGroups)) mc->restore->rehash_key_groups = cluster::KeyGroupRehash::kRehash;
  return Status::ok();
}

// Checkpointing off (STREAMING): the job still gets its coordinator, without periodic trigger, and a filesystem
// storage for savepoints only - rooted nowhere, so the job makes no checkpoint folder, whether or not
// execution.checkpointing.dir is set (Flink's FsCheckpointStorageAccess without a checkpoint directory).
Status configure_savepoints_only(const Configuration& config, const fs::FileSystemRegistry& file_systems,
                                 cluster::MiniClusterConfig* mc) {
  mc->savepoints_without_checkpointing = true;
  auto& cc = mc->checkpoint_config;
  cc.interval = std::chrono::milliseconds(0);
  cc.timeout = config.get(options::kCheckpointingTimeout);
  cc.tolerable_failures = config.get(options::kTolerableFailedCheckpoints);
  SLUICE_RETURN_IF_ERROR(cc.validate());
  checkpoint::FileSystemStorageOptions fo;
  fo.inline_threshold_bytes = static_cast<int64_t>(config.get(options::kCheckpointDataInlineThreshold).bytes);
  fo.file_systems = file_systems;
  fo.names = mc->names;
  mc->storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>("", fo);
  return Status::ok();
}

}  // namespace

Status configure_checkpointing(const Configuration& config, const std::map<std::string, std::string>& properties,
                               const fs::FileSystemRegistry& file_systems, cluster::MiniClusterConfig* mc) {
  mc->checkpointing = checkpointing_enabled(config);
  mc->properties = properties;
  mc->savepoint_dir = config.get(options::kSavepointDirectory);
  std::string restore_path = config.get(options::kStateRecoveryPath);
  if (restore_path.empty() && config.contains(options::kStateRecoveryPath.key)) {
    // Set but empty (`--restore ""`, `-D execution.state-recovery.path=`): an error, never a fresh start.
    return checkpoint::resolve_restore_path(restore_path, "").status();
  }
  for (const ConfigOption<std::string>* o : {&options::kCheckpointsDirectory, &options::kSavepointDirectory}) {
    const std::string value = config.get(*o);
    if (!value.empty()) SLUICE_RETURN_IF_ERROR(file_systems.check_supported(value, o->key));
  }
  if (!restore_path.empty() && restore_path != checkpoint::kRestoreLatest) {
    SLUICE_RETURN_IF_ERROR(file_systems.check_supported(restore_path, "--restore / execution.state-recovery.path"));
  }
  SLUICE_RETURN_IF_ERROR(validate_mode_dependent_options(config));
  if (!mc->checkpointing) {
    SLUICE_RETURN_IF_ERROR(configure_savepoints_only(config, file_systems, mc));
    // `latest` reads execution.checkpointing.dir (refused, naming it, when unset); the job writes nothing there.
    if (restore_path.empty()) return Status::ok();
    return configure_restore(config, restore_path, config.get(options::kCheckpointsDirectory), file_systems, mc);
  }
  auto& cc = mc->checkpoint_config;
  cc.interval = config.get(options::kCheckpointingInterval);
  cc.timeout = config.get(options::kCheckpointingTimeout);
  cc.min_pause = config.get(options::kCheckpointingMinPause);
  cc.max_concurrent = config.get(options::kMaxConcurrentCheckpoints);
  cc.tolerable_failures = config.get(options::kTolerableFailedCheckpoints);
  SLUICE_RETURN_IF_ERROR(cc.validate());
  SLUICE_RETURN_IF_ERROR(validate_unaligned_checkpoints(config));
  mc->unaligned.enabled = config.get(options::kUnalignedCheckpoints);
  mc->unaligned.aligned_checkpoint_timeout = config.get(options::kAlignedCheckpointTimeout);
  mc->at_least_once = config.get(options::kCheckpointingMode) == CheckpointingMode::kAtLeastOnce;
  mc->checkpoints_after_tasks_finish = config.get(options::kCheckpointsAfterTasksFinish);
  mc->num_retained = config.get(options::kMaxRetainedCheckpoints);
  switch (config.get(options::kExternalizedCheckpointRetention)) {
    case ExternalizedCheckpointRetention::kNoExternalizedCheckpoints:
      mc->retention = checkpoint::ExternalizedCheckpointRetention::kNoExternalizedCheckpoints;
      break;
    case ExternalizedCheckpointRetention::kDeleteOnCancellation:
      mc->retention = checkpoint::ExternalizedCheckpointRetention::kDeleteOnCancellation;
      break;
    case ExternalizedCheckpointRetention::kRetainOnCancellation:
      mc->retention = checkpoint::ExternalizedCheckpointRetention::kRetainOnCancellation;
      break;
  }
  SLUICE_ASSIGN_OR_RETURN(CheckpointStorageType type, checkpoint_storage_type(config));
  std::string dir = config.get(options::kCheckpointsDirectory);
  std::string memory_warning;
  checkpoint::FileSystemStorageOptions fo;
  fo.inline_threshold_bytes = static_cast<int64_t>(config.get(options::kCheckpointDataInlineThreshold).bytes);
  fo.file_systems = file_systems;
  fo.names = mc->names;
  if (type == CheckpointStorageType::kFileSystem) {
    mc->storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(dir, fo);
  } else {
    // Savepoints (and restores from files) go to files, as in Flink: a storage rooted nowhere, which makes no
    // checkpoint folder.
    mc->storage = std::make_shared<checkpoint::JobManagerCheckpointStorage>(
        checkpoint::JobManagerStorageOptions{}, std::make_shared<checkpoint::FileSystemCheckpointStorage>("", fo));
    // Flink's default too, but rarely what someone enabling checkpointing means: say it once, at job start.
    // The legacy state.backend.type jobmanager implies this storage whatever else is set: the fix starts there.
    const bool legacy = config.get(options::kStateBackendType) == StateBackendType::kLegacyJobManager;
    const std::string backend_fix = "set " + options::kStateBackendType.key + " to hashmap or rocksdb (the legacy "
                                    "jobmanager keeps checkpoints in memory)";
    const std::string fix =
        dir.empty() ? (legacy ? backend_fix + " and " : std::string("set ")) + options::kCheckpointsDirectory.key +
                          " to a folder to keep them in files"
        : legacy    ? backend_fix + " to keep them in " + dir
                    : "set " + options::kCheckpointStorage.key + " to filesystem to keep them in " + dir;
    memory_warning = "checkpointing is on, but no checkpoint folder is used (JobManager checkpoint storage): the "
                     "checkpoints live in this process's memory only, so none survives this process (savepoints "
                     "still go to files); " + fix;
  }
  SLUICE_ASSIGN_OR_RETURN(mc->restart, restart_strategy_config(config, true));
  mc->failover_strategy = config.get(options::kFailoverStrategy);
  mc->incremental_checkpoints = config.get(options::kIncrementalCheckpoints);
  if (mc->incremental_checkpoints && !mc->storage->supports_incremental()) {
    spdlog::warn("execution.checkpointing.incremental is ignored: checkpoint storage {} cannot hold shared files "
                 "(set execution.checkpointing.dir); taking full snapshots",
                 mc->storage->describe());
    mc->incremental_checkpoints = false;
  }
  if (!restore_path.empty()) SLUICE_RETURN_IF_ERROR(configure_restore(config, restore_path, dir, file_systems, mc));
  // Once the job will run: a refused --restore says only why.
  if (!memory_warning.empty()) spdlog::warn("{}", memory_warning);
  return Status::ok();
}

}  // namespace sluice::api
