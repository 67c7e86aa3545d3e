// `sluice savepoint check PATH --job demo|nexmark-qN`: would a built-in job restore PATH? Builds the job's graph
// at the given parallelism and runs the restore check (cluster/restore_check.h) through the environment's
// --check-restore path (execution.state-recovery.check-only), which prints the report and exits 0 (it would
// restore) or 1 (it would not). Bad flags: exit 2.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

// Adds `check` under the `savepoint` command.
void add_savepoint_check_command(CLI::App& savepoint, int* exit_code);

}  // namespace sluice::cli
