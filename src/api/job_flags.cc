#include "api/job_flags.h"

#include <utility>

#include "sluice/config/logging_options.h"
#include "sluice/config/options.h"

namespace sluice::api {

void add_job_flags(CLI::App* app, JobFlags* flags, const JobFlagsSpec& spec) {
  app->add_option("--config,-c", flags->config_file, "YAML configuration file (Flink keys; docs/configuration.md)");
  // One value per -D: a program's positional argument after `-D key=value` stays the program's.
  app->add_option("-D", flags->dynamic, "Configuration override key=value (repeatable; wins over --config)")
      ->allow_extra_args(false);
  app->add_option("--summary-json", flags->summary_json,
                  "Write the run summary as JSON to this file when the job ends - execution.job-summary.path");
  if (!spec.restore_flags) return;
  app->add_option_function<std::string>(
      "--restore", [flags](const std::string& path) { flags->restore = path; },
      spec.restore_help.empty()
          ? "Resume from a savepoint folder, a retained checkpoint (a chk-<n> folder), its _metadata, or 'latest' (the "
            "highest checkpoint id under execution.checkpointing.dir) - execution.state-recovery.path"
          : spec.restore_help);
  app->add_option("--claim-mode", flags->claim_mode,
                  "With --restore: NO_CLAIM (default; the restored checkpoint stays yours, the first checkpoint is "
                  "full) or CLAIM (the job owns it and deletes it once subsumed) - execution.state-recovery.claim-mode")
      ->transform(CLI::IsMember({"CLAIM", "NO_CLAIM"}, CLI::ignore_case));  // any case; the error lists both
  app->add_flag("--allow-non-restored-state", flags->allow_non_restored_state,
                "With --restore: drop (and report) state of operators this job does not have instead of failing - "
                "execution.state-recovery.ignore-unclaimed-state");
  app->add_flag("--rehash-key-groups", flags->rehash_key_groups,
                "With --restore of a savepoint taken with another max parallelism than this run's "
                "(-D pipeline.max-parallelism=N): hash every key again into the new key groups instead of failing - "
                "execution.state-recovery.rehash-key-groups");
}

Result<Configuration> job_configuration(const JobFlags& flags) {
  Configuration config;
  if (!flags.config_file.empty()) {
    SLUICE_ASSIGN_OR_RETURN(config, Configuration::from_yaml_file(flags.config_file));
  }
  for (const std::string& kv : flags.dynamic) {
    if (Status s = config.apply_dynamic_property(kv); !s.is_ok()) {
      return s.with_context("-D " + redact_sensitive_values(kv));
    }
  }
  const auto set = [&config](const char* flag, const std::string& key, const std::string& value) -> Status {
    Status s = config.set_string(key, value);
    return s.with_context(flag);
  };
  if (flags.restore) SLUICE_RETURN_IF_ERROR(set("--restore", options::kStateRecoveryPath.key, *flags.restore));
  if (!flags.claim_mode.empty()) {
    SLUICE_RETURN_IF_ERROR(set("--claim-mode", options::kStateRecoveryClaimMode.key, flags.claim_mode));
  }
  if (flags.allow_non_restored_state) {
    SLUICE_RETURN_IF_ERROR(set("--allow-non-restored-state", options::kIgnoreUnclaimedState.key, "true"));
  }
  if (flags.rehash_key_groups) {
    SLUICE_RETURN_IF_ERROR(set("--rehash-key-groups", options::kRehashKeyGroups.key, "true"));
  }
  if (!flags.summary_json.empty()) {
    SLUICE_RETURN_IF_ERROR(set("--summary-json", options::kJobSummaryPath.key, flags.summary_json));
  }
  return config;
}

}  // namespace sluice::api
