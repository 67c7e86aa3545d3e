#include "savepoint_command.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "checkpoint/byte_size_text.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/savepoint_files.h"
#include "cli_config.h"
#include "fs/path.h"
#include "job_report.h"
#include "jobs_command.h"
#include "savepoint_check.h"
#include "rest/rest_client.h"

namespace sluice::cli {
namespace {

struct TriggerFlags {
  std::string job;
  std::string dir;
  bool drain = false;
  std::string type = "canonical";  // --type: canonical | native (Flink's formatType)
  double timeout_s = 600;
};

// POSTs the request to the job's endpoint, then polls GET .../savepoints/:triggerid until it completed.
int trigger_and_wait(const TriggerFlags& f, bool stop) {
  const char* verb = stop ? "stop job" : "take a savepoint of job";
  auto job = find_running_job(f.job);
  if (!job.is_ok()) {
    std::fprintf(stderr, "error: %s\n", job.status().message().c_str());
    return 1;
  }
  const std::string id = job->job_id.to_hex();
  nlohmann::json body = stop ? nlohmann::json{{"drain", f.drain}} : nlohmann::json{{"cancel-job", false}};
  auto format = checkpoint::parse_savepoint_format(f.type);
  if (!format) {  // CLI11's check refuses it before; kept for a caller that bypasses it
    std::fprintf(stderr, "error: --type %s: expected canonical or native\n", f.type.c_str());
    return 2;
  }
  body["formatType"] = checkpoint::savepoint_format_name(*format);
  // A relative folder is this shell's, not the job's working directory (which the user may not know).
  if (!f.dir.empty()) body[stop ? "targetDirectory" : "target-directory"] = fs::canonical_path(f.dir);
  const std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(f.timeout_s));
  auto res = rest::http_request("POST", job->address, job->port, "/jobs/" + id + (stop ? "/stop" : "/savepoints"),
                                body.dump(), request_timeout(deadline));
  if (!res.is_ok() || res->status != 202) {
    std::fprintf(stderr, "error: cannot %s %s: %s\n", verb, id.c_str(),
                 res.is_ok() ? rest::error_message(*res).c_str() : res.status().message().c_str());
    return 1;
  }
  nlohmann::json accepted = nlohmann::json::parse(res->body, nullptr, false);
  if (!accepted.is_object() || !accepted.contains("request-id") || !accepted["request-id"].is_string()) {
    std::fprintf(stderr, "error: job %s answered without a request id: %s\n", id.c_str(), res->body.c_str());
    return 1;
  }
  const std::string trigger = accepted["request-id"].get<std::string>();
  std::printf("%s job %s (%s): request %s\n", stop ? "Stopping" : "Triggering a savepoint of", id.c_str(),
              job->name.c_str(), trigger.c_str());
  std::fflush(stdout);
  while (std::chrono::steady_clock::now() < deadline) {
    auto poll = rest::http_request("GET", job->address, job->port, "/jobs/" + id + "/savepoints/" + trigger, "",
                                   request_timeout(deadline));
    if (!poll.is_ok() || poll->status != 200) {
      std::fprintf(stderr, "error: lost job %s while waiting for request %s: %s\n", id.c_str(), trigger.c_str(),
                   poll.is_ok() ? rest::error_message(*poll).c_str() : poll.status().message().c_str());
      return 1;
    }
    nlohmann::json j = nlohmann::json::parse(poll->body, nullptr, false);
    if (j.is_object() && j.contains("status") && j["status"].value("id", "") == "COMPLETED") {
      const nlohmann::json op = j.value("operation", nlohmann::json::object());
      if (op.contains("location")) {
        std::printf("%s %s\n", stop ? "Job stopped; savepoint stored in" : "Savepoint completed:",
                    op["location"].get<std::string>().c_str());
        return 0;
      }
      std::fprintf(stderr, "error: the %s failed: %s\n", stop ? "stop-with-savepoint" : "savepoint",
                   op.value("failure-cause", nlohmann::json::object()).value("stack-trace", poll->body).c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "error: request %s of job %s did not complete within %.0f s\n", trigger.c_str(), id.c_str(),
               f.timeout_s);
  return 1;
}

// The savepoint's metadata, one line per operator, and a check of every file (sizes and checksums).
int inspect(const std::string& path, const StorageFlags& flags) {
  auto file_systems = file_systems_of(flags);
  auto fsys = file_systems.is_ok() ? file_systems->for_path(path) : Result<std::shared_ptr<fs::FileSystem>>(file_systems.status());
  if (!fsys.is_ok()) {
    std::fprintf(stderr, "error: %s\n", fsys.status().to_string().c_str());
    return 2;
  }
  auto& fs = **fsys;
  auto loc = checkpoint::locate_checkpoint(fs, path);
  if (!loc.is_ok()) {
    std::fprintf(stderr, "error: %s\n", loc.status().to_string().c_str());
    return 2;
  }
  auto md = checkpoint::read_checkpoint_metadata(fs, *loc);
  if (!md.is_ok()) {
    std::fprintf(stderr, "error: %s\n", md.status().to_string().c_str());
    return 1;
  }
  std::printf("%s %lld of job %s, %s, %s\n", md->type == checkpoint::SnapshotType::kSavepoint ? "savepoint" : "checkpoint",
              static_cast<long long>(md->checkpoint_id.value()), md->job_id.to_hex().c_str(), loc->checkpoint_dir.c_str(),
              checkpoint::format_bytes(md->state_size_bytes()).c_str());
  if (md->type == checkpoint::SnapshotType::kSavepoint) {
    std::printf("format %s%s\n", checkpoint::savepoint_format_name(md->savepoint_format),
                md->is_native_savepoint() ? " (the state backend's own files: restores only into that backend)"
                                          : " (restores into either state backend)");
  }
  if (!md->state_backend.empty()) std::printf("state backend %s\n", md->state_backend.c_str());
  for (const auto& op : md->operators) {
    uint64_t keyed = 0, operator_state = 0;
    for (const auto& st : op.subtasks) {
      if (st.keyed_state) keyed += st.keyed_state->stream.size_bytes;
      if (st.incremental_keyed_state) keyed += st.incremental_keyed_state->full_size_bytes();
      if (st.operator_state) operator_state += st.operator_state->size_bytes;
    }
    std::printf("  %-40s uid %-28s parallelism %d, max parallelism %d, keyed %s, operator state %s\n",
                op.operator_name.c_str(), op.operator_id.c_str(), op.parallelism, op.max_parallelism,
                checkpoint::format_bytes(keyed).c_str(), checkpoint::format_bytes(operator_state).c_str());
  }
  for (const auto& [k, v] : md->properties) std::printf("  property %s = %s\n", k.c_str(), v.c_str());
  Status files = checkpoint::check_restore_files(fs, loc->checkpoint_dir, *md, checkpoint::RestoreFileCheck::kChecksums);
  if (!files.is_ok()) {
    std::fprintf(stderr, "error: %s\n", files.to_string().c_str());
    return 1;
  }
  std::printf("every state file is present and intact (sizes and XXH3-64 checksums)\n");
  return 0;
}

int dispose(const std::string& path, const StorageFlags& flags) {
  auto file_systems = file_systems_of(flags);
  auto fsys = file_systems.is_ok() ? file_systems->for_path(path) : Result<std::shared_ptr<fs::FileSystem>>(file_systems.status());
  if (!fsys.is_ok()) {
    std::fprintf(stderr, "error: %s\n", fsys.status().to_string().c_str());
    return 2;
  }
  auto r = checkpoint::dispose_savepoint(**fsys, path);
  if (!r.is_ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().to_string().c_str());
    return 1;
  }
  std::printf("Disposed of savepoint %lld at %s: %lld files, %s\n", static_cast<long long>(r->savepoint_id.value()),
              path.c_str(), static_cast<long long>(r->files_deleted), checkpoint::format_bytes(r->bytes_deleted).c_str());
  for (const std::string& k : r->kept) std::printf("kept %s (not part of the savepoint)\n", k.c_str());
  return 0;
}

}  // namespace

void add_savepoint_commands(CLI::App& app, int* exit_code) {
  auto sp = std::make_shared<TriggerFlags>();
  CLI::App* savepoint = app.add_subcommand(
      "savepoint", "Trigger a savepoint of a running job (POST /jobs/:jobid/savepoints), or inspect / dispose of one");
  savepoint->require_subcommand(0, 1);
  savepoint->add_option("JOB", sp->job, "The job id, or any prefix of it that names one running job");
  savepoint->add_option("DIR", sp->dir,
                        "Target directory, a path (relative: to this shell's directory) or s3:// URI (default: the "
                        "job's execution.checkpointing.savepoint-dir)");
  savepoint->add_option("--timeout", sp->timeout_s, "Seconds to wait for the savepoint")
      ->capture_default_str()
      ->check(positive_seconds());
  savepoint->add_option("--type", sp->type,
                        "Savepoint format: canonical (portable: any backend and parallelism) or native (the state "
                        "backend's own files: faster, restores only into the same backend)")
      ->capture_default_str()
      ->check(CLI::IsMember({"canonical", "native"}, CLI::ignore_case));
  savepoint->callback([savepoint, sp, exit_code] {
    if (!savepoint->get_subcommands().empty()) return;
    if (sp->job.empty()) {
      std::fprintf(stderr, "error: sluice savepoint JOB [DIR], or sluice savepoint inspect|check|dispose PATH\n");
      *exit_code = 2;
      return;
    }
    *exit_code = trigger_and_wait(*sp, /*stop=*/false);
  });

  auto path = std::make_shared<std::string>();
  CLI::App* insp = savepoint->add_subcommand("inspect", "Show a savepoint's operators and sizes, and check its files");
  insp->add_option("PATH", *path, "The savepoint folder or its _metadata (a path, file:// or s3:// URI)")->required();
  auto insp_flags = std::make_shared<StorageFlags>();
  add_storage_flags(insp, insp_flags);
  insp->callback([path, insp_flags, exit_code] { *exit_code = inspect(*path, *insp_flags); });
  auto dpath = std::make_shared<std::string>();
  CLI::App* disp = savepoint->add_subcommand("dispose", "Delete a savepoint (its files, _metadata and folder)");
  disp->add_option("PATH", *dpath, "The savepoint folder or its _metadata (a path, file:// or s3:// URI)")->required();
  auto disp_flags = std::make_shared<StorageFlags>();
  add_storage_flags(disp, disp_flags);
  disp->callback([dpath, disp_flags, exit_code] { *exit_code = dispose(*dpath, *disp_flags); });
  add_savepoint_check_command(*savepoint, exit_code);

  auto st = std::make_shared<TriggerFlags>();
  CLI::App* stop = app.add_subcommand(
      "stop", "Stop a running job with a savepoint (POST /jobs/:jobid/stop): sources stop, a final savepoint is "
              "taken, sinks commit, the job finishes");
  stop->add_option("JOB", st->job, "The job id, or any prefix of it that names one running job")->required();
  stop->add_option("--savepoint-dir", st->dir,
                   "Target directory, a path (relative: to this shell's directory) or s3:// URI (default: the job's "
                   "execution.checkpointing.savepoint-dir)");
  stop->add_flag("--drain", st->drain,
                 "End the input first: emit the final watermark (MAX) so event-time windows and timers fire");
  stop->add_option("--timeout", st->timeout_s, "Seconds to wait for the job to stop")
      ->capture_default_str()
      ->check(positive_seconds());
  stop->add_option("--type", st->type, "Savepoint format: canonical or native (see `sluice savepoint --help`)")
      ->capture_default_str()
      ->check(CLI::IsMember({"canonical", "native"}, CLI::ignore_case));
  stop->callback([st, exit_code] { *exit_code = trigger_and_wait(*st, /*stop=*/true); });
}

}  // namespace sluice::cli
