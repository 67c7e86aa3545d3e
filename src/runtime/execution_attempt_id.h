// ExecutionAttemptId: one deployment of one subtask (Flink's ExecutionAttemptID). A failover deploys every
// subtask again under the next attempt number, so a report that names an older attempt is about tasks that are
// gone and is dropped by whoever receives it. Thread-safety: a value.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "sluice/core/ids.h"

namespace sluice::runtime {

struct ExecutionAttemptId {
  JobVertexId vertex;
  SubtaskIndex subtask;
  int32_t attempt_number = 0;  // 0 for the first deployment, +1 for each failover

  auto operator<=>(const ExecutionAttemptId&) const = default;
  // "vertex 2, subtask 3 (attempt 1)": subtask printed 1-based as in task names ("map (4/8)").
  std::string to_string() const {
    return "vertex " + std::to_string(vertex.value()) + ", subtask " + std::to_string(subtask.value() + 1) +
           " (attempt " + std::to_string(attempt_number) + ")";
  }
};

}  // namespace sluice::runtime
