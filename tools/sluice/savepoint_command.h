// `sluice savepoint JOB [DIR]`, `sluice savepoint inspect PATH`, `sluice savepoint dispose PATH` and
// `sluice stop JOB [--savepoint-dir DIR] [--drain]` (DESIGN.md section 6; docs/savepoints.md). JOB is a unique
// prefix of a running job's id (as for `sluice cancel`); the verbs call its REST endpoint and poll the request
// until it completes, then print the savepoint's folder.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

void add_savepoint_commands(CLI::App& app, int* exit_code);

}  // namespace sluice::cli
