#include "demo_output.h"

#include <unistd.h>

#include <algorithm>
#include <memory>

#include "cluster/job_claims.h"
#include "core/host_name.h"
#include "fs/folder_lock.h"
#include "fs/path.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/core/ids.h"

namespace sluice::cli {
namespace {

// part-<job id>-<subtask>-<checkpoint>-<counter> (is_part_file_name): the job id follows the prefix.
std::string part_file_job_id(const std::string& name) {
  constexpr size_t kPrefix = 5, kJobIdDigits = 32;  // "part-"
  return name.substr(kPrefix, kJobIdDigits);
}

// Takes the locks of the local folders the job will claim, held until the returned claims are destroyed.
Result<std::vector<std::unique_ptr<HeldClaim>>> lock_folders(const DemoOutputRun& run) {
  ClaimingJob preparer;
  preparer.description = "sluice demo pid " + std::to_string(::getpid()) + " on host " + host_name() +
                         " (preparing its output folder before its job starts)";
  struct Folder {
    std::string path, what, by;
  };
  const Folder folders[] = {
      {run.checkpoint_dir, "checkpoint folder '" + run.checkpoint_dir + "' (execution.checkpointing.dir)",
       "the checkpoint storage"},
      {run.output_dir, "output folder '" + run.output_dir + "'", "the output"}};
  std::vector<cluster::WantedClaim> claims;
  for (const Folder& f : folders) {
    if (f.path.empty()) continue;
    if (auto claim = fs::local_folder_claim(f.path, f.what)) claims.push_back({std::move(*claim), f.by});
  }
  // One folder for both is the job's own mistake, refused as the job's claims refuse it; taking its lock twice
  // would instead blame this very process for holding it.
  SLUICE_RETURN_IF_ERROR(cluster::check_claims_distinct("demo", claims));
  std::vector<std::unique_ptr<HeldClaim>> held;
  for (const cluster::WantedClaim& w : claims) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HeldClaim> lock, w.claim.take(preparer));
    held.push_back(std::move(lock));
  }
  return held;
}

Result<std::vector<std::string>> read_demo_runs(fs::FileSystem& fsys, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fsys.stat(path));
  if (kind == fs::PathKind::kMissing) return std::vector<std::string>{};
  SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, fsys.read_file(path));
  return parse_demo_runs(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
}

// What the output folder holds: the record's job ids and its part files split by them. A folder not there yet holds
// nothing.
struct OutputState {
  std::vector<std::string> recorded;
  OutputCleanup plan;
};

Result<OutputState> read_output(fs::FileSystem& fsys, const std::string& dir, const std::string& record) {
  OutputState state;
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fsys.stat(dir));
  if (kind == fs::PathKind::kMissing) return state;
  SLUICE_ASSIGN_OR_RETURN(state.recorded, read_demo_runs(fsys, record));
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries, fsys.list_dir(dir));
  state.plan = plan_output_cleanup(entries, state.recorded);
  return state;
}

// Adds the run's ids to the record (written whole and synced) unless it lists them already.
Status record_runs(fs::FileSystem& fsys, const std::string& dir, const std::string& record,
                   std::vector<std::string> ids, const DemoOutputRun& run) {
  std::vector<std::string> new_ids = run.restored_job_ids;
  new_ids.push_back(run.job_id);
  const size_t before = ids.size();
  for (const std::string& id : new_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  if (ids.size() == before) return Status::ok();
  const std::string text = format_demo_runs(ids);
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  SLUICE_RETURN_IF_ERROR(fsys.write_file(record, bytes, fs::Durability::kSync));
  return fsys.sync_dir(dir);
}

Status refuse_foreign(const std::string& dir, const std::string& record, const std::vector<std::string>& foreign) {
  const std::string& example = foreign.front();
  return Status::failed_precondition(
      "output folder '" + dir + "' holds " + std::to_string(foreign.size()) +
      " part file(s) of a job other than the `sluice demo` runs recorded in " + record + ", e.g. '" + example +
      "' of job id " + part_file_job_id(example) +
      "; the demo removes only its own runs' output, and its --verify would count these: choose another --output, "
      "or remove those files yourself");
}

}  // namespace

