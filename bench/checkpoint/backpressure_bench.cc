// backpressure_bench: checkpoints under back-pressure (README.md). The keyed job of keyed_job.h
// (Nexmark bids -> hash exchange -> per-key count/sum/max -> sink) with its sink throttled to a fraction (default
// one half) of what the job produces unthrottled, so the exchange's buffers stay full and barriers queue behind
// them. One unthrottled run without checkpoints measures the job's rate; then every mode runs the same number
// of events at the throttled rate and reports checkpoint duration p50/p99, alignment duration, persisted
// in-flight bytes per checkpoint and throughput. Prints one JSON object (progress on stderr); see README.md.
//
// Modes (--mode NAME, repeatable; default all that this build knows): none (no checkpoints), aligned
// (EXACTLY_ONCE), at_least_once, unaligned (execution.checkpointing.unaligned.enabled) and
// aligned_timeout_100ms (unaligned with execution.checkpointing.aligned-checkpoint-timeout 100ms). A mode whose
// options the configuration refuses (unknown to this build, or contradicted by a -D) is reported as skipped.
// -D key=value applies to every run.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "../common/bench_util.h"
#include "cluster/mini_cluster.h"
#include "coordinator/checkpoint_stats.h"
#include "keyed_job.h"

namespace sluice::bench {
namespace {

namespace fs = std::filesystem;

struct Options {
  int64_t events = 2'000'000;
  int64_t keys = 10'000;
  int32_t parallelism = 2;
  int64_t interval_ms = 200;
  double throttle_fraction = 0.5;
  int64_t sink_rate = 0;  // records per second over all sink subtasks; 0: throttle_fraction of the measured rate
  std::vector<std::string> modes;
  std::vector<std::string> dynamic;
  std::string dir;
};

constexpr const char* kUsage =
    "usage: backpressure_bench [--events N] [--keys K] [--parallelism P] [--interval-ms MS]\n"
    "                          [--throttle-percent P] [--sink-rate R] [--mode NAME ...] [--dir DIR] [-D key=value ...]\n"
    "  --events N            events per run (default 2000000)\n"
    "  --keys K              distinct keys of the keyed state (default 10000)\n"
    "  --parallelism P       parallelism of every operator (default 2)\n"
    "  --interval-ms MS      checkpoint interval (default 200)\n"
    "  --throttle-percent P  the sink's rate as a percentage of the unthrottled rate (default 50)\n"
    "  --sink-rate R         the sink's rate in records/s over all its subtasks (skips the unthrottled run)\n"
    "  --mode NAME           none, aligned, at_least_once, unaligned, aligned_timeout_100ms (default: all)\n"
    "  --dir DIR             checkpoints go below DIR (default: a new folder under $TMPDIR)\n"
    "  -D key=value          configuration for every run, repeatable\n";

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
    } else if (a == "--throttle-percent") {
      SLUICE_ASSIGN_OR_RETURN(int32_t p, parse_int<int32_t>(a, v, 1, 100));
      o.throttle_fraction = p / 100.0;
    } else if (a == "--sink-rate") {
      SLUICE_ASSIGN_OR_RETURN(o.sink_rate, parse_int<int64_t>(a, v, 1, int64_t{1} << 40));
    } else if (a == "--mode") {
      o.modes.emplace_back(v);
    } else if (a == "--dir") {
      o.dir = std::string(v);
    } else if (a == "-D") {
      o.dynamic.emplace_back(v);
    } else {
      return Status::invalid_argument("unknown argument '" + std::string(a) + "'");
    }
  }
  return o;
}

struct Mode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> settings;  // beyond the interval and directory
  bool checkpointing = true;
};

