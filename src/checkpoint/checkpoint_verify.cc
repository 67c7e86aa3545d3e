#include "checkpoint/checkpoint_verify.h"

#include <algorithm>
#include <utility>

#include "checkpoint/byte_size_text.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/checkpoint_metadata.h"

namespace sluice::checkpoint {
namespace {

void check_handle(fs::FileSystem& fs, const CheckpointLocation& loc, const StreamStateHandle& h, const std::string& whose,
                  CheckpointVerification& out) {
  Status st = check_state_handle(fs, loc.checkpoint_dir, h);
  if (h.is_inline()) {
    ++out.inline_handles_checked;
  } else {
    ++out.files_checked;
  }
  if (st.is_ok()) return;
  std::string file = h.is_inline() ? loc.metadata_path + " (inline)" : handle_file_path(loc.checkpoint_dir, h.relative_path);
  out.problems.push_back(VerifyProblem{std::move(file), whose + ": " + st.message()});
}

CheckpointVerification verify_one(fs::FileSystem& fs, const CheckpointLocation& loc, bool found_by_scan) {
  CheckpointVerification out;
  out.location = loc.checkpoint_dir;
  out.checkpoint_id = parse_checkpoint_dir_name(fs::path_file_name(loc.checkpoint_dir));
  auto kind = fs.stat(loc.metadata_path);
  if (kind.is_ok() && *kind == fs::PathKind::kMissing && found_by_scan) {
    out.incomplete = true;
    return out;
  }
  auto metadata = read_checkpoint_metadata(fs, loc);
  if (!metadata.is_ok()) {
    out.problems.push_back(VerifyProblem{loc.metadata_path, metadata.status().to_string()});
    return out;
  }
  const CheckpointMetadata& m = *metadata;
  out.checkpoint_id = m.checkpoint_id;
  out.state_size_bytes = m.state_size_bytes();
  for (const OperatorState& op : m.operators) {
    for (const OperatorSubtaskState& st : op.subtasks) {
      std::string whose = "operator '" + op.operator_id + "' subtask index " + std::to_string(st.subtask_index);
      if (st.keyed_state) check_handle(fs, loc, st.keyed_state->stream, whose + " keyed state", out);
      if (st.incremental_keyed_state) {
        for (const IncrementalFile& f : st.incremental_keyed_state->shared_files) {
          check_handle(fs, loc, f.file, whose + " incremental keyed state, shared file " + f.local_name, out);
        }
        for (const IncrementalFile& f : st.incremental_keyed_state->private_files) {
          check_handle(fs, loc, f.file, whose + " incremental keyed state, private file " + f.local_name, out);
        }
      }
      if (st.operator_state) check_handle(fs, loc, *st.operator_state, whose + " operator state", out);
      if (st.channel_state) check_handle(fs, loc, *st.channel_state, whose + " channel state", out);
    }
  }
  return out;
}

// The chk-<n> folders directly inside `dir`.
Result<std::vector<std::string>> checkpoint_folders(fs::FileSystem& fs, const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries, fs.list_dir(dir));
  std::vector<std::pair<CheckpointId, std::string>> found;
  for (const fs::DirEntry& e : entries) {
    auto id = parse_checkpoint_dir_name(e.name);
    if (id && e.kind == fs::PathKind::kDirectory) found.emplace_back(*id, fs::join_path(dir, e.name));
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [id, path] : found) out.push_back(std::move(path));
  return out;
}

// A scan that found only incomplete checkpoints verified nothing: an error, not "0 problems".
Result<VerifyReport> require_complete(VerifyReport report, const std::string& path) {
  std::string incomplete;
  for (const CheckpointVerification& c : report.checkpoints) {
    if (!c.incomplete) return report;
    incomplete += (incomplete.empty() ? "" : ", ") + c.location;
  }
  return Status::not_found("checkpoint verify: no complete checkpoint (chk-<n> with _metadata) found under '" + path +
                           "' (incomplete, never restorable: " + incomplete + ")");
}

}  // namespace

size_t VerifyReport::problem_count() const {
  size_t n = 0;
  for (const CheckpointVerification& c : checkpoints) n += c.problems.size();
  return n;
}

std::string VerifyReport::to_string() const {
  std::string s;
  size_t complete = 0;
  for (const CheckpointVerification& c : checkpoints) {
    if (c.checkpoint_id) s += "checkpoint " + std::to_string(c.checkpoint_id->value()) + " (" + c.location + "): ";
    else s += c.location + ": ";
    if (c.incomplete) {
      s += "incomplete (no _metadata; never restored), skipped\n";
      continue;
    }
    ++complete;
    if (c.problems.empty()) {
      s += "OK (" + std::to_string(c.files_checked) + " files, " + std::to_string(c.inline_handles_checked) +
           " inline handles, " + format_bytes(c.state_size_bytes) + ")\n";
    } else {
      s += std::to_string(c.problems.size()) + (c.problems.size() == 1 ? " problem\n" : " problems\n");
      for (const VerifyProblem& p : c.problems) s += "  " + p.file + ": " + p.problem + "\n";
    }
  }
  s += std::to_string(complete) + (complete == 1 ? " checkpoint" : " checkpoints") + " verified, " +
       std::to_string(problem_count()) + (problem_count() == 1 ? " problem" : " problems") + "\n";
  return s;
}

Result<VerifyReport> verify_checkpoint(const std::string& given_path, const fs::FileSystemRegistry& file_systems) {
  auto fsys = file_systems.for_path(given_path);
  if (!fsys.is_ok()) return fsys.status().with_context("checkpoint verify");
  fs::FileSystem& fs = **fsys;
  // execution.checkpointing.dir as configured, with an entropy marker: its checkpoints live without it.
  const std::string path = fs::remove_entropy_key_of(fs, given_path);
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fs.stat(path));
  if (kind == fs::PathKind::kMissing) return Status::not_found("checkpoint verify: '" + path + "' does not exist");
  VerifyReport report;
  auto verify_path = [&](const std::string& p, bool by_scan) -> Status {
    SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(fs, p));
    report.checkpoints.push_back(verify_one(fs, loc, by_scan));
    return Status::ok();
  };
  if (kind == fs::PathKind::kFile) {
    SLUICE_RETURN_IF_ERROR(verify_path(path, false));
    return report;
  }
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind meta, fs.stat(fs::join_path(path, kMetadataFileName)));
  if (meta != fs::PathKind::kMissing || parse_checkpoint_dir_name(fs::path_file_name(path))) {
    SLUICE_RETURN_IF_ERROR(verify_path(path, false));  // one checkpoint folder, named directly
    return report;
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> direct, checkpoint_folders(fs, path));
  if (!direct.empty()) {  // a job folder
    for (const std::string& d : direct) SLUICE_RETURN_IF_ERROR(verify_path(d, true));
    return require_complete(std::move(report), path);
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries, fs.list_dir(path));  // a checkpoint directory
  for (const fs::DirEntry& e : entries) {
    if (e.kind != fs::PathKind::kDirectory) continue;
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> chks, checkpoint_folders(fs, fs::join_path(path, e.name)));
    for (const std::string& d : chks) SLUICE_RETURN_IF_ERROR(verify_path(d, true));
  }
  if (report.checkpoints.empty()) {
    return Status::not_found("checkpoint verify: no checkpoint under '" + path +
                             "' (expected a chk-<n> folder, its _metadata, a job folder or a checkpoint directory)");
  }
  return require_complete(std::move(report), path);
}

}  // namespace sluice::checkpoint
