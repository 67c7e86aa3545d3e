#include "checkpoint/checkpoint_metadata.h"

#include <algorithm>

namespace sluice::checkpoint {

uint64_t CheckpointMetadata::state_size_bytes() const {
  uint64_t total = 0;
  for (const OperatorState& op : operators) {
    for (const OperatorSubtaskState& st : op.subtasks) {
      if (st.keyed_state) total += st.keyed_state->stream.size_bytes;
      if (st.operator_state) total += st.operator_state->size_bytes;
    }
  }
  return total;
}

std::vector<std::string> CheckpointMetadata::referenced_files() const {
  std::vector<std::string> files;
  auto add = [&files](const StreamStateHandle& h) {
    if (!h.is_inline()) files.push_back(h.relative_path);
  };
  for (const OperatorState& op : operators) {
    for (const OperatorSubtaskState& st : op.subtasks) {
      if (st.keyed_state) add(st.keyed_state->stream);
      if (st.operator_state) add(*st.operator_state);
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

}  // namespace sluice::checkpoint
