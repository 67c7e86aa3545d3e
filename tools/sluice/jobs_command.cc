#include "jobs_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "job_report.h"
#include "rest/job_registry.h"
#include "rest/rest_client.h"

namespace sluice::cli {

// The live entries (stale ones removed); warnings for unreadable files on stderr. nullopt after printing an error.
std::optional<std::vector<rest::JobRegistration>> running_jobs() {
  rest::JobRegistry registry(rest::default_runtime_dir());
  auto listing = registry.list(/*clean_stale=*/true);
  if (!listing.is_ok()) {
    std::fprintf(stderr, "error: %s\n", listing.status().to_string().c_str());
    return std::nullopt;
  }
  for (const std::string& u : listing->unreadable) std::fprintf(stderr, "warning: skipping %s\n", u.c_str());
  return std::move(listing->live);
}

// Whether the job's process still serves it: registered and alive.
bool still_registered(const rest::JobRegistration& r) {
  rest::JobRegistry registry(rest::default_runtime_dir());
  auto listing = registry.list(/*clean_stale=*/false);
  if (!listing.is_ok()) return false;
  for (const rest::JobRegistration& live : listing->live) {
    if (live.job_id == r.job_id) return true;
  }
  return false;
}

std::chrono::milliseconds request_timeout(std::chrono::steady_clock::time_point deadline) {
  using std::chrono::milliseconds;
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::clamp(left, milliseconds(1), milliseconds(std::chrono::seconds(5)));
}

Result<rest::JobRegistration> find_running_job(const std::string& prefix) {
  auto jobs = running_jobs();
  if (!jobs) return Status::not_found("the job registry cannot be read");
  auto job = rest::resolve_job_prefix(*jobs, prefix);
  if (!job.is_ok()) return job.status();
  return *job;
}

namespace {

using std::chrono::milliseconds;

// "2026-12-01 05:20:17 UTC"
std::string utc_time(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// The job's state as its endpoint reports it, or "UNREACHABLE".
std::string state_of(const rest::JobRegistration& r, milliseconds timeout) {
  auto res = rest::http_request("GET", r.address, r.port, "/jobs/" + r.job_id.to_hex(), "", timeout);
  if (!res.is_ok() || res->status != 200) return "UNREACHABLE";
  nlohmann::json j = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("state") || !j["state"].is_string()) return "UNREACHABLE";
  return j["state"].get<std::string>();
}

int run_list() {
  auto jobs = running_jobs();
  if (!jobs) return 1;
  if (jobs->empty()) {
    std::fprintf(stderr, "no running jobs\n");
    return 0;
  }
  for (const rest::JobRegistration& r : *jobs) {
    std::printf("%s  %-11s %-16s pid %-7lld http://%s:%d  started %s\n", r.job_id.to_hex().c_str(),
                state_of(r, std::chrono::seconds(2)).c_str(), r.name.c_str(), static_cast<long long>(r.pid),
                r.address.c_str(), r.port, utc_time(r.start_time_ms).c_str());
  }
  return 0;
}

struct CancelFlags {
  std::string job;
  double timeout_s = 120;
  bool no_wait = false;
};

int run_cancel(const CancelFlags& f) {
  auto job = find_running_job(f.job);
  if (!job.is_ok()) {
    std::fprintf(stderr, "error: %s\n", job.status().message().c_str());
    return 1;
  }
  const std::string id = job->job_id.to_hex();
  const std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(f.timeout_s));
  auto res = rest::http_request("PATCH", job->address, job->port, "/jobs/" + id + "?mode=cancel", "",
                                request_timeout(deadline));
  if (!res.is_ok()) {
    std::fprintf(stderr, "error: cannot cancel job %s: %s\n", id.c_str(), res.status().message().c_str());
    return 1;
  }
  if (res->status != 202) {
    std::fprintf(stderr, "error: cannot cancel job %s (HTTP %d): %s\n", id.c_str(), res->status,
                 rest::error_message(*res).c_str());
    return 1;
  }
  if (f.no_wait) {
    std::printf("Cancellation of job %s (%s) requested.\n", id.c_str(), job->name.c_str());
    return 0;
  }
  // The job's process unregisters once the job reached CANCELED (or exits): wait for that.
  while (still_registered(*job)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::fprintf(stderr, "error: job %s was asked to cancel but still runs after %.0f s (state %s)\n", id.c_str(),
                   f.timeout_s, state_of(*job, milliseconds(200)).c_str());  // a short look: the time is up
      return 1;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  std::printf("Cancelled job %s (%s).\n", id.c_str(), job->name.c_str());
  return 0;
}

}  // namespace

void add_jobs_commands(CLI::App& app, int* exit_code) {
  CLI::App* list = app.add_subcommand(
      "list", "Print the running jobs of this user, one per line: job id, state, name, pid, REST endpoint, start time");
  list->footer("Jobs register in $XDG_RUNTIME_DIR/sluice (else /tmp/sluice-<uid>); entries of processes that are "
               "gone are removed.");
  list->callback([exit_code] { *exit_code = run_list(); });

  auto flags = std::make_shared<CancelFlags>();
  CLI::App* cancel = app.add_subcommand("cancel", "Cancel a running job (REST PATCH /jobs/:jobid?mode=cancel)");
  cancel->add_option("JOB", flags->job, "The job id, or any prefix of it that names one running job")->required();
  cancel->add_option("--timeout", flags->timeout_s, "Seconds to wait for the job to end")
      ->capture_default_str()
      ->check(positive_seconds());
  cancel->add_flag("--no-wait", flags->no_wait, "Return once the job accepted the request, without waiting");
  cancel->callback([flags, exit_code] { *exit_code = run_cancel(*flags); });
}

}  // namespace sluice::cli
