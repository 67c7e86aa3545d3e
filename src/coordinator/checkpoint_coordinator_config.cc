#include "coordinator/checkpoint_coordinator_config.h"

#include <string>

namespace sluice::coordinator {
namespace {

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

Status CheckpointCoordinatorConfig::validate() const {
  if (interval.count() != 0 && interval < kMinimalCheckpointTime) {
    return Status::invalid_argument("execution.checkpointing.interval: expected 0 (no periodic checkpoints) or at "
                                    "least " + ms(kMinimalCheckpointTime) + ", got " + ms(interval));
  }
  if (timeout < kMinimalCheckpointTime) {
    return Status::invalid_argument("execution.checkpointing.timeout: expected at least " +
                                    ms(kMinimalCheckpointTime) + ", got " + ms(timeout));
  }
  if (min_pause.count() < 0) {
    return Status::invalid_argument("execution.checkpointing.min-pause: expected a duration >= 0, got " +
                                    ms(min_pause));
  }
  if (max_concurrent < 1) {
    return Status::invalid_argument("execution.checkpointing.max-concurrent-checkpoints: expected at least 1, got " +
                                    std::to_string(max_concurrent));
  }
  if (tolerable_failures < 0) {
    return Status::invalid_argument(
        "execution.checkpointing.tolerable-failed-checkpoints: expected a number >= 0, got " +
        std::to_string(tolerable_failures));
  }
  return Status::ok();
}

}  // namespace sluice::coordinator
