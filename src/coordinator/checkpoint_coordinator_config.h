// CheckpointCoordinatorConfig: the checkpoint options the coordinator acts on (Flink's
// CheckpointCoordinatorConfiguration; keys under execution.checkpointing.*, docs/configuration.md).
//
// Values; thread-safety: none needed. The caller maps the configuration keys onto this struct
// (execution.checkpointing.interval, .timeout, .min-pause, .max-concurrent-checkpoints,
// .tolerable-failed-checkpoints) and calls validate() before building a coordinator.
#pragma once

#include <chrono>
#include <cstdint>

#include "sluice/core/status.h"

namespace sluice::coordinator {

struct CheckpointCoordinatorConfig {
  // Flink's lower bound for both the interval and the timeout (CheckpointConfig's MINIMAL_CHECKPOINT_TIME).
  static constexpr std::chrono::milliseconds kMinimalCheckpointTime{10};

  // execution.checkpointing.interval: time between the starts of two periodic checkpoints. >= 10 ms, or 0: no
  // periodic checkpoints (the coordinator then takes only what it is asked for: savepoints; Flink's coordinator
  // without a periodic trigger).
  std::chrono::milliseconds interval{0};
  // execution.checkpointing.timeout (default 10 min): a checkpoint not fully acknowledged this long after its
  // trigger is aborted. >= 10 ms.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  // execution.checkpointing.min-pause (default 0): minimum time between the completion of one checkpoint and the
  // trigger of the next. >= 0. Above 0 it also means one checkpoint at a time (as in
  // Flink's docs): effective_max_concurrent() is then 1 whatever max_concurrent says.
  std::chrono::milliseconds min_pause{0};
  // execution.checkpointing.max-concurrent-checkpoints (default 1): pending checkpoints allowed at once
  // (savepoints included in the count). >= 1.
  int32_t max_concurrent = 1;
  // execution.checkpointing.tolerable-failed-checkpoints (default 0): consecutive counted checkpoint failures
  // tolerated; one more fails the job (CheckpointFailureManager). >= 0.
  int32_t tolerable_failures = 0;

  // kInvalidArgument naming the option, the value and what is expected.
  Status validate() const;

  // False when interval is 0: nothing is triggered periodically.
  bool periodic() const { return interval.count() > 0; }

  // max_concurrent, or 1 when min_pause > 0.
  int32_t effective_max_concurrent() const { return min_pause.count() > 0 ? 1 : max_concurrent; }
};

}  // namespace sluice::coordinator
