// `sluice demo`: the main job (examples/per_auction) with progress, summary, and --verify.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

// Registers the `demo` subcommand; the returned callback runs it and returns the exit code.
void add_demo_command(CLI::App& app, int* exit_code);

}  // namespace sluice::cli
