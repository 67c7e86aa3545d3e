// The configuration of a CLI verb: --config FILE (YAML, Flink keys) overlaid with -D key=value (repeatable; -D
// wins). Errors name the file or the bad -D argument.
#pragma once

#include <string>
#include <vector>

#include "sluice/config/configuration.h"

namespace sluice::cli {

inline Result<Configuration> load_cli_config(const std::string& config_file, const std::vector<std::string>& dynamic) {
  Configuration config;
  if (!config_file.empty()) {
    SLUICE_ASSIGN_OR_RETURN(config, Configuration::from_yaml_file(config_file));
  }
  for (const auto& kv : dynamic) {
    if (Status s = config.apply_dynamic_property(kv); !s.is_ok()) {
      return Status::invalid_argument("-D " + kv + ": " + s.to_string());
    }
  }
  return config;
}

}  // namespace sluice::cli
