#include "checkpoint_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "checkpoint/checkpoint_verify.h"
#include "checkpoint_inspect.h"
#include "cli_config.h"

namespace sluice::cli {

void add_checkpoint_command(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("checkpoint", "Work with retained checkpoints");
  cmd->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  CLI::App* verify = cmd->add_subcommand("verify", "Check a checkpoint or every checkpoint under a directory");
  verify->add_option("PATH", *path, "chk-<n> folder, _metadata file, job folder or checkpoint directory (a path, "
                                     "file:// or s3:// URI)")->required();
  auto verify_flags = std::make_shared<StorageFlags>();
  add_storage_flags(verify, verify_flags);
  verify->callback([path, verify_flags, exit_code] {
    auto file_systems = file_systems_of(*verify_flags);
    if (!file_systems.is_ok()) {
      std::fprintf(stderr, "error: %s\n", file_systems.status().to_string().c_str());
      *exit_code = 2;
      return;
    }
    auto report = checkpoint::verify_checkpoint(*path, *file_systems);
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
  auto inspect_flags = std::make_shared<StorageFlags>();
  add_storage_flags(inspect, inspect_flags);
  inspect->callback([inspect_path, as_json, inspect_flags, exit_code] {
    auto file_systems = file_systems_of(*inspect_flags);
    if (!file_systems.is_ok()) {
      std::fprintf(stderr, "error: %s\n", file_systems.status().to_string().c_str());
      *exit_code = 2;
      return;
    }
    auto r = inspect_checkpoints(*inspect_path, *file_systems);
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
