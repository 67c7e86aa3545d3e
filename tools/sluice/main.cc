// `sluice`: the command line (DESIGN.md section 6). Verbs arrive with the features behind them.
#include <CLI/CLI.hpp>

#include "checkpoint_command.h"
#include "demo.h"

int main(int argc, char** argv) {
  CLI::App app{"Sluice: stateful stream processing with Flink's guarantees, in one binary"};
  app.require_subcommand(1);
  int exit_code = 0;
  sluice::cli::add_demo_command(app, &exit_code);
  sluice::cli::add_checkpoint_command(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
