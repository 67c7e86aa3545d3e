#include "coordinator/pending_checkpoint.h"

#include <algorithm>
#include <utility>

namespace sluice::coordinator {

using checkpoint::CheckpointMetadata;
using checkpoint::OperatorState;
using checkpoint::OperatorSubtaskState;

uint64_t state_handle_bytes(const OperatorSubtaskState& state) {
  uint64_t bytes = 0;
  if (state.keyed_state) bytes += state.keyed_state->stream.size_bytes;
  if (state.incremental_keyed_state) bytes += state.incremental_keyed_state->full_size_bytes();
  if (state.operator_state) bytes += state.operator_state->size_bytes;
  if (state.channel_state) bytes += state.channel_state->size_bytes;  // unaligned checkpoints' in-flight data
  return bytes;
}

uint64_t checkpointed_handle_bytes(const OperatorSubtaskState& state) {
  uint64_t bytes = 0;
  if (state.keyed_state) bytes += state.keyed_state->stream.size_bytes;
  if (state.incremental_keyed_state) bytes += state.incremental_keyed_state->checkpointed_size_bytes();
  if (state.operator_state) bytes += state.operator_state->size_bytes;
  if (state.channel_state) bytes += state.channel_state->size_bytes;
  return bytes;
}

PendingCheckpoint::PendingCheckpoint(CheckpointId id, checkpoint::SnapshotType type, int64_t trigger_timestamp_ms,
                                     int64_t trigger_monotonic_ms, std::shared_ptr<const CheckpointPlan> plan)
    : id_(id),
      type_(type),
      trigger_timestamp_ms_(trigger_timestamp_ms),
      trigger_monotonic_ms_(trigger_monotonic_ms),
      plan_(std::move(plan)),
      acknowledged_(static_cast<size_t>(plan_->num_tasks()), false),
      states_(static_cast<size_t>(plan_->num_tasks())) {}

PendingCheckpoint::AckResult PendingCheckpoint::acknowledge(JobVertexId vertex_id, SubtaskIndex subtask_index,
                                                            SubtaskStateMap& state, std::string* error) {
  const int32_t vertex = vertex_id.value();
  const int32_t subtask = subtask_index.value();
  const int32_t index = plan_->task_index(vertex, subtask);
  if (index < 0) return AckResult::kUnknownTask;
  const auto i = static_cast<size_t>(index);
  if (acknowledged_[i]) return AckResult::kDuplicate;
  const TaskToAck& task = plan_->tasks()[i];
  for (const auto& entry : state) {
    const auto& operator_id = entry.first;  // not a structured binding: clang 14 cannot capture one in a lambda
    const bool runs = std::any_of(task.operators.begin(), task.operators.end(),
                                  [&](const OperatorDescriptor& op) { return op.operator_id == operator_id; });
    if (!runs) {
      if (error != nullptr) {
        *error = "checkpoint " + std::to_string(id_.value()) + ": task (vertex " + std::to_string(vertex) +
                 ", subtask index " + std::to_string(subtask) + ") acknowledged state for operator '" + operator_id +
                 "', which it does not run";
      }
      return AckResult::kUnexpectedOperator;
    }
  }
  for (auto& [operator_id, subtask_state] : state) {
    subtask_state.subtask_index = subtask;
    state_size_bytes_ += state_handle_bytes(subtask_state);
  }
  states_[i] = std::move(state);
  acknowledged_[i] = true;
  ++num_acknowledged_;
  return AckResult::kAccepted;
}

bool PendingCheckpoint::is_acknowledged(JobVertexId vertex, SubtaskIndex subtask) const {
  const int32_t index = plan_->task_index(vertex.value(), subtask.value());
  return index >= 0 && acknowledged_[static_cast<size_t>(index)];
}

CheckpointMetadata PendingCheckpoint::finalize(const JobId& job, const std::map<std::string, std::string>& properties) {
  finalizing_ = true;
  CheckpointMetadata metadata;
  metadata.checkpoint_id = id_;
  metadata.job_id = job;
  metadata.trigger_timestamp_ms = trigger_timestamp_ms_;
  metadata.type = type_;
  metadata.savepoint_format = savepoint_format_;
  metadata.properties = properties;
  std::map<std::string, size_t> position;  // operator id -> index in metadata.operators
  for (const OperatorDescriptor& op : plan_->operators()) {
    position.emplace(op.operator_id, metadata.operators.size());
    OperatorState& os = metadata.operators.emplace_back();
    os.operator_id = op.operator_id;
    os.operator_name = op.operator_name;
    os.parallelism = op.parallelism;
    os.max_parallelism = op.max_parallelism;
    os.graph_position = op.graph_position;
  }
  for (SubtaskStateMap& task_states : states_) {
    for (auto& [operator_id, subtask_state] : task_states) {
      if (!subtask_state.keyed_state && !subtask_state.incremental_keyed_state && !subtask_state.operator_state &&
          !subtask_state.channel_state) {
        continue;  // stateless, nothing in flight: nothing to restore
      }
      metadata.operators[position.at(operator_id)].subtasks.push_back(std::move(subtask_state));
    }
    task_states.clear();
  }
  for (OperatorState& os : metadata.operators) {
    std::sort(os.subtasks.begin(), os.subtasks.end(),
              [](const OperatorSubtaskState& a, const OperatorSubtaskState& b) {
                return a.subtask_index < b.subtask_index;
              });
  }
  return metadata;
}

}  // namespace sluice::coordinator
