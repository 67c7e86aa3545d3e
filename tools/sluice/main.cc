// `sluice`: the command line (DESIGN.md section 6).
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "checkpoint_command.h"
#include "demo.h"
#include "guarantees_command.h"
#include "jobs_command.h"
#include "logging/logging_config.h"
#include "nexmark_command.h"
#include "savepoint_command.h"
#include "sluice/config/configuration.h"

int main(int argc, char** argv) {
  sluice::logging::log_to_stderr();  // stdout carries the commands' results (sluice list, the demo's report)
  CLI::App app{"Sluice: stateful stream processing with Flink's guarantees, in one binary"};
  app.require_subcommand(1);
  // A usage error repeats the arguments it did not expect; a secret among them (-D s3.secret-key=...) stays out.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return sluice::redact_sensitive_values(CLI::FailureMessage::simple(a, e));
  });
  int exit_code = 0;
  sluice::cli::add_demo_command(app, &exit_code);
  sluice::cli::add_checkpoint_command(app, &exit_code);
  sluice::cli::add_nexmark_command(app, &exit_code);
  sluice::cli::add_jobs_commands(app, &exit_code);
  sluice::cli::add_savepoint_commands(app, &exit_code);
  sluice::cli::add_guarantees_command(app, &exit_code);
  // CLI11 answers an unknown command with "A subcommand is required", which does not name it.
  if (argc > 1 && argv[1][0] != '-') {
    const std::vector<CLI::App*> commands = app.get_subcommands([](CLI::App*) { return true; });
    std::string names;
    bool known = false;
    for (const CLI::App* c : commands) {
      known = known || c->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + c->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "error: unknown command '%s' (the commands: %s; sluice --help)\n",
                   sluice::redact_sensitive_values(argv[1]).c_str(), names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (help on --help); a usage error exits 2 like every other bad input of the tool
    // (CLI11's own codes, e.g. 106 for a missing argument, mean nothing to a user).
    const int cli11_code = app.exit(e);
    return cli11_code == 0 ? 0 : 2;
  }
  return exit_code;
}