const std::vector<Mode>& all_modes() {
  static const std::vector<Mode> modes = {
      {"none", {}, false},
      {"aligned", {{"execution.checkpointing.mode", "EXACTLY_ONCE"}}, true},
      {"at_least_once", {{"execution.checkpointing.mode", "AT_LEAST_ONCE"}}, true},
      {"unaligned", {{"execution.checkpointing.unaligned.enabled", "true"}}, true},
      {"aligned_timeout_100ms",
       {{"execution.checkpointing.unaligned.enabled", "true"},
        {"execution.checkpointing.aligned-checkpoint-timeout", "100ms"}},
       true},
  };
  return modes;
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The throttled sink's pace: each subtask lets through at most `rate` records per second (sleeping when more
// than a millisecond ahead, so the per-record cost is one clock read).
struct Throttle {
  double period_ns = 0;  // 0: unthrottled
  mutable int64_t next_ns = 0;
  KeyAggregate operator()(KeyAggregate&& u) const {
    if (period_ns <= 0) return std::move(u);
    const int64_t now = monotonic_ns();
    if (next_ns == 0 || next_ns < now - 50'000'000) next_ns = now;  // start, or fell far behind: no burst
    next_ns += static_cast<int64_t>(period_ns);
    if (next_ns - now > 1'000'000) std::this_thread::sleep_for(std::chrono::nanoseconds(next_ns - now));
    return std::move(u);
  }
};

struct RunResult {
  bool skipped = false;
  std::string skip_reason;
  double wall_s = 0;
  int64_t updates = 0;  // records that reached the sink
  std::map<int64_t, coordinator::CheckpointStatsEntry> completed;
  int64_t failed = 0;
};

Result<RunResult> run_mode(const Options& o, const Mode& mode, double sink_rate, const std::string& dir) {
  RunResult r;
  Configuration c;
  for (const auto& kv : o.dynamic) SLUICE_RETURN_IF_ERROR(c.apply_dynamic_property(kv).with_context("-D " + kv));
  if (!mode.checkpointing) {
    SLUICE_RETURN_IF_ERROR(c.set_string("execution.checkpointing.interval", "0ms"));
  } else {
    SLUICE_RETURN_IF_ERROR(c.set_string("execution.checkpointing.interval", std::to_string(o.interval_ms) + "ms"));
    SLUICE_RETURN_IF_ERROR(c.set_string("execution.checkpointing.dir", dir + "/" + mode.name));
    for (const auto& [k, v] : mode.settings) {
      Status s = c.set_string(k, v);
      if (!s.is_ok()) {  // an option this build does not have
        r.skipped = true;
        r.skip_reason = s.to_string();
        return r;
      }
    }
  }
  StreamExecutionEnvironment env(std::move(c));
  KeyedJobConfig job;
  job.events = o.events;
  job.num_keys = o.keys;
  job.parallelism = o.parallelism;
  job.num_splits = 8;
  auto probe = std::make_shared<JobProbe>();
  Throttle throttle;
  if (sink_rate > 0) throttle.period_ns = 1e9 * o.parallelism / sink_rate;
  auto counted = std::make_shared<std::atomic<int64_t>>(0);
  add_keyed_updates(env, job, probe)
      .map(throttle)
      .name("throttled-sink")
      .uid("throttled-sink")
      .map([counted](KeyAggregate&& u) {
        counted->fetch_add(1, std::memory_order_relaxed);
        return std::move(u);
      })
      .name("count")
      .uid("count")
      .sink_to(DiscardingSink<KeyAggregate>())
      .name("sink")
      .uid("sink");

  const int64_t wall0 = monotonic_ns();
  auto client = env.execute_async("backpressure-bench");
  if (!client.is_ok()) {
    if (client.status().code() != StatusCode::kInvalidArgument) return client.status();
    r.skipped = true;  // the configuration refused this mode's options (e.g. a -D that contradicts it)
    r.skip_reason = client.status().to_string();
    return r;
  }
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  std::atomic<bool> done{false};
  std::mutex mu;
  std::thread poller;
  auto collect = [&](const coordinator::CheckpointStatsSnapshot& s) {
    std::lock_guard lock(mu);
    for (const auto& e : s.history)
      if (e.status == coordinator::CheckpointStatus::kCompleted) r.completed.emplace(e.id.value(), e);
    r.failed = s.num_failed;
  };
  if (cp != nullptr) {
    poller = std::thread([&] {
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        collect(cp->checkpoint_stats());
      }
    });
  }
  JobExecutionResult result = (*client)->wait();
  done.store(true);
  if (poller.joinable()) poller.join();
  if (cp != nullptr) collect(cp->checkpoint_stats());
  r.wall_s = static_cast<double>(monotonic_ns() - wall0) * 1e-9;
  r.updates = counted->load();
  if (result.status != JobStatus::kFinished) {
    return Status::internal(std::string("mode ") + mode.name + ": the job ended " + job_status_name(result.status) +
                            ": " + result.error.to_string());
  }
  return r;
}

nlohmann::json summary_of(std::vector<int64_t> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::max<size_t>(k, 1) - 1];
  };
  double sum = 0;
  for (int64_t v : values) sum += static_cast<double>(v);
  return {{"count", values.size()}, {"min", values.front()}, {"avg", sum / static_cast<double>(values.size())},
          {"p50", rank(0.5)}, {"p99", rank(0.99)}, {"max", values.back()}};
}

