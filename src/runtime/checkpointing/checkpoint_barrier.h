// The in-band checkpoint events (Flink's CheckpointBarrier and CancelCheckpointMarker) and their encoding
// into RuntimeEvents (network/buffer.h reserves the event types).
//
// Barrier ids strictly increase within a job; a barrier n separates the records that belong to checkpoint n
// (before it) from those after. A cancellation marker for n tells downstream tasks to stop aligning for n.
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>

#include "checkpoint/checkpoint_metadata.h"
#include "runtime/network/buffer.h"
#include "sluice/core/ids.h"
#include "sluice/core/status.h"

namespace sluice::runtime {

struct CheckpointBarrier {
  CheckpointId id{0};
  int64_t timestamp_ms = 0;  // when the coordinator triggered it
  checkpoint::SnapshotType type = checkpoint::SnapshotType::kCheckpoint;
  // Savepoints: the format keyed operators write (kCanonical for checkpoints).
  checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical;
  bool is_native_savepoint() const {
    return type == checkpoint::SnapshotType::kSavepoint && format == checkpoint::SavepointFormatType::kNative;
  }
  bool operator==(const CheckpointBarrier&) const = default;
};

RuntimeEvent encode_barrier(const CheckpointBarrier& barrier);
Result<CheckpointBarrier> decode_barrier(const RuntimeEvent& event);

RuntimeEvent encode_cancel_marker(CheckpointId id);
Result<CheckpointId> decode_cancel_marker(const RuntimeEvent& event);

// End of data: the producer processed all its input (bounded); records will not follow, but checkpoint
// barriers may, until the final checkpoint completes and end-of-partition closes the channel.
RuntimeEvent end_of_data_event();

}  // namespace sluice::runtime
