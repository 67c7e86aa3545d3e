#include "demo.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "../../examples/per_auction/per_auction_job.h"
#include "api/job_endpoint.h"
#include "api/job_signals.h"
#include "api/progress_line.h"
#include "core/log_context.h"
#include "sluice/metrics/metric_names.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/restore_path.h"
#include "fs/file_system.h"
#include "fs/file_systems_from_config.h"
#include "fs/path.h"
#include "cluster/mini_cluster.h"
#include "sluice/config/derived_options.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/config/options.h"
#include "sluice/config/cluster_options.h"
#include "sluice/core/data_view.h"
#include "sluice/state/operator_state_store.h"
#include "coordinator/checkpoint_stats_json.h"
#include "api/job_flags.h"
#include "api/job_summary.h"
#include "demo_output.h"
#include "task_manager_run.h"
#include "job_report.h"
#include "verify.h"

namespace sluice::cli {
namespace {

struct DemoFlags {
  int64_t events = 10'000'000;
  int32_t parallelism = 0;  // 0: parallelism.default from --config / -D, else 2
  int32_t splits = 8;
  double rate = 10'000'000;
  uint64_t seed = 1;
  std::string output = "out/demo";
  bool verify = false;
  api::JobFlags job;  // --config, -D, --summary-json and the restore flags (api/job_flags.h)
  std::string checkpoint_interval = "1s";  // "0" turns checkpointing off
  std::string checkpoint_dir = "out/demo-checkpoints";
  int32_t inject_failures = 0;
  std::string kill_at;  // POINT[@CHECKPOINT]: a TaskManager process kills itself there (cluster failure tests)
  bool checkpoint_interval_given = false;  // --checkpoint-interval was on the command line
};

// Events of the stream before the checkpoint at `location`: the sum of the Nexmark split offsets its source
// readers recorded (the source's SourceReaderState; splits the enumerator had not assigned yet start at 0).
// nullopt if the checkpoint cannot be read.
std::optional<int64_t> stream_events_before(const std::string& location, const Configuration& config) {
  auto fsys_or = sluice::fs::file_systems_from(config).for_path(location);
  if (!fsys_or.is_ok()) return std::nullopt;
  const std::shared_ptr<sluice::fs::FileSystem>& fsys = *fsys_or;
  auto loc = checkpoint::locate_checkpoint(*fsys, location);
  if (!loc.is_ok()) return std::nullopt;
  auto md = checkpoint::read_checkpoint_metadata(*fsys, *loc);
  if (!md.is_ok()) return std::nullopt;
  int64_t total = 0;
  for (const auto& op : md->operators) {
    for (const auto& st : op.subtasks) {
      if (!st.operator_state) continue;
      auto bytes = checkpoint::read_state_handle(*fsys, loc->checkpoint_dir, *st.operator_state);
      if (!bytes.is_ok()) return std::nullopt;
      auto states = decode_operator_state(bytes->data(), bytes->size(), location);
      if (!states.is_ok()) return std::nullopt;
      for (const SerializedOperatorState& state : *states) {
        if (state.name != "SourceReaderState") continue;
        for (const std::string& element : state.elements) {
          DataInputView in(element);
          total += TypeSerializer<nexmark::NexmarkSplit>::deserialize(in).offset;
        }
      }
    }
  }
  return total;
}

// The run's output folder as prepare_demo_output needs it. The job id is fixed here ($internal.pipeline.job-id,
// unless configured), before the job starts, so the folder's record of the demo's runs names it first.
Result<DemoOutputRun> output_run_of(Configuration& config, const std::string& output_dir, OutputStart start) {
  DemoOutputRun run;
  run.output_dir = output_dir;
  run.checkpoint_dir = config.get(options::kCheckpointsDirectory);
  run.start = start;
  run.job_id = config.get(options::kFixedJobId);
  if (JobId id; !run.job_id.empty() && (!JobId::parse(run.job_id, &id) || id.to_hex() != run.job_id)) {
    return Status::invalid_argument(options::kFixedJobId.key + ": '" + run.job_id +
                                    "' is not 32 lowercase hex digits");
  }
  if (run.job_id.empty()) {
    run.job_id = JobId::generate().to_hex();
    SLUICE_RETURN_IF_ERROR(config.set_string(options::kFixedJobId.key, run.job_id));
  }
  if (start == OutputStart::kRestored) {
    // A checkpoint that does not resolve would fail the job's restore: refused here, before the banner and before
    // anything in the output folder is touched, with the same message. Not in BATCH (or AUTOMATIC, BATCH over the
    // demo's bounded source): the job refuses any restore there, saying why.
    auto point = checkpoint::resolve_restore_path(config.get(options::kStateRecoveryPath), run.checkpoint_dir,
                                                  sluice::fs::file_systems_from(config));
    if (!point.is_ok()) {
      if (config.get(options::kRuntimeMode) != RuntimeExecutionMode::kStreaming) return run;
      return point.status();
    }
    run.restored_job_ids.push_back(point->metadata.job_id.to_hex());
    for (const JobId& id : point->metadata.lineage) run.restored_job_ids.push_back(id.to_hex());
  }
  return run;
}

int run_demo(const DemoFlags& f) {
  Result<Configuration> loaded = api::job_configuration(f.job);
  if (!loaded.is_ok()) {
    std::fprintf(stderr, "error: %s\n", loaded.status().to_string().c_str());
    return 2;
  }
  Configuration config = std::move(loaded).value();
  // Checkpointing: on by default in the demo (its state is larger than the JobManager storage's 5 MiB, so
  // into a local directory), unless configured otherwise.
  auto set_default = [&](const char* key, const std::string& value) -> Status {
    if (config.contains(key)) return Status::ok();
    return config.set_string(key, value);
  };
  // The demo's own 1 s default does not apply to a run in BATCH (BATCH takes no checkpoints; the demo's source is
  // bounded, so AUTOMATIC is BATCH too): only an interval the user set is worth the warning that it is ignored.
  const bool batch = config.get(options::kRuntimeMode) != RuntimeExecutionMode::kStreaming;
  const std::string interval =
      f.checkpoint_interval == "0" || (batch && !f.checkpoint_interval_given) ? "0ms" : f.checkpoint_interval;
  for (auto st : {set_default("execution.checkpointing.interval", interval),
                  set_default("execution.checkpointing.dir", f.checkpoint_dir),
                  set_default("restart-strategy.type", "fixed-delay"),
                  set_default("restart-strategy.fixed-delay.attempts", std::to_string(std::max(1, f.inject_failures * 2 + 3))),
                  set_default("restart-strategy.fixed-delay.delay", "100ms")}) {
    if (!st.is_ok()) {
      std::fprintf(stderr, "error: %s\n", st.to_string().c_str());
      return 2;
    }
  }
  // Restoring when the option is set at all (--restore, -D, --config): then the output's part files are the
  // committed output of the earlier run and must stay (demo_output.h). Set but empty is an error, checked before
  // any cleanup.
  const bool restoring = config.contains(options::kStateRecoveryPath.key);
  if (restoring && config.get(options::kStateRecoveryPath).empty()) {
    std::fprintf(stderr, "error: %s\n", checkpoint::resolve_restore_path("", "").status().to_string().c_str());
    return 2;
  }
  // Cluster mode (docs/cluster.md): the JobManager process prepares the output and serves REST; a TaskManager
  // only runs the subtasks it is given. Injected failures arm the JobManager's side, which runs no tasks there.
  const ProcessRole role = config.get(options::kProcessRole);
  if (role != ProcessRole::kMiniCluster && f.inject_failures > 0) {
    std::fprintf(stderr, "error: --inject-failures runs in the MiniCluster only; in cluster mode, kill or stop a "
                         "TaskManager process instead\n");
    return 2;
  }
  if (role != ProcessRole::kTaskManager && !f.kill_at.empty()) {
    std::fprintf(stderr, "error: --kill-at kills a TaskManager process (-D execution.process-role=taskmanager); in the "
                         "MiniCluster use --inject-failures\n");
    return 2;
  }
  if (role != ProcessRole::kTaskManager) {
    const OutputStart start = restoring ? OutputStart::kRestored : OutputStart::kFresh;
    Result<DemoOutputRun> run = output_run_of(config, f.output, start);
    Status s = run.is_ok() ? prepare_demo_output(sluice::fs::file_systems_from(config), *run) : run.status();
    if (!s.is_ok()) {
      std::fprintf(stderr, "error: %s\n", s.to_string().c_str());  // names the folder (output or checkpoint)
      return 2;
    }
  }

  // Open the summary file now, so a bad path fails before the job runs rather than after.
  Result<std::optional<api::JobSummaryFile>> opened_summary = api::open_job_summary(config);
  if (!opened_summary.is_ok()) {
    std::fprintf(stderr, "error: %s\n", opened_summary.status().to_string().c_str());
    return 2;
  }
  std::optional<api::JobSummaryFile> summary_file = std::move(opened_summary).value();

  StreamExecutionEnvironment env(config);
  int32_t parallelism = f.parallelism > 0 ? f.parallelism : (config.contains("parallelism.default") ? env.parallelism() : 2);
  env.set_parallelism(parallelism);
  per_auction::JobOptions options;
  options.source.generator.seed = f.seed;
  options.source.generator.max_events = f.events;
  options.source.generator.declared_rate_per_s = f.rate;
  options.source.num_splits = f.splits;
  options.output_dir = f.output;
  // Seeded failures hold the stream at their points (FailureInjector): closed until the injector opens it.
  if (f.inject_failures > 0) {
    options.source.gate = std::make_shared<nexmark::NexmarkEmitGate>();
    options.source.gate->limit.store(0);
  }
  if (Status s = options.source.generator.validate(); !s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
    return 2;
  }
  per_auction::build(env, options);
  // The parameters that decide the stream (not the parallelism: the stream is the same at any): recorded in
  // every checkpoint; a restore with different ones is refused, naming each.
  char rate_text[32];
  std::snprintf(rate_text, sizeof rate_text, "%.17g", f.rate);
  env.set_job_property("demo.events", std::to_string(f.events));
  env.set_job_property("demo.seed", std::to_string(f.seed));
  env.set_job_property("demo.splits", std::to_string(f.splits));
  env.set_job_property("demo.rate", rate_text);

  std::printf("sluice demo: %lld Nexmark events (seed %llu, %d splits), parallelism %d, output %s\n",
              static_cast<long long>(f.events), static_cast<unsigned long long>(f.seed), f.splits, parallelism,
              f.output.c_str());
  std::fflush(stdout);  // before the job's log lines on stderr, also when both go to one file
  if (role == ProcessRole::kTaskManager) return run_task_manager(env, "demo", f.kill_at);
  // The REST endpoint binds before the job is submitted, so a bad rest.* value fails before anything runs.
  auto endpoint = api::JobEndpoint::open(config);
  if (!endpoint.is_ok()) {
    std::fprintf(stderr, "error: REST endpoint: %s\n", endpoint.status().to_string().c_str());
    return 2;
  }
  (*endpoint)->describe(env, "demo");
  api::JobSignalScope signals;  // SIGINT / SIGTERM from here on cancel the job cleanly (api/job_signals.h)
  auto client = env.execute_async("demo");
  if (!client.is_ok()) {
    signals.set_cancel({});
    std::fprintf(stderr, "error: %s\n", client.status().to_string().c_str());
    if (int sig = signals.received()) return 128 + sig;
    return 2;
  }
  signals.set_cancel([c = client->get()] { c->cancel(); });
  (*endpoint)->serve(**client);
  log::ScopedRunningJob running((*client)->job_id().to_hex());  // its id on every thread's log lines
  std::printf("job %s: REST endpoint %s\n", (*client)->job_id().to_hex().c_str(), (*endpoint)->url().c_str());
  std::fflush(stdout);
  auto* cp_client = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  const std::optional<std::pair<int64_t, std::string>> initial_restore =
      cp_client != nullptr ? cp_client->initial_restore() : std::nullopt;
  if (initial_restore) {
    std::printf("restored checkpoint %lld from %s (--restore %s)\n", static_cast<long long>(initial_restore->first),
                initial_restore->second.c_str(), config.get(options::kStateRecoveryPath).c_str());
    std::fflush(stdout);
  }
  // Seeded failure injection (job_report.h): K failures, each of a seeded class at a seeded point of the stream.
  std::optional<FailureInjector> injector;
  if (f.inject_failures > 0 && cp_client != nullptr) {
    const int64_t start = initial_restore ? stream_events_before(initial_restore->second, config).value_or(0) : 0;
    injector.emplace(**client, *cp_client,
                     FailureInjector::Options{f.inject_failures, f.seed, f.events, parallelism, 2, "bids",
                                              options.source.gate, start});
  } else if (options.source.gate) {
    options.source.gate->open();  // BATCH re-runs stages instead (arm_batch_failures)
  }
  auto* batch_client = dynamic_cast<batch::BatchJobClient*>(client->get());
  if (f.inject_failures > 0 && batch_client != nullptr) {
    arm_batch_failures(*batch_client, f.inject_failures, f.seed, parallelism);
  }
  std::optional<api::ProgressLine> progress;  // -D execution.progress-line=OFF, or AUTO into a file or pipe: none
  if (api::progress_line_wanted(config, stdout)) progress.emplace(**client, std::vector<std::string>{"bids"}, stdout, "events");
  JobExecutionResult result = (*client)->wait();
  (*endpoint)->close();  // unregistered and no longer served: `sluice cancel` returns now
  signals.set_cancel({});  // the job ended: a signal now exits at once
  if (progress) progress->stop();
  if (injector) injector->stop();
  // Distinct events of the stream this run processed: a finished run covers the whole stream, or after --restore
  // the rest of it after the restored checkpoint's source positions. Sources re-emit events after a recovery:
  // those replays are in `emitted` and reported apart. A run that did not finish reports what its sources emitted.
  int64_t emitted = source_events((*client)->metrics(), "bids");
  int64_t events = emitted;
  // Stopped with a savepoint (`sluice stop`): FINISHED, but only the part of the stream before the savepoint.
  const std::optional<std::string> stopped = (*endpoint)->stopped_with_savepoint();
  if (result.status == JobStatus::kFinished && !stopped) {
    std::optional<int64_t> before = initial_restore ? stream_events_before(initial_restore->second, config) : int64_t{0};
    if (before) events = f.events - *before;
  }

  nlohmann::json summary;
  add_run_summary(summary, RunFigures{&result, client->get(), cp_client, events, f.events, emitted,
                                      parallelism, injector ? injector->at_events() : std::vector<int64_t>{}});
  summary["seed"] = f.seed;

  print_failures(summary, f.inject_failures);

  int exit_code = result.status == JobStatus::kFinished ? 0 : 1;
  if (result.status != JobStatus::kFinished) {
    std::fprintf(stderr, "job %s%s%s\n", job_status_name(result.status), result.error.is_ok() ? "" : ": ",
                 result.error.is_ok() ? "" : result.error.to_string().c_str());  // a cancel has no error
  }
  if (f.verify) {
    summary["verification"] = stopped ? std::string("not run: the job was stopped with a savepoint (restore it and run "
                                                    "to the end of the stream with --verify)")
                              : result.status == JobStatus::kFinished ? std::string("ran")
                                                                       : std::string("not run: the job ") +
                                                                             job_status_name(result.status);
  } else {
    summary["verification"] = "not requested";
  }
  if (stopped) {
    summary["stopped_with_savepoint"] = *stopped;
    std::printf("stopped with a savepoint: %s (restore with --restore %s)\n", stopped->c_str(), stopped->c_str());
  }
  // AT_LEAST_ONCE: the verification asks for no losses only, and reports the duplicates as a figure.
  const bool at_least_once = checkpointing_enabled(config) &&
                             config.get(options::kCheckpointingMode) == CheckpointingMode::kAtLeastOnce;
  summary["checkpointing_mode"] = batch_client != nullptr ? std::string("none") : checkpointing_mode_name(config);
  if (f.verify && result.status == JobStatus::kFinished && !stopped) {
    // Only when the check runs: a stopped or failed job's summary says why it did not ("verification").
    summary["verified_guarantee"] = at_least_once ? "at-least-once (no losses)" : "exactly-once";
    auto oracle = nexmark::compute_per_auction_oracle(options.source.generator, f.events);
    // At-least-once: duplicates are allowed, so the count values alone could hide a lost bid behind a duplicate
    // of another one; the bids are checked one by one (by price).
    std::optional<AuctionBidPrices> prices;
    if (at_least_once) prices = compute_auction_bid_prices(options.source.generator, f.events);
    const sluice::fs::FileSystemRegistry file_systems = sluice::fs::file_systems_from(config);
    auto report = verify_per_auction_output(f.output, oracle, prices ? &*prices : nullptr, &file_systems);
    if (!report.is_ok()) {
      std::fprintf(stderr, "verify: %s\n", report.status().to_string().c_str());
      summary["verified"] = false;
      exit_code = 1;
    } else {
      const bool ok = at_least_once ? report->at_least_once() : report->exactly_once();
      summary["verified"] = ok;
      summary["mismatches"] = report->mismatches();
      summary["missing"] = report->missing;
      summary["duplicates"] = report->duplicates;
      summary["wrong_finals"] = report->wrong_finals;
      summary["auctions"] = report->auctions;
      summary["update_records"] = report->records;
      if (at_least_once && ok) {
        std::printf("verify (at-least-once): no losses; %lld duplicates, %lld auctions with replayed finals\n",
                    static_cast<long long>(report->duplicates), static_cast<long long>(report->wrong_finals));
      }
      if (!ok) {
        exit_code = 1;
        std::fprintf(stderr, "verify: %lld mismatches (missing %lld, duplicates %lld, wrong finals %lld, malformed %lld)\n",
                     static_cast<long long>(report->mismatches()), static_cast<long long>(report->missing),
                     static_cast<long long>(report->duplicates), static_cast<long long>(report->wrong_finals),
                     static_cast<long long>(report->malformed));
        for (const auto& m : report->first_mismatches) std::fprintf(stderr, "  %s\n", m.c_str());
      }
    }
  } else {
    // Not verified (not requested, or the job did not finish): no figures, and `verification` says why.
    summary["verified"] = false;
    summary["mismatches"] = nullptr;
    summary["missing"] = nullptr;
    summary["duplicates"] = nullptr;
    summary["wrong_finals"] = nullptr;
  }

  print_checkpoints(summary, config, cp_client != nullptr);
  const std::string what = initial_restore
      ? "events (the rest of a " + std::to_string(f.events) + "-event stream after checkpoint " +
            std::to_string(initial_restore->first) + ")"
      : std::string("events");
  const char* verified = !f.verify ? ""
                         : stopped ? ", verification not run (stopped with a savepoint)"
                         : result.status != JobStatus::kFinished ? ", verification not run (the job did not finish)"
                         : summary["verified"].get<bool>() ? ", verified: OK" : ", verified: FAILED";
  print_summary_line(summary, what, verified);
  if ((*endpoint)->cancelled_by_request() && result.status == JobStatus::kCanceled) {
    std::fprintf(stderr, "sluice demo: cancelled through the REST endpoint (PATCH /jobs/%s?mode=cancel)\n",
                 result.job_id.to_hex().c_str());
  }
  if (int sig = signals.received()) {
    std::fprintf(stderr, "sluice demo: cancelled by %s; the job's working directories are removed\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM");
    exit_code = 128 + sig;
  }
  if (summary_file) {
    if (Status st = summary_file->write(summary); !st.is_ok()) {
      std::fprintf(stderr, "error: %s\n", st.to_string().c_str());
      return 2;
    }
  }
  return exit_code;
}

}  // namespace

void add_demo_command(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<DemoFlags>();
  CLI::App* cmd = app.add_subcommand("demo", "Run the main job: Nexmark bids -> per-auction count, sum, max -> files");
  // Validators with plain messages (job_report.h).
  auto at_least_one = whole_number_at_least_one();
  auto rate_check = declared_rate_check();
  cmd->add_option("--events", flags->events, "Number of Nexmark events to generate")->capture_default_str()->check(at_least_one);
  cmd->add_option("--parallelism,-p", flags->parallelism,
                  "Parallelism of every operator (default: parallelism.default if configured, else 2)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--splits", flags->splits, "Source splits (fixed per job; the stream is the same at any parallelism)")
      ->capture_default_str()->check(CLI::Range(1, 65536));
  cmd->add_option("--rate", flags->rate, "Declared event rate (events/s of event time)")->capture_default_str()->check(rate_check);
  cmd->add_option("--seed", flags->seed, "Generator seed")->capture_default_str();
  cmd->add_option("--output", flags->output,
                  "Output directory. Without --restore, the part files of earlier sluice demo runs (their job ids "
                  "recorded in its .sluice-demo-runs) are removed; other files stay, and part files of any other job "
                  "make the demo refuse to start")
      ->capture_default_str();
  CLI::Option* interval = cmd->add_option("--checkpoint-interval", flags->checkpoint_interval,
                                          "Checkpoint interval (Flink duration syntax; 0 turns checkpointing off; "
                                          "no default in BATCH)")->capture_default_str();
  cmd->add_option("--checkpoint-dir", flags->checkpoint_dir, "Checkpoint directory")->capture_default_str();
  cmd->add_option("--inject-failures", flags->inject_failures,
                  "Inject K failures, each of a seeded class (source, keyed-operator, sink, "
                  "between-sync-and-async-snapshot, between-completion-and-commit; every class once per five) at a "
                  "seeded point of the stream (the source waits there until it is armed); the job recovers. The summary lists them (failures_injected, "
                  "failures_by_class)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--kill-at", flags->kill_at,
                  "TaskManager processes only (cluster failure tests): POINT[@CHECKPOINT] - the first subtask here that "
                  "reaches failure point POINT (between-sync-and-async-snapshot, between-completion-and-commit, "
                  "after-commit, sink, restore, keyed-operator, source, task) kills this process with SIGKILL; "
                  "@CHECKPOINT (the first four points only): for a checkpoint id >= CHECKPOINT");
  api::add_job_flags(
      cmd, &flags->job,
      {.restore_flags = true,
       .restore_help =
           "Resume from a savepoint folder, a retained checkpoint (a chk-<n> folder), its _metadata, or 'latest' (the "
           "highest checkpoint id under --checkpoint-dir, across every run's job folder). It must come from a run with "
           "the same --events, --seed, --splits and --rate (the parallelism and the state backend may differ)"});
  cmd->add_flag("--verify", flags->verify, "Check the output against a single-threaded oracle; exit 1 on any mismatch");
  cmd->footer(
      "Recovery: with checkpointing on, the demo restarts failed tasks with a fixed-delay restart strategy, "
      "2K+3 attempts 100 ms apart for --inject-failures K (restart-strategy.type=fixed-delay, "
      "restart-strategy.fixed-delay.attempts, restart-strategy.fixed-delay.delay; -D or --config override them).");
  cmd->callback([flags, exit_code, interval] {
    flags->checkpoint_interval_given = interval->count() > 0;
    *exit_code = run_demo(*flags);
  });
}

}  // namespace sluice::cli
