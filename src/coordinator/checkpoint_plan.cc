#include "coordinator/checkpoint_plan.h"

#include <set>

namespace sluice::coordinator {
namespace {

std::string task_name(const TaskToAck& t) {
  return "task (vertex " + std::to_string(t.vertex) + ", subtask index " + std::to_string(t.subtask) + ")";
}

bool same_descriptor(const OperatorDescriptor& a, const OperatorDescriptor& b) {
  return a.operator_id == b.operator_id && a.operator_name == b.operator_name && a.parallelism == b.parallelism &&
         a.max_parallelism == b.max_parallelism && a.graph_position == b.graph_position;
}

}  // namespace

Result<std::shared_ptr<const CheckpointPlan>> CheckpointPlan::create(std::vector<TaskToAck> tasks) {
  if (tasks.empty()) return Status::invalid_argument("checkpoint plan: expected at least one task to acknowledge");
  std::shared_ptr<CheckpointPlan> plan(new CheckpointPlan());
  // operator id -> (index in operators_, vertex)
  std::map<std::string, std::pair<size_t, int32_t>> seen;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskToAck& t = tasks[i];
    if (t.vertex < 0 || t.subtask < 0) {
      return Status::invalid_argument("checkpoint plan: " + task_name(t) + ": expected vertex and subtask >= 0");
    }
    if (!plan->index_.emplace(std::make_pair(t.vertex, t.subtask), static_cast<int32_t>(i)).second) {
      return Status::invalid_argument("checkpoint plan: " + task_name(t) + " is listed twice");
    }
    std::set<std::string> in_task;
    for (const OperatorDescriptor& op : t.operators) {
      if (op.operator_id.empty()) {
        return Status::invalid_argument("checkpoint plan: " + task_name(t) + ": operator '" + op.operator_name +
                                        "' has an empty operator id");
      }
      if (!in_task.insert(op.operator_id).second) {
        return Status::invalid_argument("checkpoint plan: " + task_name(t) + " lists operator '" + op.operator_id +
                                        "' twice");
      }
      if (op.parallelism < 1 || op.max_parallelism < op.parallelism) {
        return Status::invalid_argument("checkpoint plan: operator '" + op.operator_id + "': expected 1 <= parallelism (" +
                                        std::to_string(op.parallelism) + ") <= max parallelism (" +
                                        std::to_string(op.max_parallelism) + ")");
      }
      if (t.subtask >= op.parallelism) {
        return Status::invalid_argument("checkpoint plan: " + task_name(t) + " runs operator '" + op.operator_id +
                                        "' of parallelism " + std::to_string(op.parallelism) +
                                        ": expected subtask < parallelism");
      }
      auto [it, inserted] = seen.emplace(op.operator_id, std::make_pair(plan->operators_.size(), t.vertex));
      if (inserted) {
        plan->operators_.push_back(op);
        continue;
      }
      if (it->second.second != t.vertex) {
        return Status::invalid_argument("checkpoint plan: operator '" + op.operator_id + "' appears in vertex " +
                                        std::to_string(it->second.second) + " and vertex " + std::to_string(t.vertex) +
                                        ": expected an operator id to be unique in the job");
      }
      if (!same_descriptor(plan->operators_[it->second.first], op)) {
        return Status::invalid_argument("checkpoint plan: operator '" + op.operator_id +
                                        "' is described differently by " + task_name(t) +
                                        " (name, parallelism or max parallelism)");
      }
    }
  }
  plan->tasks_ = std::move(tasks);
  return std::shared_ptr<const CheckpointPlan>(std::move(plan));
}

int32_t CheckpointPlan::task_index(int32_t vertex, int32_t subtask) const {
  auto it = index_.find({vertex, subtask});
  return it == index_.end() ? -1 : it->second;
}

}  // namespace sluice::coordinator
