#include "checkpoint_inspect.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/file_system.h"
#include "coordinator/checkpoint_stats_json.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;

// The chk-<n> folders directly in `dir`, by id.
std::vector<std::string> checkpoint_folders(const fs::path& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto id = checkpoint::parse_checkpoint_dir_name(e.path().filename().string());
    if (id && e.is_directory()) found.emplace_back(id->value(), e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::vector<std::string> folders_under(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_regular_file(p, ec)) p = p.parent_path();  // a _metadata file named directly
  if (fs::exists(p / std::string(checkpoint::kMetadataFileName), ec) ||
      checkpoint::parse_checkpoint_dir_name(p.filename().string())) {
    return {p.string()};
  }
  std::vector<std::string> out = checkpoint_folders(p);
  if (!out.empty()) return out;  // a job folder
  std::vector<fs::path> jobs;
  for (const auto& e : fs::directory_iterator(p, ec))
    if (e.is_directory()) jobs.push_back(e.path());
  std::sort(jobs.begin(), jobs.end());
  for (const auto& j : jobs) {
    auto chks = checkpoint_folders(j);
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

std::string line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return std::string(buf) + "\n";
}

}  // namespace

Result<InspectResult> inspect_checkpoints(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::not_found("checkpoint inspect: '" + path + "' does not exist");
  std::vector<std::string> folders = folders_under(path);
  if (folders.empty()) {
    return Status::not_found("checkpoint inspect: no checkpoint under '" + path +
                             "' (expected a chk-<n> folder, a job folder or a checkpoint directory)");
  }
  auto local = checkpoint::local_file_system();
  InspectResult r;
  nlohmann::json checkpoints = nlohmann::json::array(), problems = nlohmann::json::array();
  enum { kDuration, kSync, kAsync, kAlignment, kStartDelay, kFull, kCheckpointed, kPersisted, kN };
  static const char* const kNames[kN] = {"end_to_end_duration_ms", "sync_duration_ms", "async_duration_ms",
                                          "alignment_duration_ms", "start_delay_ms", "state_size_bytes",
                                          "checkpointed_size_bytes", "persisted_data_bytes"};
  std::vector<int64_t> values[kN];
  std::vector<coordinator::CheckpointStatsEntry> details;  // for the per-subtask table of a single checkpoint

  r.table += line("%-34s %6s %-10s %9s %7s %7s %9s %7s %10s %10s %10s %4s", "job / checkpoint", "id", "status",
                  "duration", "sync", "async", "alignment", "delay", "full", "checkpointed", "persisted", "unal");
  for (const std::string& folder : folders) {
    nlohmann::json one = {{"location", folder}};
    auto loc = checkpoint::locate_checkpoint(*local, folder);
    Result<checkpoint::CheckpointMetadata> md =
        loc.is_ok() ? checkpoint::read_checkpoint_metadata(*local, *loc) : Result<checkpoint::CheckpointMetadata>(loc.status());
    const std::string name = fs::path(folder).parent_path().filename().string() + "/" + fs::path(folder).filename().string();
    if (!md.is_ok() && md.status().code() == StatusCode::kNotFound) {
      // No _metadata: a checkpoint in progress or aborted when its job stopped (as verify, not a problem).
      one["incomplete"] = true;
      r.table += line("%-34s %6s %-10s %s", name.c_str(), "-", "incomplete", "(no _metadata)");
      checkpoints.push_back(std::move(one));
      continue;
    }
    if (!md.is_ok()) {  // a damaged _metadata: listed, not inspected, exit 1
      one["error"] = md.status().to_string();
      problems.push_back(folder + ": " + md.status().to_string());
      r.exit_code = 1;
      r.table += line("%-34s %6s %-10s %s", name.c_str(), "-", "unreadable", md.status().to_string().c_str());
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
    const fs::path stats_path = fs::path(folder) / coordinator::kCheckpointStatsFileName;
    if (fs::exists(stats_path, ec)) {
      auto bytes = local->read_file(stats_path.string());
      if (bytes.is_ok()) {
        auto j = nlohmann::json::parse(bytes->begin(), bytes->end(), nullptr, /*allow_exceptions=*/false);
        auto e = j.is_discarded() ? Result<coordinator::CheckpointStatsEntry>(Status::corruption("not JSON"))
                                  : coordinator::checkpoint_stats_entry_from_json(j);
        if (e.is_ok()) {
          stats = std::move(e).value();
        } else {
          problems.push_back(stats_path.string() + ": " + e.status().to_string());
        }
      }
    }
    if (stats) {
      one["stats"] = coordinator::to_json(*stats);
      const int64_t v[kN] = {stats->end_to_end_duration_ms, stats->sync_duration_ms, stats->async_duration_ms,
                             stats->alignment_duration_ms, stats->start_delay_ms,
                             static_cast<int64_t>(stats->state_size_bytes),
                             static_cast<int64_t>(stats->checkpointed_size_bytes),
                             static_cast<int64_t>(stats->persisted_data_bytes)};
      for (int i = 0; i < kN; ++i) values[i].push_back(v[i]);
      r.table += line("%-34s %6" PRId64 " %-10s %7" PRId64 "ms %5" PRId64 "ms %5" PRId64 "ms %7" PRId64 "ms %5" PRId64
                      "ms %10s %10s %10s %4s",
                      name.c_str(), md->checkpoint_id.value(), "completed", stats->end_to_end_duration_ms,
                      stats->sync_duration_ms, stats->async_duration_ms, stats->alignment_duration_ms,
                      stats->start_delay_ms, bytes_text(md->state_size_bytes()).c_str(),
                      bytes_text(md->checkpointed_size_bytes()).c_str(), bytes_text(stats->persisted_data_bytes).c_str(),
                      stats->unaligned ? "yes" : "no");
      details.push_back(*stats);
    } else {
      one["stats"] = nullptr;
      r.table += line("%-34s %6" PRId64 " %-10s %9s %7s %7s %9s %7s %10s %10s %10s %4s", name.c_str(),
                      md->checkpoint_id.value(), "completed", "-", "-", "-", "-", "-",
                      bytes_text(md->state_size_bytes()).c_str(), bytes_text(md->checkpointed_size_bytes()).c_str(),
                      "-", "-");
    }
    checkpoints.push_back(std::move(one));
  }
  nlohmann::json summary = nlohmann::json::object();
  summary["checkpoints"] = checkpoints.size();
  summary["with_statistics"] = values[0].size();
  for (int i = 0; i < kN; ++i) summary[kNames[i]] = coordinator::to_json(coordinator::summarize(values[i]));
  r.document = {{"checkpoints", checkpoints}, {"summary", summary}, {"problems", problems}};

  if (folders.size() > 1 && !values[0].empty()) {
    r.table += "\nsummary over " + std::to_string(values[0].size()) + " checkpoints with statistics:\n";
    r.table += line("%-26s %10s %10s %10s %10s %10s", "", "min", "avg", "p50", "p99", "max");
    for (int i = 0; i < kN; ++i) {
      auto s = coordinator::summarize(values[i]);
      r.table += line("%-26s %10" PRId64 " %10.1f %10" PRId64 " %10" PRId64 " %10" PRId64, kNames[i], s.min, s.avg,
                      s.p50, s.p99, s.max);
    }
  }
  if (folders.size() == 1 && details.size() == 1) {
    r.table += "\nsubtasks of checkpoint " + std::to_string(details[0].id.value()) + ":\n";
    r.table += line("%6s %7s %9s %7s %7s %9s %7s %10s %10s %10s %4s", "vertex", "subtask", "ack", "sync", "async",
                    "alignment", "delay", "full", "checkpointed", "persisted", "unal");
    for (const auto& s : details[0].subtasks) {
      r.table += line("%6d %7d %7" PRId64 "ms %5" PRId64 "ms %5" PRId64 "ms %7" PRId64 "ms %5" PRId64 "ms %10s %10s %10s %4s",
                      s.vertex, s.subtask, s.ack_duration_ms, s.stats.sync_duration_ms, s.stats.async_duration_ms,
                      s.stats.alignment_duration_ms, s.stats.start_delay_ms,
                      bytes_text(s.stats.state_size_bytes).c_str(), bytes_text(s.stats.checkpointed_size_bytes).c_str(),
                      bytes_text(s.stats.persisted_data_bytes).c_str(), s.stats.unaligned ? "yes" : "no");
    }
  }
  for (const auto& p : problems) r.table += "problem: " + p.get<std::string>() + "\n";
  return r;
}

}  // namespace sluice::cli
