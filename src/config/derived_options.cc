#include "sluice/config/derived_options.h"

#include <optional>

namespace sluice {

bool checkpointing_enabled(const Configuration& config) {
  return config.get(options::kCheckpointingInterval).count() > 0;
}

Result<CheckpointStorageType> checkpoint_storage_type(const Configuration& config) {
  const bool has_dir = !config.get(options::kCheckpointsDirectory).empty();
  std::optional<CheckpointStorageType> set = config.get(options::kCheckpointStorage);
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
