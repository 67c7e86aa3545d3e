#include "checkpoint/checkpoint_metadata.h"

#include <algorithm>
#include <cctype>

namespace sluice::checkpoint {

namespace {
template <class Fn>
void for_each_subtask(const CheckpointMetadata& m, Fn&& fn) {
  for (const OperatorState& op : m.operators)
    for (const OperatorSubtaskState& st : op.subtasks) fn(st);
}
void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}
}  // namespace

const char* savepoint_format_name(SavepointFormatType format) {
  return format == SavepointFormatType::kNative ? "NATIVE" : "CANONICAL";
}

std::optional<SavepointFormatType> parse_savepoint_format(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "canonical") return SavepointFormatType::kCanonical;
  if (lower == "native") return SavepointFormatType::kNative;
  return std::nullopt;
}

uint64_t CheckpointMetadata::state_size_bytes() const {
  uint64_t total = 0;
  for_each_subtask(*this, [&](const OperatorSubtaskState& st) {
    if (st.keyed_state) total += st.keyed_state->stream.size_bytes;
    if (st.incremental_keyed_state) total += st.incremental_keyed_state->full_size_bytes();
    if (st.operator_state) total += st.operator_state->size_bytes;
    if (st.channel_state) total += st.channel_state->size_bytes;
  });
  return total;
}

uint64_t CheckpointMetadata::checkpointed_size_bytes() const {
  uint64_t total = 0;
  for_each_subtask(*this, [&](const OperatorSubtaskState& st) {
    if (st.keyed_state) total += st.keyed_state->stream.size_bytes;
    if (st.incremental_keyed_state) total += st.incremental_keyed_state->checkpointed_size_bytes();
    if (st.operator_state) total += st.operator_state->size_bytes;
    if (st.channel_state) total += st.channel_state->size_bytes;
  });
  return total;
}

std::vector<std::string> CheckpointMetadata::referenced_files() const {
  std::vector<std::string> files;
  auto add = [&files](const StreamStateHandle& h) {
    if (!h.is_inline()) files.push_back(h.relative_path);
  };
  for_each_subtask(*this, [&](const OperatorSubtaskState& st) {
    if (st.keyed_state) add(st.keyed_state->stream);
    if (st.incremental_keyed_state) {
      for (const IncrementalFile& f : st.incremental_keyed_state->shared_files) add(f.file);
      for (const IncrementalFile& f : st.incremental_keyed_state->private_files) add(f.file);
    }
    if (st.operator_state) add(*st.operator_state);
    if (st.channel_state) add(*st.channel_state);
  });
  sort_unique(files);
  return files;
}

std::vector<std::string> CheckpointMetadata::shared_files() const {
  std::vector<std::string> files;
  if (is_native_savepoint()) return files;  // its database files belong to the savepoint alone
  for_each_subtask(*this, [&](const OperatorSubtaskState& st) {
    if (!st.incremental_keyed_state) return;
    for (const IncrementalFile& f : st.incremental_keyed_state->shared_files) files.push_back(f.file.relative_path);
  });
  sort_unique(files);
  return files;
}

bool CheckpointMetadata::has_incremental_state() const {
  bool any = false;
  for_each_subtask(*this, [&](const OperatorSubtaskState& st) { any = any || st.incremental_keyed_state.has_value(); });
  return any;
}

}  // namespace sluice::checkpoint

namespace sluice::checkpoint {

bool CheckpointMetadata::has_channel_state() const {
  bool any = false;
  for_each_subtask(*this, [&](const OperatorSubtaskState& st) { any = any || st.channel_state.has_value(); });
  return any;
}

}  // namespace sluice::checkpoint
