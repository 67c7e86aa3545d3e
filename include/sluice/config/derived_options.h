// Effective values that depend on more than one option: Flink's defaulting rules for options without a
// default, and checks that span options. Read these instead of the raw options where they apply.
//
// Thread-safety: pure functions of the Configuration.
#pragma once

#include "sluice/config/configuration.h"
#include "sluice/config/options.h"
#include "sluice/core/status.h"

namespace sluice {

// True when periodic checkpoints are on: execution.checkpointing.interval > 0 (unset is 0, i.e. off).
bool checkpointing_enabled(const Configuration& config);

// The keyed state backend state.backend.type selects: kHashMap or kRocksDB (legacy names map to these).
StateBackendType state_backend_kind_of(const Configuration& config);

// execution.checkpointing.storage, or when unset: the storage a legacy state.backend.type names (JOBMANAGER for
// JOBMANAGER / MEMORYSTATEBACKEND; FILESYSTEM for FILESYSTEM / FSSTATEBACKEND / ROCKSDBSTATEBACKEND), else
// FILESYSTEM if execution.checkpointing.dir is set, else JOBMANAGER. Errors (kInvalidArgument): FILESYSTEM
// (set or implied by a legacy name) while execution.checkpointing.dir is empty; a legacy name together with an
// execution.checkpointing.storage that contradicts it.
// (With JOBMANAGER set explicitly and a directory given, Flink writes only the _metadata to the directory;
// how Sluice's JobManager storage uses the directory is the checkpoint storage's documented choice.)
Result<CheckpointStorageType> checkpoint_storage_type(const Configuration& config);

// Checks execution.checkpointing.unaligned.enabled against the options it needs (Flink's rules): when it is
// true, execution.checkpointing.mode must be EXACTLY_ONCE and execution.checkpointing.max-concurrent-checkpoints
// 1. kInvalidArgument naming both options and the offending value otherwise; ok when unaligned is off.
Status validate_unaligned_checkpoints(const Configuration& config);

// Options that only act in a mode that is off are never ignored silently (Flink ignores them; Sluice is loud):
// execution.checkpointing.unaligned.enabled = true or execution.checkpointing.mode = AT_LEAST_ONCE while
// checkpointing is off (execution.checkpointing.interval 0), and execution.checkpointing.aligned-checkpoint-timeout
// set (any value) while unaligned checkpoints are off. kInvalidArgument naming the option and what it needs.
Status validate_mode_dependent_options(const Configuration& config);

// restart-strategy.type, or when unset: EXPONENTIAL_DELAY if `checkpointing_enabled`, else NONE (Flink's
// RestartBackoffTimeStrategyFactoryLoader rule).
RestartStrategyType restart_strategy_type(const Configuration& config, bool checkpointing_enabled);

}  // namespace sluice
