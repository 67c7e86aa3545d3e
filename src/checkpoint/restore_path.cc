#include "checkpoint/restore_path.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"

namespace sluice::checkpoint {
namespace {

struct Candidate {
  CheckpointId id;
  std::string job_folder;  // name, for the tie-break
  std::string dir;         // the chk-<n> path
};

Result<RestorePoint> read_point(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(fs, path));
  SLUICE_ASSIGN_OR_RETURN(CheckpointMetadata m, read_checkpoint_metadata(fs, loc));
  return RestorePoint{loc.checkpoint_dir, std::move(m)};
}

Result<RestorePoint> resolve_latest(FileSystem& fs, const std::string& checkpoint_dir) {
  if (checkpoint_dir.empty()) {
    return Status::invalid_argument("--restore latest: no checkpoint directory is set (execution.checkpointing.dir)");
  }
  SLUICE_ASSIGN_OR_RETURN(PathKind kind, fs.stat(checkpoint_dir));
  if (kind != PathKind::kDirectory) {
    return Status::not_found("--restore latest: checkpoint directory '" + checkpoint_dir + "' does not exist");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> jobs, fs.list_dir(checkpoint_dir));
  std::vector<Candidate> complete;
  for (const DirEntry& job : jobs) {
    if (job.kind != PathKind::kDirectory) continue;
    const std::string job_dir = join_path(checkpoint_dir, job.name);
    SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, fs.list_dir(job_dir));
    for (const DirEntry& e : entries) {
      auto id = parse_checkpoint_dir_name(e.name);
      if (!id || e.kind != PathKind::kDirectory) continue;
      const std::string dir = join_path(job_dir, e.name);
      SLUICE_ASSIGN_OR_RETURN(PathKind meta, fs.stat(join_path(dir, kMetadataFileName)));
      if (meta == PathKind::kFile) complete.push_back(Candidate{*id, job.name, dir});
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
  return std::move(best->first);
}

}  // namespace

Result<RestorePoint> resolve_restore_path(const std::string& path_or_latest, const std::string& checkpoint_dir,
                                          FileSystem* fs) {
  FileSystem& f = fs ? *fs : *local_file_system();
  if (path_or_latest == kRestoreLatest) return resolve_latest(f, checkpoint_dir);
  if (path_or_latest.empty()) return Status::invalid_argument("--restore: empty path (expected a path or 'latest')");
  auto point = read_point(f, path_or_latest);
  if (!point.is_ok()) return point.status().with_context("--restore " + path_or_latest);
  return point;
}

}  // namespace sluice::checkpoint
