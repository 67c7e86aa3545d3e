// The command line of a program built on StreamExecutionEnvironment: Sluice's common flags, and what is left for
// the program. StreamExecutionEnvironment::from_args is the short form (it drops what is left and answers --help
// itself); a program with flags of its own parses with this:
//
//   auto args = sluice::parse_program_args(argc, argv);
//   if (!args.is_ok()) { std::fprintf(stderr, "error: %s\n", args.status().to_string().c_str()); return 2; }
//   if (args->help_requested) { std::printf("%s\n  --input FILE  ...\n", sluice::program_args_help().c_str()); return 0; }
//   for (const std::string& a : args->remaining) { ... }   // the program's own flags, in their order
//   args->env.from_source(...) ...; args->env.execute("my-job");
//
// The flags (docs/configuration.md and docs/savepoints.md; the same as `sluice demo` takes):
//   --config, -c FILE                  YAML with Flink keys
//   -D key=value, -Dkey=value          a key over the file's (repeatable; wins over --config, as in Flink)
//   --restore PATH|latest              execution.state-recovery.path (Flink's --fromSavepoint)
//   --claim-mode CLAIM|NO_CLAIM        execution.state-recovery.claim-mode
//   --allow-non-restored-state         execution.state-recovery.ignore-unclaimed-state
//   --rehash-key-groups                execution.state-recovery.rehash-key-groups
//   --summary-json FILE                execution.job-summary.path: the job's JSON summary when it ends
//   --role jobmanager|taskmanager      execution.process-role: run as that process of a cluster (docs/cluster.md)
//   --check-restore PATH               only check that the job would restore PATH (docs/savepoints.md)
//   --help, -h                         help_requested
// Anything else - positional arguments, unknown flags and their values - goes to `remaining` in its order. Every
// flag takes `--flag value` and `--flag=value`.
// Errors: kInvalidArgument naming the flag (a missing or invalid value, a flag given twice), kNotFound / kIoError
// naming the --config file.
// Thread-safety: none needed; a pure function of its arguments (and the --config file).
#pragma once

#include <string>
#include <vector>

#include "sluice/api/environment.h"
#include "sluice/core/status.h"

namespace sluice {

struct ProgramArgs {
  StreamExecutionEnvironment env;      // configured from --config, -D and the flags above
  std::vector<std::string> remaining;  // the arguments Sluice did not consume, in order; argv[0] is not among them
  bool help_requested = false;         // --help or -h: print program_args_help() and the program's own flags
};

[[nodiscard]] Result<ProgramArgs> parse_program_args(int argc, const char* const* argv);

// "Sluice options", then "Options:" and one line per flag above with its description (CLI11's layout). It has no
// usage line: the program prints its own, naming itself and its flags, before this text.
std::string program_args_help();

}  // namespace sluice
