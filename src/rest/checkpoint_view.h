// What the REST endpoint reports about a job's checkpoints: the coordinator's statistics and the restores.
// Values; thread-safety: none needed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coordinator/checkpoint_stats.h"

namespace sluice::rest {

// A checkpoint the job restored from (Flink's RestoredCheckpointStatistics).
struct RestoredCheckpoint {
  int64_t id = 0;
  std::string external_path;  // empty when unknown
  bool is_savepoint = false;
};

struct CheckpointView {
  coordinator::CheckpointStatsSnapshot stats;
  int64_t num_restored = 0;  // restores so far (the initial one and recoveries from a checkpoint)
  std::optional<RestoredCheckpoint> latest_restored;
};

}  // namespace sluice::rest
