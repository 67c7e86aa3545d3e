#include "checkpoint/checkpoint_layout.h"

#include <charconv>

#include "fs/path.h"

namespace sluice::checkpoint {

std::string checkpoint_dir_name(CheckpointId id) {
  return std::string(kCheckpointDirPrefix) + std::to_string(id.value());
}

std::optional<CheckpointId> parse_checkpoint_dir_name(std::string_view name) {
  if (name.substr(0, kCheckpointDirPrefix.size()) != kCheckpointDirPrefix) return std::nullopt;
  std::string_view digits = name.substr(kCheckpointDirPrefix.size());
  if (digits.empty() || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return CheckpointId(v);
}

std::string checkpoint_dir_of(std::string_view chk_folder) {
  auto or_dot = [](std::string p) { return p.empty() ? std::string(".") : p; };
  const std::string job_dir = fs::path_parent(chk_folder);
  JobId id;
  if (!parse_checkpoint_dir_name(fs::path_file_name(chk_folder)) || !JobId::parse(fs::path_file_name(job_dir), &id)) {
    return or_dot(job_dir);
  }
  return or_dot(fs::path_parent(job_dir));
}

bool is_absolute_handle_path(std::string_view recorded) { return !fs::uri_scheme(recorded).empty(); }

std::string handle_path_in_job(std::string_view job_dir, const std::string& recorded) {
  return is_absolute_handle_path(recorded) ? recorded : fs::join_path(job_dir, recorded);
}

}  // namespace sluice::checkpoint