nlohmann::json report(const Mode& mode, const RunResult& r, int64_t events) {
  nlohmann::json j = {{"mode", mode.name}};
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [k, v] : mode.settings) settings[k] = v;
  j["settings"] = settings;
  if (r.skipped) {
    j["skipped"] = r.skip_reason;
    return j;
  }
  j["wall_s"] = r.wall_s;
  j["events_per_s"] = r.wall_s > 0 ? static_cast<double>(events) / r.wall_s : 0.0;
  j["sink_records_per_s"] = r.wall_s > 0 ? static_cast<double>(r.updates) / r.wall_s : 0.0;
  j["sink_records"] = r.updates;
  j["checkpoints_completed"] = r.completed.size();
  j["checkpoints_failed"] = r.failed;
  std::vector<int64_t> duration, alignment, persisted, start_delay;
  int64_t unaligned = 0;
  for (const auto& [id, e] : r.completed) {
    duration.push_back(e.end_to_end_duration_ms);
    alignment.push_back(e.alignment_duration_ms);
    start_delay.push_back(e.start_delay_ms);
    persisted.push_back(static_cast<int64_t>(e.persisted_data_bytes));
    unaligned += e.unaligned ? 1 : 0;
  }
  j["checkpoint_duration_ms"] = summary_of(duration);
  j["alignment_duration_ms"] = summary_of(alignment);
  j["start_delay_ms"] = summary_of(start_delay);
  j["persisted_in_flight_bytes"] = summary_of(persisted);
  j["unaligned_checkpoints"] = unaligned;
  // Share of the checkpoint's duration spent aligning (median over checkpoints), the key contrast between the modes.
  std::vector<int64_t> share_pct;
  for (const auto& [id, e] : r.completed) {
    if (e.end_to_end_duration_ms > 0) share_pct.push_back(100 * e.alignment_duration_ms / e.end_to_end_duration_ms);
  }
  j["alignment_share_percent"] = summary_of(share_pct);
  return j;
}

int run(int argc, char** argv) {
  auto parsed = parse_args(argc, argv);
  if (!parsed.is_ok()) {
    if (parsed.status().message() != "help") std::fprintf(stderr, "error: %s\n", parsed.status().message().c_str());
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  Options o = std::move(parsed).value();
  std::vector<Mode> modes;
  if (o.modes.empty()) {
    modes = all_modes();
  } else {
    for (const auto& name : o.modes) {
      auto it = std::find_if(all_modes().begin(), all_modes().end(), [&](const Mode& m) { return m.name == name; });
      if (it == all_modes().end()) {
        std::fprintf(stderr, "error: --mode: unknown mode '%s'\n%s", name.c_str(), kUsage);
        return 2;
      }
      modes.push_back(*it);
    }
  }
  const bool own_dir = o.dir.empty();
  const std::string dir =
      own_dir ? (fs::temp_directory_path() / ("sluice-backpressure-bench-" + std::to_string(::getpid()))).string() : o.dir;
  fs::create_directories(dir);
  // Every exit, an error included, removes a folder we made.
  const std::unique_ptr<const std::string, void (*)(const std::string*)> remove_dir(
      own_dir ? &dir : nullptr, [](const std::string* d) {
        std::error_code ec;
        fs::remove_all(*d, ec);
      });

  nlohmann::json doc;
  doc["benchmark"] = "backpressure_bench";
  doc["config"] = {{"events", o.events},           {"keys", o.keys},
                   {"parallelism", o.parallelism}, {"interval_ms", o.interval_ms},
                   {"throttle_fraction", o.throttle_fraction}, {"dynamic", o.dynamic},
#ifdef SLUICE_BENCH_BUILD_TYPE
                   {"build_type", SLUICE_BENCH_BUILD_TYPE}
#else
                   {"build_type", "unknown"}
#endif
  };
  double sink_rate = static_cast<double>(o.sink_rate);
  if (sink_rate <= 0) {
    std::fprintf(stderr, "backpressure_bench: measuring the unthrottled rate\n");
    Mode unthrottled{"unthrottled", {}, false};
    auto r = run_mode(o, unthrottled, 0, dir);
    if (r.is_ok() && r->skipped) {
      std::fprintf(stderr,
                   "error: the unthrottled run (checkpointing off) refused the -D options: %s\n"
                   "give the sink's rate with --sink-rate R, or drop the options that need checkpointing\n",
                   r->skip_reason.c_str());
      return 1;
    }
    if (!r.is_ok()) {
      std::fprintf(stderr, "error: %s\n", r.status().to_string().c_str());
      return 1;
    }
    const double rate = static_cast<double>(r->updates) / r->wall_s;
    doc["unthrottled"] = report(unthrottled, *r, o.events);
    sink_rate = rate * o.throttle_fraction;
  }
  doc["sink_rate_per_s"] = sink_rate;
  nlohmann::json results = nlohmann::json::array();
  for (const Mode& m : modes) {
    std::fprintf(stderr, "backpressure_bench: mode %s\n", m.name.c_str());
    auto r = run_mode(o, m, sink_rate, dir);
    if (!r.is_ok()) {
      std::fprintf(stderr, "error: %s\n", r.status().to_string().c_str());
      return 1;
    }
    results.push_back(report(m, *r, o.events));
  }
  doc["modes"] = results;
  std::printf("%s\n", doc.dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("backpressure_bench"));  // stdout is the JSON
  return sluice::bench::run(argc, argv);
}
