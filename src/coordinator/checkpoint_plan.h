// CheckpointPlan: the tasks that must acknowledge every checkpoint, and the operators they run (Flink's
// CheckpointPlan: tasks to trigger, to wait for, to commit to).
//
// Built once per coordinator from the execution graph's subtasks. Validation makes the metadata built from
// acknowledgements well formed: every (vertex, subtask) appears once, and an operator id names the same
// operator (name, parallelism, max parallelism, vertex) wherever it appears.
// Immutable after create(); thread-safety: shared read-only between pending checkpoints.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::coordinator {

struct OperatorDescriptor {
  std::string operator_id;    // the uid (or graph-derived id) a restore matches on
  std::string operator_name;  // for messages
  int32_t parallelism = 1;
  int32_t max_parallelism = 128;
  std::string graph_position;  // recorded in the metadata (checkpoint::OperatorState::graph_position)
};

// One subtask of a JobVertex (an operator chain) and the operators chained in it, head first.
struct TaskToAck {
  int32_t vertex = 0;
  int32_t subtask = 0;
  std::vector<OperatorDescriptor> operators;
};

class CheckpointPlan {
 public:
  // kInvalidArgument when: no tasks; a negative vertex or subtask; a (vertex, subtask) listed twice; an empty
  // operator id; parallelism < 1 or max parallelism < parallelism; subtask >= an operator's parallelism; one
  // operator id with different descriptors or in different vertices; an operator listed twice in one task.
  static Result<std::shared_ptr<const CheckpointPlan>> create(std::vector<TaskToAck> tasks);

  const std::vector<TaskToAck>& tasks() const { return tasks_; }
  int32_t num_tasks() const { return static_cast<int32_t>(tasks_.size()); }
  // Index into tasks() of (vertex, subtask), or -1 if the plan has no such task.
  int32_t task_index(int32_t vertex, int32_t subtask) const;
  // Every operator once, in order of first appearance in tasks() (the metadata's operator order).
  const std::vector<OperatorDescriptor>& operators() const { return operators_; }

 private:
  CheckpointPlan() = default;
  std::vector<TaskToAck> tasks_;
  std::map<std::pair<int32_t, int32_t>, int32_t> index_;
  std::vector<OperatorDescriptor> operators_;
};

}  // namespace sluice::coordinator
