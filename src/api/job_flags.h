// The command-line flags every job takes - a user's program through StreamExecutionEnvironment::from_args and
// parse_program_args (sluice/api/program_args.h), and `sluice demo` / `sluice nexmark` - defined once with CLI11,
// so their names, values and help read alike everywhere. Each restore flag is a shorthand for a Flink key
// (docs/savepoints.md): --restore is execution.state-recovery.path (Flink's `--fromSavepoint`), --claim-mode
// execution.state-recovery.claim-mode, --allow-non-restored-state execution.state-recovery.ignore-unclaimed-state.
// Internal to the library (not installed for programs to include).
// Thread-safety: none; parse on one thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "sluice/config/configuration.h"
#include "sluice/core/status.h"

namespace sluice::api {

struct JobFlags {
  std::string config_file;             // --config, -c FILE: YAML with Flink keys
  std::vector<std::string> dynamic;    // -D key=value (repeatable; wins over --config, as in Flink)
  std::optional<std::string> restore;  // --restore PATH|latest; given but empty is an error at submission
  std::string claim_mode;              // --claim-mode CLAIM|NO_CLAIM (any case); empty: not given
  bool allow_non_restored_state = false;
  bool rehash_key_groups = false;
  std::string summary_json;            // --summary-json FILE; empty: no summary file
};

// Which flags a job takes, and the help text of --restore for a job whose restores are checked against more than
// the program (the demo names its generator flags; empty: the general text).
struct JobFlagsSpec {
  bool restore_flags = true;  // --restore, --claim-mode, --allow-non-restored-state, --rehash-key-groups
  std::string restore_help;
};

// Adds --config/-c, -D and --summary-json, and the restore flags, to `app`, storing into `*flags` (which must
// outlive the parse).
void add_job_flags(CLI::App* app, JobFlags* flags, const JobFlagsSpec& spec = {});

// The job's configuration: the --config file overlaid with -D, then the keys the other flags stand for
// (--summary-json is execution.job-summary.path). Errors
// (kInvalidArgument, kNotFound, kIoError) name the flag or the file; a -D value that holds a secret is redacted.
[[nodiscard]] Result<Configuration> job_configuration(const JobFlags& flags);

// program_args_help() with the program's name in its usage line ("Usage: my_job [OPTIONS]"): from_args prints it
// for a program without flags of its own. `argv0` is the program's argv[0]; its folder is dropped.
std::string program_args_help_for(const char* argv0);

// What to say after "unknown argument 'ARG'": ": did you mean '--restore'?" for a Sluice flag at most two edits
// away, ": the parallelism is -D parallelism.default=N" for -p / --parallelism (the built-in jobs' flag), else "".
std::string unknown_argument_hint(std::string_view arg);

}  // namespace sluice::api
