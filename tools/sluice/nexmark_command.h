// `sluice nexmark --query qN`: one Nexmark query (examples/nexmark, the registry in queries.h) on the Nexmark
// source, with the demo's progress line and JSON summary, and --verify against the reference checker
// (docs/nexmark.md). `sluice nexmark --list` prints the queries.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

// Registers the `nexmark` subcommand; its callback runs it and stores the exit code.
void add_nexmark_command(CLI::App& app, int* exit_code);

}  // namespace sluice::cli
