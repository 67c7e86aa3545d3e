// checkpoint_bench: what checkpoints cost (the figures and targets of README.md), in one run, as one JSON object on
// stdout (progress on stderr). See README.md.
//
//   (a) tax       the keyed job (keyed_job.h) with checkpoints every --interval-ms next to the same job
//                 without checkpoints: events per CPU-second with / without (runs alternate; medians)
//   (b) duration  end-to-end duration of those checkpoints (trigger to `_metadata` durable): p50 / p99 / max,
//                 each split into start delay, alignment, sync, async, last acknowledgement and finalization
//   (c) recovery  one injected task failure in a checkpointed run: the cluster's recovery_time_ms (failure to
//                 redeployed), and injection to every restored keyed subtask open again
//   (d) restore   restoring --restore-bytes of heap state from its checkpoint file next to reading that file
//   and `snapshot_cost`: one subtask's checkpoint of --keys entries piece by piece, without a job around it.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cluster/mini_cluster.h"
#include "coordinator/checkpoint_stats.h"
#include "keyed_job.h"
#include "state_bench.h"
#include "../common/bench_util.h"

#ifndef SLUICE_BENCH_BUILD_TYPE
#define SLUICE_BENCH_BUILD_TYPE "unknown"
#endif

namespace sluice::bench {
namespace {

constexpr double kTaxTarget = 0.95;
constexpr int64_t kP99TargetMs = 50;

struct Options {
  int64_t events = 40'000'000;
  int64_t keys = 100'000;
  int32_t parallelism = 2;
  int64_t interval_ms = 1000;
  int32_t repeat = 3;
  int64_t restore_bytes = int64_t{1} << 30;
  int64_t restart_delay_ms = 100;  // the demo's fixed-delay restart
  SinkKind sink = SinkKind::kDiscard;
  std::string dir;  // default: a fresh folder in the system temp directory
  std::string only;  // "", "jobs", "snapshot_cost" or "restore"
  std::vector<std::string> dynamic;  // -D key=value for every job run
};

constexpr const char* kUsage =
    "usage: checkpoint_bench [--events N] [--keys K] [--parallelism P] [--interval-ms MS] [--repeat R]\n"
    "                        [--restore-bytes B] [--restart-delay-ms MS] [--sink discard|file] [--dir DIR]\n"
    "                        [--only PART] [-D key=value ...]\n"
    "  --events N            events per job run (default 40000000)\n"
    "  --keys K              distinct keys of the keyed state (default 100000)\n"
    "  --parallelism P       parallelism of every operator (default 2, the demo's)\n"
    "  --interval-ms MS      checkpoint interval (default 1000)\n"
    "  --repeat R            job runs with and without checkpoints, alternating; medians (default 3)\n"
    "  --restore-bytes B     heap state restored in (d), bytes (default 1073741824; 0 skips (d))\n"
    "  --restart-delay-ms MS fixed restart delay of the recovery run (default 100, the demo's)\n"
    "  --sink discard|file   the job's sink (default discard; file is the demo's exactly-once file sink)\n"
    "  --dir DIR             checkpoints and outputs go below DIR (default: a new folder under $TMPDIR)\n"
    "  --only PART           run one part: jobs ((a)-(c)), snapshot_cost or restore ((d)); for profiling\n"
    "  -D key=value          configuration for every job run (e.g. network buffers), repeatable\n";

Result<Options> parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") return Status::invalid_argument("help");
    if (i + 1 >= argc) return Status::invalid_argument(std::string(a) + ": expected a value after it");
    const std::string_view v = argv[++i];
    if (a == "--events") {
      SLUICE_ASSIGN_OR_RETURN(o.events, parse_int<int64_t>(a, v, 1, int64_t{1} << 40));
    } else if (a == "--keys") {
      SLUICE_ASSIGN_OR_RETURN(o.keys, parse_int<int64_t>(a, v, 1, int64_t{1} << 32));
    } else if (a == "--parallelism") {
      SLUICE_ASSIGN_OR_RETURN(o.parallelism, parse_int<int32_t>(a, v, 1, 64));
    } else if (a == "--interval-ms") {
      SLUICE_ASSIGN_OR_RETURN(o.interval_ms, parse_int<int64_t>(a, v, 10, 3'600'000));
    } else if (a == "--repeat") {
      SLUICE_ASSIGN_OR_RETURN(o.repeat, parse_int<int32_t>(a, v, 1, 100));
    } else if (a == "--restore-bytes") {
      SLUICE_ASSIGN_OR_RETURN(o.restore_bytes, parse_int<int64_t>(a, v, 0, int64_t{1} << 40));
    } else if (a == "--restart-delay-ms") {
      SLUICE_ASSIGN_OR_RETURN(o.restart_delay_ms, parse_int<int64_t>(a, v, 0, 60'000));
    } else if (a == "--sink") {
      if (v == "discard") {
        o.sink = SinkKind::kDiscard;
      } else if (v == "file") {
        o.sink = SinkKind::kFile;
      } else {
        return Status::invalid_argument("--sink: expected discard or file, got '" + std::string(v) + "'");
      }
    } else if (a == "-D") {
      o.dynamic.emplace_back(v);
    } else if (a == "--dir") {
      o.dir = std::string(v);
    } else if (a == "--only") {
      if (v != "jobs" && v != "snapshot_cost" && v != "restore") {
        return Status::invalid_argument("--only: expected jobs, snapshot_cost or restore, got '" + std::string(v) + "'");
      }
      o.only = std::string(v);
    } else {
      return Status::invalid_argument("unknown argument '" + std::string(a) + "'");
    }
  }
  return o;
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

enum class RunKind { kWithout, kWith, kRecovery };

struct JobRun {
  double cpu_s = 0;
  double wall_s = 0;
  double job_cpu_s = 0;
  int64_t keys = 0;
  std::map<int64_t, coordinator::CheckpointStatsEntry> completed;  // by id
  int64_t failed = 0;
  // kRecovery only.
  std::vector<std::pair<int64_t, int64_t>> recoveries;
  int64_t injection_to_open_ms = -1;
};

Result<Configuration> job_config(const Options& o, RunKind kind, const std::string& checkpoint_dir) {
  Configuration c;
  for (const auto& kv : o.dynamic) SLUICE_RETURN_IF_ERROR(c.apply_dynamic_property(kv).with_context("-D " + kv));
  Status failed = Status::ok();
  auto set = [&](const char* k, const std::string& v) {
    Status s = c.set_string(k, v);
    if (!s.is_ok() && failed.is_ok()) failed = s;
  };
  if (kind == RunKind::kWithout) {
    set("execution.checkpointing.interval", "0ms");
  } else {
    set("execution.checkpointing.interval", std::to_string(o.interval_ms) + "ms");
    set("execution.checkpointing.dir", checkpoint_dir);
    set("restart-strategy.type", "fixed-delay");
    set("restart-strategy.fixed-delay.attempts", "3");
    set("restart-strategy.fixed-delay.delay", std::to_string(o.restart_delay_ms) + "ms");
  }
  SLUICE_RETURN_IF_ERROR(failed);
  return c;
}

// Keeps every completed checkpoint's statistics (the coordinator's history holds the latest 10).
void collect(const coordinator::CheckpointStatsSnapshot& s, JobRun* run) {
  for (const auto& e : s.history) {
    if (e.status == coordinator::CheckpointStatus::kCompleted) run->completed.emplace(e.id.value(), e);
  }
  run->failed = s.num_failed;
}

Result<JobRun> run_job(const Options& o, RunKind kind, const std::string& dir, int32_t index) {
  const std::string checkpoint_dir = dir + "/checkpoints";
  KeyedJobConfig cfg;
  cfg.events = kind == RunKind::kRecovery ? -1 : o.events;  // the recovery run is cancelled once recovered
  cfg.num_keys = o.keys;
  cfg.parallelism = o.parallelism;
  cfg.sink = o.sink;
  cfg.output_dir = dir + "/out-" + std::to_string(index);
  auto probe = std::make_shared<JobProbe>();
  SLUICE_ASSIGN_OR_RETURN(Configuration config, job_config(o, kind, checkpoint_dir));
  StreamExecutionEnvironment env(std::move(config));
  build_keyed_job(env, cfg, probe);

  JobRun run;
  const double cpu0 = process_cpu_seconds();
  const int64_t wall0 = monotonic_ns();
  auto client = env.execute_async("checkpoint-bench");
  if (!client.is_ok()) return client.status();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  if (kind != RunKind::kWithout && cp == nullptr) return Status::internal("checkpointing job without checkpoint client");

  std::atomic<bool> done{false};
  std::mutex run_mu;
  std::thread poller;
  if (cp != nullptr) {
    poller = std::thread([&] {
      bool injected = false;
      int64_t injected_ns = 0;
      int64_t completed_at_restart = -1;
      const int64_t deadline_ns = monotonic_ns() + int64_t{120} * 1'000'000'000;
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        auto stats = cp->checkpoint_stats();
        {
          std::lock_guard lock(run_mu);
          collect(stats, &run);
        }
        if (kind != RunKind::kRecovery) continue;
        if (!injected && stats.num_completed >= 2) {
          injected_ns = monotonic_ns();
          cp->fail_task(1, 0, "checkpoint_bench: injected failure");  // vertex 1: the keyed operator and sink
          injected = true;
          continue;
        }
        // Recovered once the restored attempt completed a checkpoint of its own.
        if (injected && completed_at_restart < 0 && cp->restarts() >= 1) completed_at_restart = stats.num_completed;
        if (completed_at_restart >= 0 && stats.num_completed > completed_at_restart) {
          std::lock_guard lock(run_mu);
          run.recoveries = cp->recoveries();
          const int64_t opened = probe->last_open_ns.load();
          if (opened > injected_ns) run.injection_to_open_ms = (opened - injected_ns) / 1'000'000;
          (*client)->cancel();
          break;
        }
        if (monotonic_ns() > deadline_ns) {
          std::fprintf(stderr, "checkpoint_bench: the recovery run did not recover within 120 s; cancelling\n");
          (*client)->cancel();
          break;
        }
      }
    });
  }
  JobExecutionResult result = (*client)->wait();
  done.store(true);
  if (poller.joinable()) poller.join();
  run.wall_s = static_cast<double>(monotonic_ns() - wall0) * 1e-9;
  run.cpu_s = process_cpu_seconds() - cpu0;
  run.job_cpu_s = result.cpu_seconds;
  run.keys = probe->new_keys.load();
  if (cp != nullptr) {
    collect(cp->checkpoint_stats(), &run);
    if (kind == RunKind::kRecovery) run.recoveries = cp->recoveries();
  }
  const JobStatus want = kind == RunKind::kRecovery ? JobStatus::kCanceled : JobStatus::kFinished;
  if (result.status != want) {
    return Status::internal(std::string("the job ended ") + job_status_name(result.status) + ", expected " +
                            job_status_name(want) + ": " + result.error.to_string());
  }
  return run;
}

Json summary_json(const coordinator::StatsSummary& s) {
  return Json{{"count", s.count}, {"p50", s.p50}, {"p99", s.p99}, {"max", s.max}, {"avg", s.avg}, {"min", s.min}};
}

// Per checkpoint, the slowest subtask's value of each part of its end-to-end duration.
struct Breakdown {
  int64_t id = 0;
  int64_t end_to_end_ms = 0;
  int64_t start_delay_ms = 0;
  int64_t alignment_ms = 0;
  // The largest start delay + alignment of one subtask: what fits inside the checkpoint's duration (the two maxima
  // above may come from different subtasks, and their sum need not fit).
  int64_t delay_and_alignment_ms = 0;
  int64_t sync_ms = 0;
  int64_t async_ms = 0;
  int64_t last_ack_ms = 0;  // trigger to the last acknowledgement received
  int64_t finalize_ms = 0;  // last acknowledgement to completion (`_metadata` written, coordinator)
  uint64_t state_bytes = 0;
};

Breakdown breakdown_of(const coordinator::CheckpointStatsEntry& e) {
  Breakdown b;
  b.id = e.id.value();
  b.end_to_end_ms = e.end_to_end_duration_ms;
  b.state_bytes = e.state_size_bytes;
  for (const auto& s : e.subtasks) {
    b.start_delay_ms = std::max(b.start_delay_ms, s.stats.start_delay_ms);
    b.alignment_ms = std::max(b.alignment_ms, s.stats.alignment_duration_ms);
    b.delay_and_alignment_ms =
        std::max(b.delay_and_alignment_ms, s.stats.start_delay_ms + s.stats.alignment_duration_ms);
    b.sync_ms = std::max(b.sync_ms, s.stats.sync_duration_ms);
    b.async_ms = std::max(b.async_ms, s.stats.async_duration_ms);
    b.last_ack_ms = std::max(b.last_ack_ms, s.ack_duration_ms);
  }
  b.finalize_ms = b.end_to_end_ms - b.last_ack_ms;
  return b;
}

Json breakdown_json(const Breakdown& b) {
  return Json{{"id", b.id},           {"end_to_end_ms", b.end_to_end_ms}, {"start_delay_ms", b.start_delay_ms},
              {"alignment_ms", b.alignment_ms}, {"delay_and_alignment_ms", b.delay_and_alignment_ms},
              {"sync_ms", b.sync_ms},           {"async_ms", b.async_ms},
              {"last_ack_ms", b.last_ack_ms},   {"finalize_ms", b.finalize_ms}, {"state_bytes", b.state_bytes}};
}

Json duration_json(const std::vector<JobRun>& runs) {
  std::vector<Breakdown> all;
  for (const auto& r : runs)
    for (const auto& [id, e] : r.completed) all.push_back(breakdown_of(e));
  auto summarize_field = [&](auto field) {
    std::vector<int64_t> v;
    for (const auto& b : all) v.push_back(b.*field);
    return coordinator::summarize(std::move(v));
  };
  const coordinator::StatsSummary e2e = summarize_field(&Breakdown::end_to_end_ms);
  Json parts = Json::object();
  const std::pair<const char*, int64_t Breakdown::*> fields[] = {
      {"start_delay_ms", &Breakdown::start_delay_ms}, {"alignment_ms", &Breakdown::alignment_ms},
      {"sync_ms", &Breakdown::sync_ms},               {"async_ms", &Breakdown::async_ms},
      {"last_ack_ms", &Breakdown::last_ack_ms},       {"finalize_ms", &Breakdown::finalize_ms}};
  for (const auto& [name, field] : fields) parts[name] = summary_json(summarize_field(field));
  std::vector<int64_t> sizes;
  for (const auto& b : all) sizes.push_back(static_cast<int64_t>(b.state_bytes));
  std::sort(all.begin(), all.end(), [](const Breakdown& a, const Breakdown& b) { return a.end_to_end_ms > b.end_to_end_ms; });
  Json slowest = Json::array();
  for (size_t i = 0; i < all.size() && i < 5; ++i) slowest.push_back(breakdown_json(all[i]));
  return Json{{"checkpoints", e2e.count},
              {"end_to_end_ms", summary_json(e2e)},
              {"p99_ms", e2e.p99},
              {"target_p99_ms", kP99TargetMs},
              {"meets_target", e2e.count > 0 && e2e.p99 <= kP99TargetMs},
              {"state_bytes", summary_json(coordinator::summarize(std::move(sizes)))},
              {"parts", std::move(parts)},
              {"slowest", std::move(slowest)}};
}

Json runs_json(const std::vector<JobRun>& runs, int64_t events) {
  Json list = Json::array();
  std::vector<double> per_cpu, per_wall;
  for (const auto& r : runs) {
    per_cpu.push_back(static_cast<double>(events) / std::max(r.cpu_s, 1e-6));
    per_wall.push_back(static_cast<double>(events) / std::max(r.wall_s, 1e-6));
    list.push_back(Json{{"cpu_s", r.cpu_s}, {"wall_s", r.wall_s}, {"job_cpu_s", r.job_cpu_s}, {"keys", r.keys},
                        {"checkpoints", r.completed.size()}, {"checkpoints_failed", r.failed}});
  }
  return Json{{"events_per_cpu_s", median(per_cpu)}, {"events_per_wall_s", median(per_wall)}, {"runs", std::move(list)}};
}

// (a), (b) and (c): the job runs.
Status run_jobs(const Options& o, const std::string& dir, Json* out) {
  // (a) and (b): alternate runs without and with checkpoints, so a change in machine load hits both.
  std::vector<JobRun> without, with;
  int32_t index = 0;
  for (int32_t r = 0; r < o.repeat; ++r) {
    for (RunKind kind : {RunKind::kWithout, RunKind::kWith}) {
      const bool cp = kind == RunKind::kWith;
      std::fprintf(stderr, "job %s checkpoints: run %d/%d\n", cp ? "with" : "without", r + 1, o.repeat);
      auto run = run_job(o, kind, dir, index++);
      if (!run.is_ok()) return run.status().with_context(std::string("a run ") + (cp ? "with" : "without") + " checkpoints");
      (cp ? with : without).push_back(std::move(run).value());
    }
  }
  Json tax;
  tax["with_checkpoints"] = runs_json(with, o.events);
  tax["without_checkpoints"] = runs_json(without, o.events);
  const double ratio = tax["with_checkpoints"]["events_per_cpu_s"].get<double>() /
                       tax["without_checkpoints"]["events_per_cpu_s"].get<double>();
  tax["ratio"] = ratio;
  tax["ratio_wall"] = tax["with_checkpoints"]["events_per_wall_s"].get<double>() /
                      tax["without_checkpoints"]["events_per_wall_s"].get<double>();
  tax["target"] = kTaxTarget;
  tax["meets_target"] = ratio >= kTaxTarget;
  (*out)["tax"] = std::move(tax);
  (*out)["duration"] = duration_json(with);

  // (c)
  std::fprintf(stderr, "recovery run\n");
  auto rec = run_job(o, RunKind::kRecovery, dir, index++);
  if (!rec.is_ok()) return rec.status().with_context("the recovery run");
  Json recovery;
  if (!rec->recoveries.empty()) {
    recovery["recovery_time_ms"] = rec->recoveries.front().second;
    recovery["restored_from_checkpoint"] = rec->recoveries.front().first;
    auto restored = rec->completed.find(rec->recoveries.front().first);
    recovery["restored_state_bytes"] = restored != rec->completed.end() ? restored->second.state_size_bytes : 0;
  } else {
    recovery["recovery_time_ms"] = nullptr;
  }
  recovery["injection_to_restored_open_ms"] = rec->injection_to_open_ms >= 0 ? Json(rec->injection_to_open_ms) : Json();
  recovery["restart_delay_ms"] = o.restart_delay_ms;
  (*out)["recovery"] = std::move(recovery);
  return Status::ok();
}

int run(const Options& o) {
  namespace fs = std::filesystem;
  const bool own_dir = o.dir.empty();
  const std::string dir =
      own_dir ? (fs::temp_directory_path() / ("sluice-checkpoint-bench-" + std::to_string(::getpid()))).string() : o.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "checkpoint_bench: cannot create '%s': %s\n", dir.c_str(), ec.message().c_str());
    return 2;
  }
  auto fail = [&](const std::string& what, const Status& s) {
    std::fprintf(stderr, "checkpoint_bench: %s: %s\n", what.c_str(), s.to_string().c_str());
    if (own_dir) fs::remove_all(dir, ec);
    return 1;
  };

