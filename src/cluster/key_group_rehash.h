// Max parallelism on restore (the number of key groups keyed state is split into; DESIGN.md section 3):
//
// - Flink's rule: a job that sets no max parallelism (pipeline.max-parallelism -1) adopts the one recorded in the
//   snapshot it restores, so restoring at another parallelism never derives another key-group count by accident.
// - A job that sets another value is refused by default: its keys would belong to other key groups than the ones
//   the snapshot filed them under.
// - Beyond Flink: canonical snapshots (savepoints, full checkpoints) hold every key's bytes, so with
//   --rehash-key-groups (execution.state-recovery.rehash-key-groups) each key is hashed again into the key groups
//   of the new max parallelism (rehash_key_groups). Incremental RocksDB checkpoints hold native files, which cannot
//   be re-hashed: take a savepoint first.
//
// Key serializers must stay compatible as is: the key group is a hash of the key bytes, which re-hashing keeps.
// Thread-safety: pure functions over caller-owned data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "sluice/core/status.h"
#include "sluice/state/key_group.h"

namespace sluice::cluster {

enum class KeyGroupRehash : uint8_t { kRefuse, kRehash };

// The max parallelism a job restoring `metadata` (found at `location`) runs with, given its configured value
// (`configured`, -1: none set): the recorded value of the operators with keyed state when none is set (or
// `configured` when the snapshot has no keyed state); `configured` when it equals the recorded value or `rehash`
// is kRehash. kInvalidArgument naming the snapshot, both values and the ways out when they differ without
// re-hashing, and when re-hashing is asked for a snapshot with incremental keyed state (naming the operator).
Result<int32_t> max_parallelism_for_restore(const checkpoint::CheckpointMetadata& metadata,
                                            const std::string& location, int32_t configured, KeyGroupRehash rehash);

// One canonical key-group snapshot (state/key_group_snapshot.h) in caller-owned bytes.
struct KeyGroupSnapshotBytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Every entry (state value, list, map, timer) of `snapshots` (key groups of any one max parallelism, typically all
// of an operator's) whose key falls, under `max_parallelism`, into a key group of `range`: returned as canonical
// snapshots of those key groups (ascending, non-empty ones only), written with `max_parallelism`. kCorruption
// (with `what`) when a snapshot does not parse, the snapshots disagree on the key serializer, or a state's kind or
// serializers differ between them.
Result<std::vector<std::vector<uint8_t>>> rehash_key_groups(const std::vector<KeyGroupSnapshotBytes>& snapshots,
                                                            int32_t max_parallelism, const KeyGroupRange& range,
                                                            const std::string& what);

}  // namespace sluice::cluster
