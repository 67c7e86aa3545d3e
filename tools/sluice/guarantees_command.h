// `sluice guarantees`: the expected table of end-to-end guarantees, measured (src/guarantees/, docs/guarantees.md).
// Exit status: 0 when every measured cell equals the expected one, 1 when a cell differs (a line starting MISMATCH
// names it), 2 for bad input.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

void add_guarantees_command(CLI::App& app, int* exit_code);

}  // namespace sluice::cli
