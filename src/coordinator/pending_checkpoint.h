// PendingCheckpoint: a triggered checkpoint (or savepoint) collecting acknowledgements (Flink's
// PendingCheckpoint). Pure bookkeeping: no I/O, no clock, no lock (the coordinator holds its mutex).
//
// Lifecycle in the coordinator: pending (collecting acks; may expire, be declined or subsumed) -> finalizing
// (every task acknowledged, metadata handed to storage; only the storage result or a job-wide abort ends it)
// -> completed or aborted. Each task acknowledges at most once; is_complete() when every task of the plan did.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "coordinator/checkpoint_plan.h"
#include "sluice/core/ids.h"

namespace sluice::coordinator {

using SubtaskStateMap = std::map<std::string, checkpoint::OperatorSubtaskState>;  // by operator id

// Sum of the sizes of every state handle in `state` (keyed and operator state).
uint64_t state_handle_bytes(const checkpoint::OperatorSubtaskState& state);
// The bytes the subtask added in this checkpoint (state_handle_bytes less the shared files it reused).
uint64_t checkpointed_handle_bytes(const checkpoint::OperatorSubtaskState& state);

class PendingCheckpoint {
 public:
  enum class AckResult : uint8_t {
    kAccepted,            // recorded
    kDuplicate,           // this task already acknowledged: ignored
    kUnknownTask,         // (vertex, subtask) is not in the plan: ignored
    kUnexpectedOperator,  // state for an operator the task does not run: rejected (error says which)
  };

  PendingCheckpoint(CheckpointId id, checkpoint::SnapshotType type, int64_t trigger_timestamp_ms,
                    int64_t trigger_monotonic_ms, std::shared_ptr<const CheckpointPlan> plan);

  CheckpointId id() const { return id_; }
  checkpoint::SnapshotType type() const { return type_; }
  // Savepoints: the format their tasks write (kCanonical unless set); recorded in the metadata.
  checkpoint::SavepointFormatType savepoint_format() const { return savepoint_format_; }
  void set_savepoint_format(checkpoint::SavepointFormatType format) { savepoint_format_ = format; }
  int64_t trigger_timestamp_ms() const { return trigger_timestamp_ms_; }      // wall clock, ms since epoch
  int64_t trigger_monotonic_ms() const { return trigger_monotonic_ms_; }      // Clock::monotonic_ns / 1e6
  const CheckpointPlan& plan() const { return *plan_; }

  // Records the task's state (moved from `state` when accepted). The subtask index of every
  // OperatorSubtaskState is set to `subtask`. On kUnexpectedOperator, `error` (if given) says which operator.
  AckResult acknowledge(JobVertexId vertex, SubtaskIndex subtask, SubtaskStateMap& state, std::string* error = nullptr);
  bool is_acknowledged(JobVertexId vertex, SubtaskIndex subtask) const;
  int32_t num_acknowledged() const { return num_acknowledged_; }
  int32_t num_tasks() const { return plan_->num_tasks(); }
  bool is_complete() const { return num_acknowledged_ == plan_->num_tasks(); }
  // Sum of the state handle sizes acknowledged so far (the full size the checkpoint refers to).
  uint64_t state_size_bytes() const { return state_size_bytes_; }

  // A newer completed checkpoint makes this one obsolete; savepoints are never subsumed (Flink's rule).
  bool can_be_subsumed() const { return type_ == checkpoint::SnapshotType::kCheckpoint; }
  bool is_finalizing() const { return finalizing_; }

  // The metadata of the complete checkpoint: every operator of the plan in plan order, each with the subtask
  // states that hold state, sorted by subtask index. Moves the collected states out: call once, when
  // is_complete(); marks the checkpoint finalizing.
  checkpoint::CheckpointMetadata finalize(const JobId& job, const std::map<std::string, std::string>& properties);

 private:
  CheckpointId id_;
  checkpoint::SnapshotType type_;
  checkpoint::SavepointFormatType savepoint_format_ = checkpoint::SavepointFormatType::kCanonical;
  int64_t trigger_timestamp_ms_;
  int64_t trigger_monotonic_ms_;
  std::shared_ptr<const CheckpointPlan> plan_;
  std::vector<bool> acknowledged_;        // by task index
  std::vector<SubtaskStateMap> states_;   // by task index
  int32_t num_acknowledged_ = 0;
  uint64_t state_size_bytes_ = 0;
  bool finalizing_ = false;
};

}  // namespace sluice::coordinator
