#include "nexmark_command.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/job_endpoint.h"
#include "api/job_flags.h"
#include "api/job_summary.h"
#include "api/job_signals.h"
#include "api/progress_line.h"
#include "core/log_context.h"
#include "cluster/mini_cluster.h"
#include "job_report.h"
#include "task_manager_run.h"
#include "queries.h"
#include "sluice/config/derived_options.h"
#include "sluice/config/cluster_options.h"
#include "sluice/config/options.h"

namespace sluice::cli {
namespace {

namespace nq = nexmark::queries;

struct NexmarkFlags {
  bool list = false;
  std::string query;
  // 100 K events/s of event time (the suite's default rate): 4 M events span 40 s, so every tumbling 10 s query
  // fires 4 windows and q5 about 20 sliding ones.
  int64_t events = 4'000'000;
  double rate = 100'000;
  int32_t parallelism = 0;  // 0: parallelism.default from --config / -D, else 2
  int32_t splits = 8;
  uint64_t seed = 1;
  bool verify = false;
  std::string output;  // kFiles: the query's rows as exactly-once part files here (needed by --verify in a cluster)
  api::JobFlags job;  // --config, -D, --summary-json (api/job_flags.h)
  std::string checkpoint_interval = "0";  // off; --inject-failures without it: 200ms
  std::string checkpoint_dir = "out/nexmark-checkpoints";
  std::string state_backend;  // hashmap | rocksdb (state.backend.type)
  int32_t inject_failures = 0;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 2;
}

int list_queries() {
  for (const nq::Query& q : nq::all_queries()) std::printf("%-4s %s\n", q.name.c_str(), q.description.c_str());
  return 0;
}

int run_nexmark(const NexmarkFlags& f) {
  if (f.list) return list_queries();
  if (f.query.empty()) return fail("--query: give a query name (" + nq::query_names() + "), or --list");
  const nq::Query* query = nq::find_query(f.query);
  if (query == nullptr) {
    return fail("--query: unknown query '" + f.query + "'; expected one of " + nq::query_names());
  }

  auto loaded = api::job_configuration(f.job);
  if (!loaded.is_ok()) return fail(loaded.status().to_string());
  Configuration config = std::move(loaded).value();
  if (!f.state_backend.empty()) {
    if (Status s = config.set_string("state.backend.type", f.state_backend); !s.is_ok()) {
      return fail("--state-backend: " + s.to_string());
    }
  }
  // Checkpointing off unless asked for; failure injection needs it (default 200 ms then).
  std::string interval = f.checkpoint_interval == "0" ? "0ms" : f.checkpoint_interval;
  if (f.inject_failures > 0 && interval == "0ms" && !config.contains("execution.checkpointing.interval")) {
    interval = "200ms";
  }
  auto set_default = [&](const char* key, const std::string& value) -> Status {
    if (config.contains(key)) return Status::ok();
    return config.set_string(key, value);
  };
  for (auto st : {set_default("execution.checkpointing.interval", interval),
                  set_default("execution.checkpointing.dir", f.checkpoint_dir),
                  set_default("restart-strategy.type", "fixed-delay"),
                  set_default("restart-strategy.fixed-delay.attempts", std::to_string(std::max(1, f.inject_failures * 2 + 3))),
                  set_default("restart-strategy.fixed-delay.delay", "100ms")}) {
    if (!st.is_ok()) return fail(st.to_string());
  }
  if (f.inject_failures > 0 && !checkpointing_enabled(config)) {
    return fail("--inject-failures: needs checkpointing (--checkpoint-interval > 0)");
  }
  // The checkers expect every row exactly once; at-least-once state counts replayed records twice after a restore.
  if (f.verify && f.inject_failures > 0 && config.get(options::kCheckpointingMode) == CheckpointingMode::kAtLeastOnce) {
    return fail("--verify checks exactly-once results, but execution.checkpointing.mode is AT_LEAST_ONCE: after a "
                "failure replayed records are counted twice; use EXACTLY_ONCE, or drop --verify or --inject-failures");
  }

  // Cluster mode (docs/cluster.md): every process builds the same job; the rows reach the JobManager's --verify only
  // through files every process writes into.
  const ProcessRole role = config.get(options::kProcessRole);
  if (role != ProcessRole::kMiniCluster && f.inject_failures > 0) {
    return fail("--inject-failures runs in the MiniCluster only; in cluster mode, kill or stop a TaskManager process");
  }
  if (role != ProcessRole::kMiniCluster && f.verify && f.output.empty()) {
    return fail("--verify in cluster mode needs --output DIR (a folder every process reaches): the rows are "
                "committed by the TaskManagers and read back from there");
  }
  if (!f.output.empty() && role != ProcessRole::kTaskManager) {
    std::error_code ec;
    if (std::filesystem::exists(f.output, ec) && !std::filesystem::is_empty(f.output, ec)) {
      return fail("--output '" + f.output + "' is not empty: every part file in it counts as this run's rows; give "
                  "a new folder");
    }
  }
  const nq::QueryOutput output{!f.output.empty() ? nq::OutputMode::kFiles
                               : f.verify        ? nq::OutputMode::kCollect
                                                 : nq::OutputMode::kDiscard,
                               f.output};

  Result<std::optional<api::JobSummaryFile>> opened_summary = api::open_job_summary(config);
  if (!opened_summary.is_ok()) return fail(opened_summary.status().to_string());
  std::optional<api::JobSummaryFile> summary_file = std::move(opened_summary).value();

  StreamExecutionEnvironment env(config);
  const int32_t parallelism =
      f.parallelism > 0 ? f.parallelism : (config.contains("parallelism.default") ? env.parallelism() : 2);
  env.set_parallelism(parallelism);
  nexmark::NexmarkSourceOptions source;
  source.generator.seed = f.seed;
  source.generator.max_events = f.events;
  source.generator.declared_rate_per_s = f.rate;
  source.num_splits = f.splits;
  // Seeded failures hold the stream at their points (FailureInjector): closed until the injector opens it.
  if (f.inject_failures > 0) {
    source.gate = std::make_shared<nexmark::NexmarkEmitGate>();
    source.gate->limit.store(0);
  }
  if (Status s = source.generator.validate(); !s.is_ok()) return fail(s.to_string());
  std::unique_ptr<nq::QueryRun> run = query->add(nq::nexmark_events(env, source), output);

  const std::string job_name = "nexmark-" + query->name;
  std::printf("sluice nexmark %s (%s): %lld events at %.0f events/s of event time (seed %llu, %d splits), "
              "parallelism %d\n",
              query->name.c_str(), query->description.c_str(), static_cast<long long>(f.events), f.rate,
              static_cast<unsigned long long>(f.seed), f.splits, parallelism);
  if (role == ProcessRole::kTaskManager) return run_task_manager(env, job_name, "");
  // The REST endpoint binds before the job is submitted, so a bad rest.* value fails before anything runs.
  auto endpoint = api::JobEndpoint::open(config);
  if (!endpoint.is_ok()) return fail("REST endpoint: " + endpoint.status().to_string());
  (*endpoint)->describe(env, job_name);
  api::JobSignalScope signals;  // SIGINT / SIGTERM from here on cancel the job cleanly (api/job_signals.h)
  auto client = env.execute_async(job_name);
  if (!client.is_ok()) {
    signals.set_cancel({});
    if (int sig = signals.received()) return 128 + sig;
    return fail(client.status().to_string());
  }
  signals.set_cancel([c = client->get()] { c->cancel(); });
  (*endpoint)->serve(**client);
  log::ScopedRunningJob running((*client)->job_id().to_hex());  // its id on every thread's log lines
  std::printf("job %s: REST endpoint %s\n", (*client)->job_id().to_hex().c_str(), (*endpoint)->url().c_str());
  std::fflush(stdout);
  auto* cp_client = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  std::optional<FailureInjector> injector;
  if (f.inject_failures > 0 && cp_client != nullptr) {
    injector.emplace(**client, *cp_client,
                     FailureInjector::Options{f.inject_failures, f.seed, f.events, parallelism, 0, nq::kSourceName,
                                              source.gate, 0});
  } else if (source.gate) {
    source.gate->open();  // BATCH re-runs stages instead (arm_batch_failures)
  }
  auto* batch_client = dynamic_cast<batch::BatchJobClient*>(client->get());
  if (f.inject_failures > 0 && batch_client != nullptr) {
    arm_batch_failures(*batch_client, f.inject_failures, f.seed, parallelism);
  }
  std::optional<api::ProgressLine> progress;  // -D execution.progress-line=OFF, or AUTO into a file or pipe: none
  if (api::progress_line_wanted(config, stdout)) progress.emplace(**client, std::vector<std::string>{nq::kSourceName}, stdout, "events");
  JobExecutionResult result = (*client)->wait();
  (*endpoint)->close();  // unregistered and no longer served: `sluice cancel` returns now
  signals.set_cancel({});  // the job ended: a signal now exits at once
  if (progress) progress->stop();
  if (injector) injector->stop();
  const int64_t emitted = source_events((*client)->metrics(), nq::kSourceName);
  // Stopped with a savepoint (`sluice stop`): FINISHED, but only the part of the stream before the savepoint.
  const std::optional<std::string> stopped = (*endpoint)->stopped_with_savepoint();
  const bool finished = result.status == JobStatus::kFinished && !stopped;
  if (stopped) std::printf("stopped with a savepoint: %s\n", stopped->c_str());

  nlohmann::json summary;
  add_run_summary(summary, RunFigures{&result, client->get(), cp_client, finished ? f.events : emitted,
                                      f.events, emitted, parallelism,
                                      injector ? injector->at_events() : std::vector<int64_t>{}});
  summary["seed"] = f.seed;
  summary["query"] = query->name;
  summary["declared_rate_per_s"] = f.rate;
  summary["output_rows"] = run->output_rows();
  summary["checkpointing_mode"] = batch_client != nullptr ? std::string("none") : checkpointing_mode_name(config);
  print_failures(summary, f.inject_failures);

  int exit_code = result.status == JobStatus::kFinished ? 0 : 1;
  if (result.status != JobStatus::kFinished) std::fprintf(stderr, "job %s%s%s\n", job_status_name(result.status), result.error.is_ok() ? "" : ": ",
                 result.error.is_ok() ? "" : result.error.to_string().c_str());  // a cancel has no error
  summary["verification"] = !f.verify ? std::string("not requested")
                            : finished ? std::string("ran")
                            : stopped  ? std::string("not run: the job was stopped with a savepoint")
                                       : std::string("not run: the job ") + job_status_name(result.status);
  summary["verified"] = false;
  if (f.verify && finished) {
    summary["verified_guarantee"] = "exactly-once";  // only when the check runs (see "verification")
    Status verified = run->verify(source.generator, f.events);
    summary["verified"] = verified.is_ok();
    if (!verified.is_ok()) {
      summary["first_difference"] = verified.message();
      std::fprintf(stderr, "verify: %s\n", verified.message().c_str());
      exit_code = 1;
    }
  }
  print_checkpoints(summary, config, cp_client != nullptr);
  std::printf("output: %lld rows\n", static_cast<long long>(run->output_rows()));
  const char* verified = !f.verify ? ""
                         : stopped ? ", verification not run (stopped with a savepoint)"
                         : !finished ? ", verification not run (the job did not finish)"
                         : summary["verified"].get<bool>() ? ", verified: OK" : ", verified: FAILED";
  print_summary_line(summary, "events", verified);
  if ((*endpoint)->cancelled_by_request() && result.status == JobStatus::kCanceled) {
    std::fprintf(stderr, "sluice nexmark: cancelled through the REST endpoint (PATCH /jobs/%s?mode=cancel)\n",
                 result.job_id.to_hex().c_str());
  }
  if (int sig = signals.received()) {
    std::fprintf(stderr, "sluice nexmark: cancelled by %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    exit_code = 128 + sig;
  }
  if (summary_file) {
    if (Status st = summary_file->write(summary); !st.is_ok()) return fail(st.to_string());
  }
  return exit_code;
}

}  // namespace

void add_nexmark_command(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<NexmarkFlags>();
  CLI::App* cmd = app.add_subcommand("nexmark", "Run a Nexmark query on the Nexmark source (--list shows them)");
  cmd->add_flag("--list", flags->list, "Print the queries and exit");
  cmd->add_option("--query,-q", flags->query, "The query to run (q0, q1, ...; see --list)");
  cmd->add_option("--events", flags->events, "Number of Nexmark events to generate")
      ->capture_default_str()->check(whole_number_at_least_one());
  cmd->add_option("--rate", flags->rate,
                  "Declared event rate (events/s of event time; at 100 K/s a 10 s window holds 1 M events)")
      ->capture_default_str()->check(declared_rate_check());
  cmd->add_option("--parallelism,-p", flags->parallelism,
                  "Parallelism of every operator (default: parallelism.default if configured, else 2)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--splits", flags->splits, "Source splits (fixed per job; the stream is the same at any parallelism)")
      ->capture_default_str()->check(CLI::Range(1, 65536));
  cmd->add_option("--seed", flags->seed, "Generator seed (also seeds --inject-failures)")->capture_default_str();
  cmd->add_flag("--verify", flags->verify,
                "Collect the output exactly once and compare it with the reference checker (docs/nexmark.md); exit 1 "
                "and print the first differing row on a difference");
  cmd->add_option("--output", flags->output,
                  "Write the query's rows exactly once as part files into this new folder (needed by --verify in "
                  "cluster mode, where the TaskManagers write them); --verify then reads them back");
  api::add_job_flags(cmd, &flags->job, {.restore_flags = false, .restore_help = ""});
  cmd->add_option("--checkpoint-interval", flags->checkpoint_interval,
                  "Checkpoint interval (Flink duration syntax; 0: off, or 200ms with --inject-failures)")
      ->capture_default_str();
  cmd->add_option("--checkpoint-dir", flags->checkpoint_dir, "Checkpoint directory")->capture_default_str();
  cmd->add_option("--state-backend", flags->state_backend, "State backend: hashmap (default) or rocksdb")
      ->check(CLI::IsMember({"hashmap", "rocksdb"}));
  cmd->add_option("--inject-failures", flags->inject_failures,
                  "Inject K failures of seeded classes at seeded points of the stream (as `sluice demo`); the job "
                  "recovers from its checkpoints, and --verify checks the output is still exactly the reference")
      ->check(CLI::Range(0, 1000));
  cmd->callback([flags, exit_code] { *exit_code = run_nexmark(*flags); });
}

}  // namespace sluice::cli
