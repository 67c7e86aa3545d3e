#include "checkpoint/savepoint_files.h"

#include <cstdio>
#include <set>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"

namespace sluice::checkpoint {
namespace {
// The coordinator's statistics, written next to `_metadata` (coordinator/checkpoint_stats_json.h); part of the
// savepoint folder, never referenced by the metadata.
constexpr std::string_view kStatsSideFileName = "_checkpoint_stats.json";
}  // namespace

std::string savepoint_dir_name(const JobId& job, uint64_t random) {
  char suffix[13];
  std::snprintf(suffix, sizeof suffix, "%012llx", static_cast<unsigned long long>(random & 0xffffffffffffULL));
  return std::string(kSavepointDirPrefix) + job.to_hex().substr(0, 6) + "-" + suffix;
}

Status no_savepoint_directory(const std::string& what) {
  return Status::invalid_argument(what + ": no savepoint directory: give a target directory, or configure a default "
                                  "one with execution.checkpointing.savepoint-dir (Flink's state.savepoints.dir, "
                                  "which Sluice reads too)");
}

Result<std::string> create_savepoint_dir(fs::FileSystem& fs, const std::string& given_dir, const JobId& job,
                                         NameSource* given_names) {
  const std::shared_ptr<NameSource> fallback = given_names != nullptr ? nullptr : NameSource::random();
  NameSource& names = given_names != nullptr ? *given_names : *fallback;
  // A savepoint stays relocatable: never any entropy in its keys (Flink's docs, "Entropy injection for S3 file
  // systems"), and no marker either.
  const std::string target_dir = fs::remove_entropy_key_of(fs, given_dir);
  if (target_dir.empty()) {
    return no_savepoint_directory("savepoint");
  }
  SLUICE_RETURN_IF_ERROR(fs::create_directories_durable(fs, target_dir).with_context("creating savepoint directory"));
  for (int attempt = 0; attempt < 8; ++attempt) {
    const uint64_t random = names.next("savepoint-dir");
    const std::string dir = fs::join_path(target_dir, savepoint_dir_name(job, random));
    SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fs.stat(dir));
    if (kind != fs::PathKind::kMissing) continue;
    SLUICE_RETURN_IF_ERROR(fs.create_dir(dir).with_context("creating savepoint folder"));
    SLUICE_RETURN_IF_ERROR(fs.sync_dir(target_dir).with_context("creating savepoint folder"));
    return dir;
  }
  return Status::internal("cannot find an unused savepoint folder name in '" + target_dir + "'");
}

Result<DisposeReport> dispose_savepoint(fs::FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(fs, path));
  SLUICE_ASSIGN_OR_RETURN(CheckpointMetadata md, read_checkpoint_metadata(fs, loc));
  if (md.type != SnapshotType::kSavepoint) {
    return Status::failed_precondition("'" + loc.metadata_path + "' is the metadata of checkpoint " +
                                       std::to_string(md.checkpoint_id.value()) +
                                       ", not of a savepoint: checkpoints are deleted by the job's retention");
  }
  DisposeReport report;
  report.savepoint_id = md.checkpoint_id;
  std::set<std::string> referenced;
  for (const std::string& rel : md.referenced_files()) {
    const std::string file = handle_file_path(loc.checkpoint_dir, rel);
    referenced.insert(fs::path_file_name(file));
    auto size = fs.file_size(file);
    if (!size.is_ok() && size.status().code() == StatusCode::kNotFound) continue;
    SLUICE_RETURN_IF_ERROR(size.status().with_context("disposing of savepoint " + loc.checkpoint_dir));
    SLUICE_RETURN_IF_ERROR(fs.remove_file(file).with_context("disposing of savepoint " + loc.checkpoint_dir));
    ++report.files_deleted;
    report.bytes_deleted += *size;
  }
  SLUICE_RETURN_IF_ERROR(fs.remove_file(loc.metadata_path).with_context("disposing of savepoint"));
  ++report.files_deleted;
  // The statistics side file belongs to the savepoint too.
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> left, fs.list_dir(loc.checkpoint_dir));
  for (const fs::DirEntry& e : left) {
    if (e.name == kStatsSideFileName) {
      (void)fs.remove_file(fs::join_path(loc.checkpoint_dir, e.name));
    } else {
      report.kept.push_back(fs::join_path(loc.checkpoint_dir, e.name));
    }
  }
  if (report.kept.empty()) {
    SLUICE_RETURN_IF_ERROR(fs.remove_empty_dir(loc.checkpoint_dir).with_context("disposing of savepoint"));
    report.folder_removed = true;
  }
  return report;
}

}  // namespace sluice::checkpoint
