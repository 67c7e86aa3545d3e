#include "checkpoint_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "checkpoint/checkpoint_verify.h"
#include "checkpoint_inspect.h"

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

  auto inspect_path = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  CLI::App* inspect = cmd->add_subcommand("inspect", "Show what retained checkpoints hold and what they cost "
                                                     "(durations, sizes, in-flight data, per subtask)");
  inspect->add_option("PATH", *inspect_path, "chk-<n> folder, job folder or checkpoint directory")->required();
  inspect->add_flag("--json", *as_json, "Print one JSON document instead of a table");
  inspect->callback([inspect_path, as_json, exit_code] {
    auto r = inspect_checkpoints(*inspect_path);
    if (!r.is_ok()) {
      std::fprintf(stderr, "error: %s\n", r.status().to_string().c_str());
      *exit_code = 2;
      return;
    }
    if (*as_json) {
      std::printf("%s\n", r->document.dump(2).c_str());
    } else {
      std::printf("%s", r->table.c_str());
    }
    *exit_code = r->exit_code;
  });
}

}  // namespace sluice::cli
