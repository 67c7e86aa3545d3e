// The checkpoint benchmark's parts that need no running job, on a heap keyed state backend built directly:
//
//  - snapshot_cost: what one subtask's checkpoint of `keys` entries costs, piece by piece, through the same
//    code a task runs: the synchronous part (KeyedStateBackend::snapshot), opening the checkpoint's storage
//    (chk-<n>/ created, its parent fsynced), serialization (write_all_key_groups), persisting the state file
//    (CheckpointStreamFactory::write_state: write, fsync, rename) and the `_metadata`
//    (FileSystemCheckpointStorage::write_metadata: write, fsync, rename, directory fsyncs). The floor under a
//    job's checkpoint duration, without trigger, barrier and acknowledgement.
//  - restore_vs_read: restores `bytes` of heap state from a checkpoint on disk the way a redeployed task does
//    (cluster::assign_subtask_state reads and slices the file, KeyedStateBackend::restore_key_group takes every
//    key group, registering the state decodes it) next to reading the same file into memory. Both read warm.
//
// Values are the job's KeyAggregate (keyed_job.h), keys int64_t, max parallelism 128 (the demo's), one subtask.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sluice/core/status.h"

namespace sluice::bench {

using Json = nlohmann::ordered_json;

// Medians over `repeat` rounds; each round writes a new checkpoint under `dir` (removed afterwards).
Result<Json> snapshot_cost(const std::string& dir, int64_t keys, int32_t repeat);

// State of about `bytes` serialized bytes (at least one entry). `read_repeat` timed reads, the median taken.
Result<Json> restore_vs_read(const std::string& dir, int64_t bytes, int32_t read_repeat);

}  // namespace sluice::bench
