#include "checkpoint_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "checkpoint/checkpoint_verify.h"

namespace sluice::cli {

void add_checkpoint_command(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("checkpoint", "Work with retained checkpoints");
  cmd->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  CLI::App* verify = cmd->add_subcommand("verify", "Check a checkpoint or every checkpoint under a directory");
  verify->add_option("PATH", *path, "chk-<n> folder, _metadata file, job folder or checkpoint directory")->required();
  verify->callback([path, exit_code] {
    auto report = checkpoint::verify_checkpoint(*path);
    if (!report.is_ok()) {
      std::fprintf(stderr, "error: %s\n", report.status().to_string().c_str());
      *exit_code = 2;
      return;
    }
    std::printf("%s", report->to_string().c_str());
    *exit_code = report->ok() ? 0 : 1;
  });
}

}  // namespace sluice::cli
