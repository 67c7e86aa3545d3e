#include "checkpoint/restore_path.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"

namespace sluice::checkpoint {
namespace {

// The job folder and checkpoint of a chk-<n> location, which name it whatever the path's form (relative,
// absolute, a trailing slash).
std::pair<std::string, std::string> job_and_checkpoint(const std::string& location) {
  std::string path = location;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return {fs::path_file_name(fs::path_parent(path)), fs::path_file_name(path)};
}

struct Candidate {
  CheckpointId id;
  std::string job_folder;  // name, for the tie-break
  std::string dir;         // the chk-<n> path
};

Result<RestorePoint> read_point(fs::FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(fs, path));
  SLUICE_ASSIGN_OR_RETURN(CheckpointMetadata m, read_checkpoint_metadata(fs, loc));
  return RestorePoint{loc.checkpoint_dir, std::move(m)};
}

Result<RestorePoint> resolve_latest(fs::FileSystem& fs, const std::string& checkpoint_dir) {
  if (checkpoint_dir.empty()) {
    return Status::invalid_argument("--restore latest: no checkpoint directory is set (execution.checkpointing.dir)");
  }
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fs.stat(checkpoint_dir));
  if (kind != fs::PathKind::kDirectory) {
    return Status::not_found("--restore latest: checkpoint directory '" + checkpoint_dir + "' does not exist");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> jobs, fs.list_dir(checkpoint_dir));
  std::vector<Candidate> complete;
  std::vector<std::pair<FinishedRestore, std::string>> finished;  // record, the job folder of the run that wrote it
  for (const fs::DirEntry& job : jobs) {
    if (job.kind != fs::PathKind::kDirectory) continue;
    const std::string job_dir = fs::join_path(checkpoint_dir, job.name);
    SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries, fs.list_dir(job_dir));
    for (const fs::DirEntry& e : entries) {
      if (e.name == kFinishedRestoreFileName && e.kind == fs::PathKind::kFile) {
        SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, fs.read_file(fs::join_path(job_dir, e.name)));
        auto record = parse_finished_restore(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
        if (!record) {
          return Status::corruption("--restore latest: " + fs::join_path(job_dir, e.name) +
                                    " is not a finished-restore record (expected \"restored <chk-<n> folder>\" and "
                                    "\"finished_at_ms <ms>\" lines); remove it or pass a checkpoint explicitly");
        }
        finished.emplace_back(std::move(*record), job.name);
        continue;
      }
      auto id = parse_checkpoint_dir_name(e.name);
      if (!id || e.kind != fs::PathKind::kDirectory) continue;
      const std::string dir = fs::join_path(job_dir, e.name);
      SLUICE_ASSIGN_OR_RETURN(fs::PathKind meta, fs.stat(fs::join_path(dir, kMetadataFileName)));
      if (meta == fs::PathKind::kFile) complete.push_back(Candidate{*id, job.name, dir});
    }
  }
  if (complete.empty()) {
    return Status::not_found("--restore latest: no completed checkpoint (chk-<n>/_metadata) under '" +
                             checkpoint_dir + "/*/'");
  }
  CheckpointId highest = complete.front().id;
  for (const Candidate& c : complete) highest = std::max(highest, c.id);

  std::optional<std::pair<RestorePoint, std::string>> best;  // point, job folder
  for (const Candidate& c : complete) {
    if (c.id != highest) continue;
    auto point = read_point(fs, c.dir);
    if (!point.is_ok()) {
      return point.status().with_context(
          "--restore latest: the newest checkpoint " + c.dir +
          " is unreadable (not falling back silently; run `sluice checkpoint verify`, or pass an older checkpoint "
          "explicitly with --restore PATH)");
    }
    auto key = [](const RestorePoint& p, const std::string& folder) {
      return std::make_tuple(p.metadata.trigger_timestamp_ms, folder);
    };
    if (!best || key(*point, c.job_folder) > key(best->first, best->second)) {
      best.emplace(std::move(point).value(), c.job_folder);
    }
  }
  const auto chosen = job_and_checkpoint(best->first.location);
  for (const auto& [record, by_job] : finished) {
    if (job_and_checkpoint(record.restored_location) != chosen) continue;
    return Status::failed_precondition(
        "--restore latest: the newest checkpoint, " + best->first.location + ", was restored by run " + by_job +
        ", which FINISHED: it processed that checkpoint's input to the end and committed its output, so restoring "
        "it again would process the same input a second time. Start without --restore for a new run, or pass the "
        "checkpoint explicitly (--restore " + best->first.location + ") to process it again on purpose");
  }
  return std::move(best->first);
}

