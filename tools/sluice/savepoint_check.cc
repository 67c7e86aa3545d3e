#include "savepoint_check.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../../examples/nexmark/queries.h"
#include "../../examples/per_auction/per_auction_job.h"
#include "checkpoint/restore_path.h"
#include "fs/file_systems_from_config.h"
#include "cli_config.h"
#include "sluice/config/options.h"

namespace sluice::cli {
namespace {

struct CheckFlags {
  std::string path;
  std::string job;
  int32_t parallelism = 2;
  bool allow_non_restored_state = false;
  bool rehash_key_groups = false;
  std::string config_file;
  std::vector<std::string> dynamic;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 2;
}

int check_savepoint(const CheckFlags& f) {
  auto loaded = load_cli_config(f.config_file, f.dynamic);
  if (!loaded.is_ok()) return fail(loaded.status().to_string());
  Configuration config = std::move(loaded).value();
  for (Status s : {config.set_string(options::kStateRecoveryPath.key, f.path),
                   config.set_string(options::kCheckRestoreOnly.key, "true"),
                   config.set_string(options::kIgnoreUnclaimedState.key, f.allow_non_restored_state ? "true" : "false"),
                   config.set_string(options::kRehashKeyGroups.key, f.rehash_key_groups ? "true" : "false")}) {
    if (!s.is_ok()) return fail(s.to_string());
  }
  // The stream parameters (the demo's events, seed, ...) are the snapshot's: the check is about the job's shape.
  auto rp = checkpoint::resolve_restore_path(f.path, config.get(options::kCheckpointsDirectory),
                                             fs::file_systems_from(config), "PATH");
  if (!rp.is_ok()) {
    std::printf("problem: %s\nwould NOT restore: 1 problem\n", rp.status().to_string().c_str());
    return 1;
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(f.parallelism);
  for (const auto& [k, v] : rp->metadata.properties) env.set_job_property(k, v);
  std::string job_name;
  if (f.job == "demo") {
    per_auction::JobOptions options;
    options.output_dir = "out/demo";  // not opened: the job does not run
    per_auction::build(env, options);
    job_name = "sluice-demo";
  } else if (f.job.rfind("nexmark-", 0) == 0) {
    namespace nq = nexmark::queries;
    const nq::Query* query = nq::find_query(f.job.substr(8));
    if (query == nullptr) return fail("--job: unknown query '" + f.job.substr(8) + "'; expected one of " + nq::query_names());
    nexmark::NexmarkSourceOptions source;
    (void)query->add(nq::nexmark_events(env, source), {nq::OutputMode::kDiscard, ""});
    job_name = f.job;
  } else {
    return fail("--job: expected demo or nexmark-qN, got '" + f.job + "'");
  }
  std::printf("checking whether %s at parallelism %d would restore %s\n", f.job.c_str(), f.parallelism, f.path.c_str());
  std::fflush(stdout);
  auto client = env.execute_async(job_name);  // check-only: prints the report and exits
  return fail(client.is_ok() ? "the job was started instead of checked" : client.status().to_string());
}

}  // namespace

void add_savepoint_check_command(CLI::App& savepoint, int* exit_code) {
  auto f = std::make_shared<CheckFlags>();
  CLI::App* check = savepoint.add_subcommand(
      "check", "Would a built-in job restore this savepoint (or checkpoint)? Reports what it restores, what starts "
               "empty, what would be dropped or re-hashed; exit 0 if it would restore, 1 if not");
  check->add_option("PATH", f->path, "The savepoint folder, a chk-<n> folder, or its _metadata")->required();
  check->add_option("--job", f->job, "demo, or nexmark-qN (a query of `sluice nexmark --list`)")->required();
  check->add_option("--parallelism,-p", f->parallelism, "Parallelism the job would run at")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  check->add_flag("--allow-non-restored-state", f->allow_non_restored_state,
                  "Drop (and report) state of operators the job does not have instead of failing");
  check->add_flag("--rehash-key-groups", f->rehash_key_groups,
                  "Re-hash keyed state taken with another max parallelism (-D pipeline.max-parallelism=N)");
  check->add_option("--config", f->config_file, "YAML configuration file (Flink keys)");
  check->add_option("-D", f->dynamic, "Configuration override key=value (repeatable)");
  check->callback([f, exit_code] { *exit_code = check_savepoint(*f); });
}

}  // namespace sluice::cli
