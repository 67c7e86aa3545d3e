#include "sluice/config/derived_options.h"

#include <optional>
#include <string>

namespace sluice {

bool checkpointing_enabled(const Configuration& config) {
  return config.get(options::kCheckpointingInterval).count() > 0;
}

Status validate_unaligned_checkpoints(const Configuration& config) {
  if (!config.get(options::kUnalignedCheckpoints)) return Status::ok();
  const std::string key = options::kUnalignedCheckpoints.key;
  if (config.get(options::kCheckpointingMode) != CheckpointingMode::kExactlyOnce) {
    return Status::invalid_argument(key + " = true needs " + options::kCheckpointingMode.key +
                                    " EXACTLY_ONCE (unaligned checkpoints are exactly-once by construction; "
                                    "turn one of them off)");
  }
  const int32_t max_concurrent = config.get(options::kMaxConcurrentCheckpoints);
  if (max_concurrent != 1) {
    return Status::invalid_argument(key + " = true needs " + options::kMaxConcurrentCheckpoints.key +
                                    " = 1, got " + std::to_string(max_concurrent) +
                                    " (in-flight data is persisted for one checkpoint at a time)");
  }
  return Status::ok();
}

Status validate_mode_dependent_options(const Configuration& config) {
  const bool unaligned = config.get(options::kUnalignedCheckpoints);
  if (!checkpointing_enabled(config)) {
    const std::string off = " has no effect while checkpointing is off (" + options::kCheckpointingInterval.key +
                            " is 0): set a checkpoint interval, or leave the option out";
    if (unaligned) return Status::invalid_argument(options::kUnalignedCheckpoints.key + " = true" + off);
    if (config.get(options::kCheckpointingMode) == CheckpointingMode::kAtLeastOnce) {
      return Status::invalid_argument(options::kCheckpointingMode.key + " = AT_LEAST_ONCE" + off);
    }
  }
  if (!unaligned && config.contains(options::kAlignedCheckpointTimeout.key)) {
    return Status::invalid_argument(
        options::kAlignedCheckpointTimeout.key + " is set (" +
        OptionType<std::chrono::milliseconds>::format(config.get(options::kAlignedCheckpointTimeout)) +
        ") but has no effect: it applies to unaligned checkpoints only (set " + options::kUnalignedCheckpoints.key +
        ": true, or leave the timeout out)");
  }
  return Status::ok();
}

namespace {

// The checkpoint storage a legacy state.backend.type names, if it is one.
std::optional<CheckpointStorageType> legacy_storage_of(StateBackendType type) {
  switch (type) {
    case StateBackendType::kLegacyJobManager:
      return CheckpointStorageType::kJobManager;
    case StateBackendType::kLegacyFileSystem:
    case StateBackendType::kLegacyRocksDB:
      return CheckpointStorageType::kFileSystem;
    case StateBackendType::kHashMap:
    case StateBackendType::kRocksDB:
      break;
  }
  return std::nullopt;
}

}  // namespace

StateBackendType state_backend_kind_of(const Configuration& config) {
  switch (config.get(options::kStateBackendType)) {
    case StateBackendType::kRocksDB:
    case StateBackendType::kLegacyRocksDB:
      return StateBackendType::kRocksDB;
    case StateBackendType::kHashMap:
    case StateBackendType::kLegacyJobManager:
    case StateBackendType::kLegacyFileSystem:
      break;
  }
  return StateBackendType::kHashMap;
}

Result<CheckpointStorageType> checkpoint_storage_type(const Configuration& config) {
  const bool has_dir = !config.get(options::kCheckpointsDirectory).empty();
  std::optional<CheckpointStorageType> set = config.get(options::kCheckpointStorage);
  const StateBackendType backend = config.get(options::kStateBackendType);
  if (std::optional<CheckpointStorageType> legacy = legacy_storage_of(backend)) {
    const std::string name = OptionType<StateBackendType>::format(backend);
    const std::string storage = OptionType<CheckpointStorageType>::format(*legacy);
    if (set && *set != *legacy) {
      return Status::invalid_argument(options::kStateBackendType.key + ": the legacy backend " + name + " implies " +
                                      storage + " checkpoint storage, but " + options::kCheckpointStorage.key +
                                      " is " + OptionType<CheckpointStorageType>::format(*set) +
                                      " (use state.backend.type: hashmap or rocksdb to choose the storage freely)");
    }
    if (*legacy == CheckpointStorageType::kFileSystem && !has_dir) {
      return Status::invalid_argument(options::kStateBackendType.key + ": the legacy backend " + name +
                                      " uses FILESYSTEM checkpoint storage, which needs a checkpoint directory, but " +
                                      options::kCheckpointsDirectory.key + " is empty");
    }
    return *legacy;
  }
  if (!set) return has_dir ? CheckpointStorageType::kFileSystem : CheckpointStorageType::kJobManager;
  if (*set == CheckpointStorageType::kFileSystem && !has_dir) {
    return Status::invalid_argument(options::kCheckpointStorage.key +
                                    ": FILESYSTEM needs a checkpoint directory, but " +
                                    options::kCheckpointsDirectory.key + " is empty");
  }
  return *set;
}

RestartStrategyType restart_strategy_type(const Configuration& config, bool checkpointing_enabled) {
  std::optional<RestartStrategyType> set = config.get(options::kRestartStrategyType);
  if (set) return *set;
  return checkpointing_enabled ? RestartStrategyType::kExponentialDelay : RestartStrategyType::kNone;
}

}  // namespace sluice