// The chk-<n> folder names directly inside `dir`, highest id last.
std::vector<std::pair<CheckpointId, std::string>> checkpoint_folders(fs::FileSystem& fs, const std::string& dir) {
  std::vector<std::pair<CheckpointId, std::string>> out;
  auto entries = fs.list_dir(dir);
  if (!entries.is_ok()) return out;
  for (const fs::DirEntry& e : *entries) {
    auto id = parse_checkpoint_dir_name(e.name);
    if (id && e.kind == fs::PathKind::kDirectory) out.emplace_back(*id, e.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A directory named instead of a checkpoint: a job folder (chk-<n> folders inside) or a checkpoint directory
// (job folders inside): says which, and what to pass instead. Ok when `path` is neither.
Status explain_folder(fs::FileSystem& fs, const std::string& path) {
  auto kind = fs.stat(path);
  if (!kind.is_ok() || *kind != fs::PathKind::kDirectory) return Status::ok();
  if (parse_checkpoint_dir_name(fs::path_file_name(path))) return Status::ok();  // a chk-<n> folder itself
  auto meta = fs.stat(fs::join_path(path, kMetadataFileName));
  if (meta.is_ok() && *meta != fs::PathKind::kMissing) return Status::ok();
  auto chks = checkpoint_folders(fs, path);
  if (!chks.empty()) {
    return Status::invalid_argument(
        "'" + path + "' is a job folder (one run's checkpoints, " + chks.front().second +
        (chks.size() > 1 ? " .. " + chks.back().second : std::string()) +
        "), not a checkpoint: pass one of its chk-<n> folders (e.g. " + fs::join_path(path, chks.back().second) +
        ") or 'latest' (the newest completed checkpoint under execution.checkpointing.dir)");
  }
  auto entries = fs.list_dir(path);
  if (!entries.is_ok()) return Status::ok();
  for (const fs::DirEntry& e : *entries) {
    if (e.kind != fs::PathKind::kDirectory) continue;
    if (!checkpoint_folders(fs, fs::join_path(path, e.name)).empty()) {
      return Status::invalid_argument(
          "'" + path + "' is a checkpoint directory (job folders <job-id>/chk-<n> inside), not a checkpoint: pass "
          "'latest' with execution.checkpointing.dir=" + path + " (the newest completed checkpoint of any run) or a "
          "specific chk-<n> folder, e.g. " + fs::join_path(fs::join_path(path, e.name), "chk-<n>"));
    }
  }
  return Status::ok();
}

}  // namespace

std::string format_finished_restore(const FinishedRestore& record) {
  return "restored " + record.restored_location + "\nfinished_at_ms " + std::to_string(record.finished_at_ms) + "\n";
}

std::optional<FinishedRestore> parse_finished_restore(std::string_view text) {
  constexpr std::string_view kRestored = "restored ", kFinished = "\nfinished_at_ms ";
  if (text.substr(0, kRestored.size()) != kRestored) return std::nullopt;
  const size_t split = text.find(kFinished);
  if (split == std::string_view::npos || split <= kRestored.size()) return std::nullopt;
  FinishedRestore out;
  out.restored_location = std::string(text.substr(kRestored.size(), split - kRestored.size()));
  std::string_view ms = text.substr(split + kFinished.size());
  if (!ms.empty() && ms.back() == '\n') ms.remove_suffix(1);
  if (ms.empty() || ms.front() == '-') return std::nullopt;
  const auto [end, ec] = std::from_chars(ms.data(), ms.data() + ms.size(), out.finished_at_ms);
  if (ec != std::errc() || end != ms.data() + ms.size()) return std::nullopt;
  return out;
}

Status check_restore_properties(const CheckpointMetadata& metadata, const std::map<std::string, std::string>& job) {
  std::string diffs;
  auto value = [](const std::map<std::string, std::string>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("(not recorded)") : "'" + it->second + "'";
  };
  std::set<std::string> keys;
  for (const auto& kv : job) keys.insert(kv.first);
  for (const auto& kv : metadata.properties) keys.insert(kv.first);
  for (const std::string& k : keys) {
    auto a = metadata.properties.find(k);
    auto b = job.find(k);
    if (a != metadata.properties.end() && b != job.end() && a->second == b->second) continue;
    diffs += (diffs.empty() ? "" : "; ") + k + ": checkpoint " + value(metadata.properties, k) + ", this job " +
             (b == job.end() ? std::string("(not set)") : "'" + b->second + "'");
  }
  if (diffs.empty()) return Status::ok();
  return Status::failed_precondition("checkpoint " + std::to_string(metadata.checkpoint_id.value()) +
                                     " was taken by a job with different parameters (" + diffs +
                                     "); restoring it would not continue the same stream: run with the checkpoint's "
                                     "parameters, or start fresh without --restore");
}

Result<RestorePoint> resolve_restore_path(const std::string& path_or_latest, const std::string& checkpoint_dir,
                                          const fs::FileSystemRegistry& file_systems, const std::string& input_name) {
  if (path_or_latest == kRestoreLatest) {
    auto f = file_systems.for_path(checkpoint_dir.empty() ? "." : checkpoint_dir);
    if (!f.is_ok()) return f.status().with_context(input_name + " latest: execution.checkpointing.dir");
    return resolve_latest(**f, fs::remove_entropy_key_of(**f, checkpoint_dir));
  }
  if (path_or_latest.empty()) {
    return Status::invalid_argument(
        (input_name == "--restore" ? std::string("--restore / execution.state-recovery.path is set but empty")
                                   : input_name + " is empty") +
        ": expected a savepoint folder, a chk-<n> folder, its _metadata file, or 'latest' (leave it unset to start "
        "fresh)");
  }
  auto fsys = file_systems.for_path(path_or_latest);
  if (!fsys.is_ok()) return fsys.status().with_context(input_name);
  fs::FileSystem& f = **fsys;
  SLUICE_RETURN_IF_ERROR(explain_folder(f, path_or_latest).with_context(input_name + " " + path_or_latest));
  auto point = read_point(f, path_or_latest);
  if (!point.is_ok()) return point.status().with_context(input_name + " " + path_or_latest);
  return point;
}

}  // namespace sluice::checkpoint
