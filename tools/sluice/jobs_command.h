// `sluice list` and `sluice cancel JOB`: the running jobs of this user, found through the job registry
// (src/rest/job_registry.h), and cancellation through their REST endpoint (docs/rest-api.md).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "rest/job_registry.h"
#include "sluice/core/status.h"

namespace sluice::cli {

// The live entries of the job registry (stale ones removed); warnings for unreadable files on stderr. nullopt
// after printing an error.
std::optional<std::vector<rest::JobRegistration>> running_jobs();
// Whether the job's process still serves it: registered and alive.
bool still_registered(const rest::JobRegistration& r);
// The one running job whose id starts with `prefix` (rest::resolve_job_prefix's errors).
Result<rest::JobRegistration> find_running_job(const std::string& prefix);

// The timeout of one REST request of a command that ends by `deadline` (its --timeout): what is left of it, at most
// the 5 s a live endpoint needs (a stopped process accepts the connection and never answers), at least 1 ms.
std::chrono::milliseconds request_timeout(std::chrono::steady_clock::time_point deadline);

void add_jobs_commands(CLI::App& app, int* exit_code);

}  // namespace sluice::cli
