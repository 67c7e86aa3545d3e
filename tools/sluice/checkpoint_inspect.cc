#include "checkpoint_inspect.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "fs/file_system.h"
#include "fs/path.h"
#include "coordinator/checkpoint_stats_json.h"

namespace sluice::cli {
namespace {

// The chk-<n> folders directly in `dir`, by id.
std::vector<std::string> checkpoint_folders(fs::FileSystem& fsys, const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  auto entries = fsys.list_dir(dir);
  if (!entries.is_ok()) return {};
  for (const fs::DirEntry& e : *entries) {
    auto id = checkpoint::parse_checkpoint_dir_name(e.name);
    if (id && e.kind == fs::PathKind::kDirectory) found.emplace_back(id->value(), fs::join_path(dir, e.name));
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

// `kind` is what fsys.stat(path) said.
std::vector<std::string> folders_under(fs::FileSystem& fsys, const std::string& path, fs::PathKind kind) {
  std::string p = kind == fs::PathKind::kFile ? fs::path_parent(path) : path;  // a _metadata file named directly
  auto metadata = fsys.stat(fs::join_path(p, checkpoint::kMetadataFileName));
  if ((metadata.is_ok() && *metadata == fs::PathKind::kFile) ||
      checkpoint::parse_checkpoint_dir_name(fs::path_file_name(p))) {
    return {p};
  }
  std::vector<std::string> out = checkpoint_folders(fsys, p);
  if (!out.empty()) return out;  // a job folder
  auto entries = fsys.list_dir(p);
  if (!entries.is_ok()) return out;
  for (const fs::DirEntry& e : *entries) {  // sorted by name
    if (e.kind != fs::PathKind::kDirectory) continue;
    auto chks = checkpoint_folders(fsys, fs::join_path(p, e.name));
    out.insert(out.end(), chks.begin(), chks.end());
  }
  return out;
}

std::string bytes_text(uint64_t b) {
  auto one_decimal = [](uint64_t v, uint64_t unit) {
    const uint64_t tenths = (v * 10 + unit / 2) / unit;
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
  };
  if (b >= (uint64_t{1} << 20)) return one_decimal(b, uint64_t{1} << 20) + " MiB";
  if (b >= 1024) return one_decimal(b, 1024) + " KiB";
  return std::to_string(b) + " B";
}

std::string ms_text(int64_t ms) { return std::to_string(ms) + "ms"; }

// A text table whose columns are as wide as their widest cell. The columns in `left` are left-aligned, the
// others right-aligned. A row with fewer cells than the header ends in a note: its last cell
// runs on and sets no width.
class TextTable {
 public:
  TextTable(std::vector<std::string> header, std::vector<size_t> left) : left_(std::move(left)) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render() const {
    const size_t n = rows_.front().size();
    std::vector<size_t> width(n, 0);
    for (const auto& row : rows_) {
      const size_t sized = row.size() < n ? row.size() - 1 : row.size();
      for (size_t c = 0; c < sized && c < n; ++c) width[c] = std::max(width[c], row[c].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string text;
      for (size_t c = 0; c < row.size(); ++c) {
        if (c > 0) text += ' ';
        const bool note = row.size() < n && c + 1 == row.size();
        const size_t pad = note || c >= n ? 0 : width[c] - std::min(width[c], row[c].size());
        const bool left = std::find(left_.begin(), left_.end(), c) != left_.end();
        if (!left) text.append(pad, ' ');
        text += row[c];
        if (left && c + 1 < row.size()) text.append(pad, ' ');
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
    return out;
  }

 private:
  std::vector<size_t> left_;
  std::vector<std::vector<std::string>> rows_;
};

// The statistics persisted next to a checkpoint's _metadata: nullopt when there are none (best effort, a
// checkpoint without them is as valid); an error naming the file when they exist but cannot be used.
Result<std::optional<coordinator::CheckpointStatsEntry>> read_stats(fs::FileSystem& fsys,
                                                                   const std::string& stats_path,
                                                                   CheckpointId metadata_id) {
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fsys.stat(stats_path));
  if (kind == fs::PathKind::kMissing) return std::optional<coordinator::CheckpointStatsEntry>();
  const std::string& name = stats_path;
  if (kind != fs::PathKind::kFile) {
    return Status::corruption(name + ": checkpoint statistics are not a regular file");
  }
  auto bytes = fsys.read_file(name);
  if (!bytes.is_ok()) return bytes.status().with_context(name);
  auto j = nlohmann::json::parse(bytes->begin(), bytes->end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::corruption(name + ": checkpoint statistics are not JSON");
  auto e = coordinator::checkpoint_stats_entry_from_json(j);
  if (!e.is_ok()) return e.status().with_context(name);
  if (e->id != metadata_id) {
    return Status::corruption(name + ": the statistics are of checkpoint " + std::to_string(e->id.value()) +
                              ", the _metadata next to them of checkpoint " + std::to_string(metadata_id.value()));
  }
  return std::optional<coordinator::CheckpointStatsEntry>(std::move(e).value());
}

}  // namespace

Result<InspectResult> inspect_checkpoints(const std::string& path, const fs::FileSystemRegistry& file_systems) {
  auto fsys_or = file_systems.for_path(path);
  if (!fsys_or.is_ok()) return fsys_or.status().with_context("checkpoint inspect");
  fs::FileSystem& fsys = **fsys_or;
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fsys.stat(path));
  if (kind == fs::PathKind::kMissing) return Status::not_found("checkpoint inspect: '" + path + "' does not exist");
  // A file is accepted only if it is a _metadata file, as `checkpoint verify` and `--restore` accept it; any other
  // file of a checkpoint (state, channel state) would otherwise quietly stand for its folder.
  if (kind == fs::PathKind::kFile && fs::path_file_name(path) != checkpoint::kMetadataFileName) {
    return Status::invalid_argument("checkpoint inspect: '" + path + "' is a file but not a " +
                                    std::string(checkpoint::kMetadataFileName) +
                                    " file (expected a chk-<n> folder, its _metadata, a job folder or a checkpoint "
                                    "directory)");
  }
  std::vector<std::string> folders = folders_under(fsys, path, kind);
  if (folders.empty()) {
    return Status::not_found("checkpoint inspect: no checkpoint under '" + path +
                             "' (expected a chk-<n> folder, a job folder or a checkpoint directory)");
  }
  InspectResult r;
  nlohmann::json checkpoints = nlohmann::json::array(), problems = nlohmann::json::array();
  enum { kDuration, kSync, kAsync, kAlignment, kStartDelay, kFull, kCheckpointed, kPersisted, kN };
  static const char* const kNames[kN] = {"end_to_end_duration_ms", "sync_duration_ms", "async_duration_ms",
                                          "alignment_duration_ms", "start_delay_ms", "state_size_bytes",
                                          "checkpointed_size_bytes", "persisted_data_bytes"};
  std::vector<int64_t> values[kN];
  std::vector<coordinator::CheckpointStatsEntry> details;  // for the per-subtask table of a single checkpoint

  TextTable table({"job / checkpoint", "id", "status", "duration", "sync", "async", "alignment", "delay", "full",
                   "checkpointed", "persisted", "unal"},
                  {0, 2});
  size_t incomplete = 0;
  for (const std::string& folder : folders) {
    nlohmann::json one = {{"location", folder}};
    auto loc = checkpoint::locate_checkpoint(fsys, folder);
    Result<checkpoint::CheckpointMetadata> md =
        loc.is_ok() ? checkpoint::read_checkpoint_metadata(fsys, *loc) : Result<checkpoint::CheckpointMetadata>(loc.status());
    const std::string name = fs::path_file_name(fs::path_parent(folder)) + "/" + fs::path_file_name(folder);
    if (!md.is_ok() && md.status().code() == StatusCode::kNotFound) {
      // No _metadata: a checkpoint in progress or aborted when its job stopped (as verify, not a problem).
      one["incomplete"] = true;
      ++incomplete;
      table.add({name, "-", "incomplete", "(no _metadata)"});
      checkpoints.push_back(std::move(one));
      continue;
    }
    if (!md.is_ok()) {  // a damaged _metadata: listed, not inspected, exit 1
      one["error"] = md.status().to_string();
      problems.push_back(folder + ": " + md.status().to_string());
      r.exit_code = 1;
      table.add({name, "-", "unreadable", md.status().to_string()});
      checkpoints.push_back(std::move(one));
      continue;
    }
    one["metadata"] = {{"checkpoint_id", md->checkpoint_id.value()},
                       {"job_id", md->job_id.to_hex()},
                       {"trigger_timestamp_ms", md->trigger_timestamp_ms},
                       {"type", md->type == checkpoint::SnapshotType::kSavepoint ? "savepoint" : "checkpoint"},
                       {"operators", md->operators.size()},
                       {"state_size_bytes", md->state_size_bytes()},
                       {"checkpointed_size_bytes", md->checkpointed_size_bytes()},
                       {"incremental", md->has_incremental_state()}};
    std::optional<coordinator::CheckpointStatsEntry> stats;
    auto read = read_stats(fsys, fs::join_path(folder, coordinator::kCheckpointStatsFileName), md->checkpoint_id);
    if (read.is_ok()) {
      stats = std::move(read).value();
    } else {  // unusable statistics: the checkpoint is listed without them, exit 1
      one["stats_error"] = read.status().to_string();
      problems.push_back(read.status().to_string());
      r.exit_code = 1;
    }
    const std::string id = std::to_string(md->checkpoint_id.value());
    if (stats) {
      one["stats"] = coordinator::to_json(*stats);
      const int64_t v[kN] = {stats->end_to_end_duration_ms, stats->sync_duration_ms, stats->async_duration_ms,
                             stats->alignment_duration_ms, stats->start_delay_ms,
                             static_cast<int64_t>(stats->state_size_bytes),
                             static_cast<int64_t>(stats->checkpointed_size_bytes),
                             static_cast<int64_t>(stats->persisted_data_bytes)};
      for (int i = 0; i < kN; ++i) values[i].push_back(v[i]);
      table.add({name, id, "completed", ms_text(stats->end_to_end_duration_ms), ms_text(stats->sync_duration_ms),
                 ms_text(stats->async_duration_ms), ms_text(stats->alignment_duration_ms),
                 ms_text(stats->start_delay_ms), bytes_text(md->state_size_bytes()),
                 bytes_text(md->checkpointed_size_bytes()), bytes_text(stats->persisted_data_bytes),
                 stats->unaligned ? "yes" : "no"});
      details.push_back(*stats);
    } else {
      one["stats"] = nullptr;
      table.add({name, id, "completed", "-", "-", "-", "-", "-", bytes_text(md->state_size_bytes()),
                 bytes_text(md->checkpointed_size_bytes()), "-", "-"});
    }
    checkpoints.push_back(std::move(one));
  }
  if (incomplete == folders.size()) {
    return Status::not_found("checkpoint inspect: no complete checkpoint (chk-<n> with _metadata) under '" + path +
                             "': " + std::to_string(incomplete) + " incomplete checkpoint folder(s) only (in progress "
                             "or aborted when their job stopped)");
  }
  r.table = table.render();
  nlohmann::json summary = nlohmann::json::object();
  summary["checkpoints"] = checkpoints.size();
  summary["with_statistics"] = values[0].size();
  for (int i = 0; i < kN; ++i) summary[kNames[i]] = coordinator::to_json(coordinator::summarize(values[i]));
  r.document = {{"checkpoints", checkpoints}, {"summary", summary}, {"problems", problems}};

  if (folders.size() > 1 && !values[0].empty()) {
    r.table += "\nsummary over " + std::to_string(values[0].size()) + " checkpoints with statistics:\n";
    TextTable sums({"", "min", "avg", "p50", "p99", "max"}, {0});
    for (int i = 0; i < kN; ++i) {
      auto s = coordinator::summarize(values[i]);
      char avg[32];
      std::snprintf(avg, sizeof avg, "%.1f", s.avg);
      sums.add({kNames[i], std::to_string(s.min), avg, std::to_string(s.p50), std::to_string(s.p99),
                std::to_string(s.max)});
    }
    r.table += sums.render();
  }
  if (folders.size() == 1 && details.size() == 1) {
    r.table += "\nsubtasks of checkpoint " + std::to_string(details[0].id.value()) + ":\n";
    // In vertex and subtask-index order (the statistics keep acknowledgement order).
    auto subtasks = details[0].subtasks;
    std::sort(subtasks.begin(), subtasks.end(), [](const auto& a, const auto& b) {
      return std::pair(a.vertex, a.subtask) < std::pair(b.vertex, b.subtask);
    });
    TextTable per({"vertex", "subtask", "ack", "sync", "async", "alignment", "delay", "full", "checkpointed",
                   "persisted", "unal"},
                  {});
    for (const auto& s : subtasks) {
      per.add({std::to_string(s.vertex), std::to_string(s.subtask), ms_text(s.ack_duration_ms),
               ms_text(s.stats.sync_duration_ms), ms_text(s.stats.async_duration_ms),
               ms_text(s.stats.alignment_duration_ms), ms_text(s.stats.start_delay_ms),
               bytes_text(s.stats.state_size_bytes), bytes_text(s.stats.checkpointed_size_bytes),
               bytes_text(s.stats.persisted_data_bytes), s.stats.unaligned ? "yes" : "no"});
    }
    r.table += per.render();
  }
  for (const auto& p : problems) r.table += "problem: " + p.get<std::string>() + "\n";
  return r;
}

}  // namespace sluice::cli