Result<std::vector<std::string>> parse_demo_runs(std::string_view text, const std::string& path) {
  std::vector<std::string> ids;
  int line_number = 0;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string line(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    JobId id;
    if (!JobId::parse(line, &id) || id.to_hex() != line) {
      return Status::corruption(path + " line " + std::to_string(line_number) + ": expected a job id (32 lowercase " +
                                "hex digits) or a '#' comment, got '" + line + "'");
    }
    ids.push_back(line);
  }
  return ids;
}

std::string format_demo_runs(const std::vector<std::string>& job_ids) {
  std::string text =
      "# The job ids of the `sluice demo` runs that write part files into this folder, one a line. A fresh demo run\n"
      "# removes only part files of these jobs, and refuses to start beside any other job's.\n";
  for (const std::string& id : job_ids) text += id + "\n";
  return text;
}

OutputCleanup plan_output_cleanup(const std::vector<fs::DirEntry>& entries,
                                  const std::vector<std::string>& demo_job_ids) {
  OutputCleanup plan;
  for (const fs::DirEntry& e : entries) {
    if (e.kind != fs::PathKind::kFile || !file::is_part_file_name(e.name)) continue;  // a user's "part-notes.txt"
    const bool demo =
        std::find(demo_job_ids.begin(), demo_job_ids.end(), part_file_job_id(e.name)) != demo_job_ids.end();
    (demo ? plan.demo_files : plan.foreign_files).push_back(e.name);
  }
  return plan;
}

Status prepare_demo_output(const fs::FileSystemRegistry& file_systems, const DemoOutputRun& run) {
  // Both paths' schemes first: a run refused for one of them must not leave the other folder created.
  auto output_fs = file_systems.for_path(run.output_dir);
  if (!output_fs.is_ok()) return output_fs.status().with_context("--output");
  if (!run.checkpoint_dir.empty()) {
    if (auto checkpoint_fs = file_systems.for_path(run.checkpoint_dir); !checkpoint_fs.is_ok()) {
      return checkpoint_fs.status().with_context("execution.checkpointing.dir");
    }
  }
  fs::FileSystem& fsys = **output_fs;
  const std::string& dir = run.output_dir;
  const std::string record = fs::join_path(dir, std::string(kDemoRunsFileName));
  // Another job's part files are seen before anything is locked or created: a refused run writes nothing, not even
  // a lock file or its checkpoint folder. Seen again below under the lock, which decides.
  if (run.start == OutputStart::kFresh) {
    SLUICE_ASSIGN_OR_RETURN(OutputState seen, read_output(fsys, dir, record));
    if (!seen.plan.foreign_files.empty()) return refuse_foreign(dir, record, seen.plan.foreign_files);
  }
  // Both folders the job will claim are locked next: a run that a running job's claim will refuse must not remove
  // anything (the part files may be a killed run's committed output, which its --restore latest still needs).
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<HeldClaim>> held, lock_folders(run));
  if (Status s = fs::create_directories_durable(fsys, dir); !s.is_ok()) {
    return s.with_context("cannot create output directory '" + dir + "'");
  }
  SLUICE_ASSIGN_OR_RETURN(OutputState state, read_output(fsys, dir, record));
  if (run.start == OutputStart::kFresh && !state.plan.foreign_files.empty()) {
    return refuse_foreign(dir, record, state.plan.foreign_files);
  }
  // Recorded before anything is removed or written, so every part file this run's job writes carries a recorded id.
  SLUICE_RETURN_IF_ERROR(record_runs(fsys, dir, record, std::move(state.recorded), run));
  if (run.start == OutputStart::kRestored) return Status::ok();
  for (const std::string& name : state.plan.demo_files) {
    SLUICE_RETURN_IF_ERROR(fsys.remove_file(fs::join_path(dir, name)));
  }
  return Status::ok();
}

}  // namespace sluice::cli