  Json out;
  out["benchmark"] = "checkpoint_bench";
  out["schema_version"] = 1;
  out["config"] = {{"events", o.events},
                   {"keys", o.keys},
                   {"parallelism", o.parallelism},
                   {"interval_ms", o.interval_ms},
                   {"repeat", o.repeat},
                   {"restore_bytes", o.restore_bytes},
                   {"restart_delay_ms", o.restart_delay_ms},
                   {"sink", o.sink == SinkKind::kFile ? "file" : "discard"},
                   {"dynamic", o.dynamic},
                   {"build_type", SLUICE_BENCH_BUILD_TYPE},
                   {"hardware_threads", std::thread::hardware_concurrency()}};

  if (o.only.empty() || o.only == "jobs") {
    Status st = run_jobs(o, dir, &out);
    if (!st.is_ok()) return fail("job runs", st);
  }

  // Floor of (b), and (d).
  if (o.only.empty() || o.only == "snapshot_cost") {
    std::fprintf(stderr, "snapshot cost of %lld keys\n", static_cast<long long>(o.keys));
    auto cost = snapshot_cost(dir + "/snapshot-cost", o.keys, 5);
    if (!cost.is_ok()) return fail("snapshot cost", cost.status());
    out["snapshot_cost"] = std::move(cost).value();
  }
  if (o.only.empty() || o.only == "restore") {
    if (o.restore_bytes > 0) {
      std::fprintf(stderr, "restore of %lld bytes of heap state\n", static_cast<long long>(o.restore_bytes));
      auto restore = restore_vs_read(dir + "/restore", o.restore_bytes, 3);
      if (!restore.is_ok()) return fail("restore", restore.status());
      out["restore"] = std::move(restore).value();
    } else {
      out["restore"] = nullptr;
    }
  }

  if (own_dir) fs::remove_all(dir, ec);
  std::cout << out.dump(2) << std::endl;
  return 0;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  // Logs (checkpoint completions, the injected failure) go to stderr: stdout is the JSON.
  spdlog::set_default_logger(spdlog::stderr_color_mt("checkpoint_bench"));
  auto opt = sluice::bench::parse_args(argc, argv);
  if (!opt.is_ok()) {
    if (opt.status().message() != "help") std::fprintf(stderr, "checkpoint_bench: %s\n", opt.status().message().c_str());
    std::fputs(sluice::bench::kUsage, stderr);
    return opt.status().message() == "help" ? 0 : 2;
  }
  return sluice::bench::run(*opt);
}
