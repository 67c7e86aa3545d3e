// The configuration of a CLI verb: --config FILE (YAML, Flink keys) overlaid with -D key=value (repeatable; -D
// wins). Errors name the file or the bad -D argument.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "api/job_flags.h"
#include "fs/file_systems_from_config.h"
#include "sluice/config/configuration.h"

namespace sluice::cli {

inline Result<Configuration> load_cli_config(const std::string& config_file, const std::vector<std::string>& dynamic) {
  api::JobFlags flags;
  flags.config_file = config_file;
  flags.dynamic = dynamic;
  return api::job_configuration(flags);
}

// --config and -D of a verb that only reads or deletes stored checkpoints and savepoints: they carry the storage
// settings (s3.endpoint, s3.access-key, ...) its paths need.
struct StorageFlags {
  std::string config_file;
  std::vector<std::string> dynamic;
};

inline void add_storage_flags(CLI::App* cmd, const std::shared_ptr<StorageFlags>& flags) {
  cmd->add_option("--config", flags->config_file, "YAML configuration file (Flink keys; s3.* for s3:// paths)");
  cmd->add_option("-D", flags->dynamic, "Configuration override key=value (repeatable)");
}

// The filesystems the flags configure (the local disk, and s3:// from the s3.* keys).
inline Result<fs::FileSystemRegistry> file_systems_of(const StorageFlags& flags) {
  SLUICE_ASSIGN_OR_RETURN(Configuration config, load_cli_config(flags.config_file, flags.dynamic));
  return fs::file_systems_from(config);
}

}  // namespace sluice::cli
