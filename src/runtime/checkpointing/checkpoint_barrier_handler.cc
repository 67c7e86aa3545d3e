#include "runtime/checkpointing/checkpoint_barrier_handler.h"

#include <utility>

#include "runtime/checkpointing/aligned_barrier_handler.h"
#include "runtime/checkpointing/checkpoint_barrier_tracker.h"
#include "runtime/checkpointing/unaligned_barrier_handler.h"

namespace sluice::runtime {

std::unique_ptr<CheckpointBarrierHandler> make_checkpoint_barrier_handler(const BarrierHandlingConfig& config,
                                                                          std::vector<bool> aligned_channel) {
  const auto num_channels = static_cast<int32_t>(aligned_channel.size());
  if (config.at_least_once) return std::make_unique<CheckpointBarrierTracker>(num_channels);
  if (config.unaligned.enabled) {
    return std::make_unique<UnalignedBarrierHandler>(std::move(aligned_channel), config.unaligned);
  }
  return std::make_unique<AlignedBarrierHandler>(num_channels);
}

}  // namespace sluice::runtime
