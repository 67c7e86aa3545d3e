// `sluice list` and `sluice cancel JOB`: the running jobs of this user, found through the job registry
// (src/rest/job_registry.h), and cancellation through their REST endpoint (docs/rest-api.md).
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

void add_jobs_commands(CLI::App& app, int* exit_code);

}  // namespace sluice::cli
