// `sluice checkpoint verify PATH`: checks a retained checkpoint (a chk-<n> folder or its _metadata), a job's
// checkpoint folder, or a whole checkpoint directory: the metadata decodes, and every referenced state file
// exists with the recorded size and checksum. Exit 0 when everything checks out, 1 otherwise (problems are
// listed by file), 2 for a usage error.
// `sluice checkpoint inspect PATH [--json]`: checkpoint_inspect.h.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

void add_checkpoint_command(CLI::App& app, int* exit_code);

}  // namespace sluice::cli
