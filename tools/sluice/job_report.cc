#include "job_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <random>

#include "api/job_summary.h"
#include "api/progress_line.h"
#include "sluice/config/derived_options.h"
#include "sluice/config/options.h"

namespace sluice::cli {

CLI::Validator whole_number_at_least_one() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          size_t used = 0;
          long long n = std::stoll(v, &used);
          if (used != v.size() || n < 1) return "expected a whole number >= 1, got '" + v + "'";
        } catch (const std::exception&) {
          return "expected a whole number >= 1 that fits in 64 bits, got '" + v + "'";
        }
        return "";
      },
      "INT >= 1");
}

namespace {

// A validator of one number (the whole text a double) that `accept` takes; else "expected <expected>, got '<v>'".
CLI::Validator number_check(bool (*accept)(double), std::string expected, std::string name) {
  return CLI::Validator(
      [accept, expected = std::move(expected)](std::string& v) -> std::string {
        try {
          size_t used = 0;
          const double d = std::stod(v, &used);
          if (used == v.size() && accept(d)) return "";
        } catch (const std::exception&) {
        }
        return "expected " + expected + ", got '" + v + "'";
      },
      std::move(name));
}

}  // namespace

CLI::Validator declared_rate_check() {
  return number_check([](double r) { return r >= 1 && r <= 1e12; }, "events/s in [1, 1e12]", "RATE in [1, 1e12]");
}

CLI::Validator positive_seconds() {
  return number_check([](double s) { return std::isfinite(s) && s > 0; }, "a number of seconds > 0", "SECONDS > 0");
}

int64_t source_events(const MetricRegistry& metrics, const std::string& source_name) {
  return api::records_emitted(metrics, {source_name});
}

namespace {

// Classes that fire on the next record a task handles (the others fire at a checkpoint).
bool record_bound(runtime::FailurePoint p) {
  return p == runtime::FailurePoint::kSource || p == runtime::FailurePoint::kKeyedOperator ||
         p == runtime::FailurePoint::kSink;
}

}  // namespace

FailureInjector::FailureInjector(JobClient& client, cluster::CheckpointingJobClient& cp_client, Options o)
    : gate_(o.gate) {
  if (o.failures <= 0 || gate_ == nullptr) {
    if (gate_) gate_->open();
    return;
  }
  thread_ = std::thread([this, &client, &cp_client, f = std::move(o)] {
    using Clock = std::chrono::steady_clock;
    struct OpenAtExit {
      nexmark::NexmarkEmitGate* gate;
      ~OpenAtExit() { gate->open(); }
    } open_at_exit{gate_.get()};
    std::mt19937_64 rng(f.seed * 7919 + 17);
    const int64_t start = std::clamp<int64_t>(f.stream_start, 0, f.stream_events);
    const int64_t span = f.stream_events - start;
    std::vector<int64_t> points;
    for (int32_t i = 0; i < f.failures; ++i) {
      double u = 0.1 + 0.8 * static_cast<double>(rng() % 1'000'000) / 1e6;
      points.push_back(start + static_cast<int64_t>(u * static_cast<double>(span)));
    }
    std::sort(points.begin(), points.end());
    // Records let on past a point at least: enough that every subtask of the keyed operator and the sink gets
    // some, so a record-bound failure aimed at any one of them fires.
    const int64_t slack = std::max<int64_t>(1000, span / 50);
    // Classes in seeded rounds: each round of five takes every class once, in a seeded order.
    std::vector<runtime::FailurePoint> classes;
    while (static_cast<int32_t>(classes.size()) < f.failures) {
      std::vector<runtime::FailurePoint> round(std::begin(runtime::kFailureClasses), std::end(runtime::kFailureClasses));
      std::shuffle(round.begin(), round.end(), rng);
      classes.insert(classes.end(), round.begin(), round.end());
    }
    for (int32_t i = 0; i < f.failures && !done_.load(); ++i) {
      const int64_t point = points[static_cast<size_t>(i)];
      gate_->raise_to(point);
      // Wait until a reader is held at the point (or beyond it). Give up when the sources emit nothing for 30 s
      // (a restore of large state from slow storage emits nothing for a while too).
      int64_t emitted = source_events(client.metrics(), f.source_name);
      Clock::time_point last_progress = Clock::now();
      bool stalled = false;
      while (!done_.load() && gate_->held_at.load() < point) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        const int64_t now_emitted = source_events(client.metrics(), f.source_name);
        if (now_emitted != emitted) {
          emitted = now_emitted;
          last_progress = Clock::now();
        } else if (Clock::now() - last_progress > std::chrono::seconds(30)) {
          stalled = true;
          break;
        }
      }
      if (done_.load()) break;
      if (stalled) {
        std::fprintf(stderr, "  cannot inject failure %d: the sources emitted nothing for 30 s before event %lld\n",
                     i + 1, static_cast<long long>(point));
        break;
      }
      // The drawn class first; if the job has no place for it (a keyed-operator failure in a job without keyed
      // state), the next class that arms, in kFailureClasses order: the count asked for is still injected.
      std::vector<runtime::FailurePoint> candidates{classes[static_cast<size_t>(i)]};
      for (runtime::FailurePoint c : runtime::kFailureClasses) {
        if (c != candidates.front()) candidates.push_back(c);
      }
      Status armed = Status::ok();
      runtime::FailurePoint armed_point = candidates.front();
      for (runtime::FailurePoint at : candidates) {
        // -1: the vertex the point belongs to. Between the sync and async parts of a snapshot any task can fail:
        // a seeded one of the first snapshot_vertices (the demo: the source chain, vertex 0, or the keyed operator
        // and sink, vertex 1), or any. For the source, -1 subtask: one that still produces records.
        int32_t vertex = -1;
        if (at == runtime::FailurePoint::kBetweenSyncAndAsyncSnapshot && f.snapshot_vertices > 0) {
          vertex = static_cast<int32_t>(rng() % static_cast<uint64_t>(f.snapshot_vertices));
        }
        int32_t subtask = static_cast<int32_t>(rng() % static_cast<uint64_t>(f.parallelism));
        if (at == runtime::FailurePoint::kSource) subtask = -1;
        armed = cp_client.arm_failure(at, vertex, subtask,
                                      "failure " + std::to_string(i + 1) + " (seed " + std::to_string(f.seed) + ")");
        if (!armed.is_ok()) continue;
        armed_point = at;
        // Vertex -1: the vertex that holds the point; subtask -1: a source subtask that still produces records.
        const std::string in_vertex = vertex < 0 ? "" : " in vertex " + std::to_string(vertex);
        const std::string in_subtask =
            subtask < 0 ? ", a producing subtask" : ", subtask index " + std::to_string(subtask);
        std::printf("  injecting failure %d [%s]%s%s at event %lld\n", i + 1, runtime::failure_point_name(at),
                    in_vertex.c_str(), in_subtask.c_str(), static_cast<long long>(point));
        break;
      }
      if (!armed.is_ok()) {
        std::fprintf(stderr, "  cannot inject failure %d: %s\n", i + 1, armed.to_string().c_str());
        break;
      }
      at_events_.push_back(source_events(client.metrics(), f.source_name));
      // Let the stream on to the next point (the last failure: to its end).
      const bool last = i + 1 == f.failures;
      if (last) gate_->open();
      else gate_->raise_to(std::max(points[static_cast<size_t>(i) + 1], point + slack));
      // Let it fire and the job recover before the next one. A record-bound failure aimed at a subtask that got no
      // record before the sources were held again gets more records, a slack at a time, after 20 ms.
      Clock::time_point held_since{};
      while (!done_.load() && static_cast<int32_t>(cp_client.injected_failures().size()) <= i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (last || !record_bound(armed_point)) continue;
        const int64_t limit = gate_->limit.load();
        if (gate_->held_at.load() < limit) {
          held_since = {};
        } else if (held_since == Clock::time_point{}) {
          held_since = Clock::now();
        } else if (Clock::now() - held_since > std::chrono::milliseconds(20)) {
          gate_->raise_to(limit + slack);
          held_since = {};
        }
      }
      while (!done_.load() && cp_client.restarts() <= i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
}

void FailureInjector::stop() {
  done_.store(true);
  if (thread_.joinable()) thread_.join();
  if (gate_) gate_->open();
}

void arm_batch_failures(batch::BatchJobClient& client, int32_t count, uint64_t seed, int32_t parallelism) {
  std::mt19937_64 rng(seed);
  for (int32_t i = 0; i < count; ++i) {
    // Alternately a source task (stage 0) and a keyed task (a later stage), each on a seeded subtask.
    const runtime::FailurePoint point = i % 2 == 0 ? runtime::FailurePoint::kSource : runtime::FailurePoint::kKeyedOperator;
    const auto subtask = static_cast<int32_t>(rng() % static_cast<uint64_t>(std::max(parallelism, 1)));
    Status s = client.arm_failure(point, -1, subtask, "seeded failure " + std::to_string(i + 1) + " (seed " +
                                                          std::to_string(seed) + ")");
    if (!s.is_ok()) std::fprintf(stderr, "warning: not injected: %s\n", s.to_string().c_str());
  }
}

void add_run_summary(nlohmann::json& summary, const RunFigures& r) {
  const JobExecutionResult& result = *r.result;
  api::add_job_summary(summary, result, *r.client);
  const double elapsed_s = static_cast<double>(result.runtime_ms) / 1000.0;
  summary["events"] = r.events;
  summary["stream_events"] = r.stream_events;
  summary["source_records_emitted"] = r.emitted;
  summary["source_records_replayed"] = r.emitted > r.events ? r.emitted - r.events : 0;
  summary["events_per_s"] = elapsed_s > 0 ? static_cast<double>(r.events) / elapsed_s : 0.0;
  summary["events_per_cpu_s"] = result.cpu_seconds > 0 ? static_cast<double>(r.events) / result.cpu_seconds : 0.0;
  summary["parallelism"] = r.parallelism;
  if (r.cp_client == nullptr || dynamic_cast<batch::BatchJobClient*>(r.client) != nullptr) return;
  // Armed one at a time, each after the previous fired: fired[i] is the failure armed at at_events[i].
  nlohmann::json injected = nlohmann::json::array(), by_class = nlohmann::json::object();
  for (runtime::FailurePoint p : runtime::kFailureClasses) by_class[runtime::failure_point_name(p)] = 0;
  auto fired = r.cp_client->injected_failures();
  const auto& at_events = r.failures_at_events;
  for (size_t i = 0; i < fired.size(); ++i) {
    const char* name = runtime::failure_point_name(fired[i].point);
    nlohmann::json one = {{"class", name}, {"vertex", fired[i].vertex}, {"subtask", fired[i].subtask},
                          {"at_events", i < at_events.size() ? at_events[i] : -1}};
    one["checkpoint"] = fired[i].checkpoint_id >= 0 ? nlohmann::json(fired[i].checkpoint_id) : nlohmann::json(nullptr);
    // The recovery this failure caused is the one that started the next attempt: restored_from[attempt + 1]
    // (other failures, e.g. too many declined checkpoints, add recoveries of their own).
    one["attempt"] = fired[i].attempt;
    injected.push_back(std::move(one));
    by_class[name] = by_class.value(name, 0) + 1;
  }
  summary["failures_injected"] = injected;
  summary["failures_by_class"] = by_class;
}

std::string checkpointing_mode_name(const Configuration& config) {
  if (!checkpointing_enabled(config)) return "none";
  return config.get(options::kCheckpointingMode) == CheckpointingMode::kAtLeastOnce ? "AT_LEAST_ONCE" : "EXACTLY_ONCE";
}

std::string barrier_handling(const Configuration& config) {
  if (checkpointing_enabled(config) && config.get(options::kCheckpointingMode) == CheckpointingMode::kAtLeastOnce) {
    return "barriers tracked, never aligned";
  }
  if (config.get(options::kUnalignedCheckpoints)) {
    const auto timeout = config.get(options::kAlignedCheckpointTimeout);
    return timeout.count() > 0
               ? "aligned barriers, unaligned after a " + std::to_string(timeout.count()) + " ms alignment timeout"
               : "unaligned barriers";
  }
  return "aligned barriers";
}

void print_failures(const nlohmann::json& summary, int32_t inject_failures) {
  if (inject_failures <= 0 || !summary.contains("failures_injected")) return;
  if (summary.contains("stage_runs")) {  // BATCH: a failure re-runs its stage
    std::printf("failures injected: %zu of %d\n", summary["failures_injected"].size(), inject_failures);
    for (const auto& one : summary["failures_injected"]) {
      std::printf("  [%s] vertex %d, subtask index %d -> stage %d re-ran\n", one["class"].get<std::string>().c_str(),
                  one["vertex"].get<int>(), one["subtask"].get<int>(), one["stage"].get<int>());
    }
    std::printf("stage runs: %s\n", summary["stage_runs"].dump().c_str());
    return;
  }
  const size_t fired = summary["failures_injected"].size();
  if (fired < static_cast<size_t>(inject_failures)) {
    // The gate keeps records in front of every armed failure; fewer fire when the job ended first (cancelled,
    // stopped with a savepoint) or a failure could not be armed (printed when it happened).
    std::fprintf(stderr,
                 "warning: only %zu of %d failures fired: the job ended before the others fired, or they could not "
                 "be armed (see above)\n",
                 fired, inject_failures);
  }
  std::printf("failures injected: %zu of %d (", fired, inject_failures);
  const char* sep = "";
  for (runtime::FailurePoint p : runtime::kFailureClasses) {
    std::printf("%s%s %d", sep, runtime::failure_point_name(p), summary["failures_by_class"][runtime::failure_point_name(p)].get<int>());
    sep = ", ";
  }
  std::printf(")\n");
  const auto& restored = summary["restored_from"];
  for (size_t i = 0; i < summary["failures_injected"].size(); ++i) {
    const auto& one = summary["failures_injected"][i];
    std::printf("  failure %zu [%s] vertex %d, subtask index %d", i + 1, one["class"].get<std::string>().c_str(),
                one["vertex"].get<int>(), one["subtask"].get<int>());
    if (!one["checkpoint"].is_null()) std::printf(", checkpoint %lld", one["checkpoint"].get<long long>());
    const size_t recovery = one["attempt"].get<size_t>() + 1;
    if (recovery < restored.size()) std::printf(" -> restored from checkpoint %lld", restored[recovery].get<long long>());
    std::printf("\n");
  }
}

void print_checkpoints(const nlohmann::json& summary, const Configuration& config, bool has_checkpointing_client) {
  // With checkpointing off (interval 0) the job still has a checkpointing client: say "none", not a barrier mode.
  if (has_checkpointing_client && checkpointing_enabled(config) && summary.contains("checkpoints_completed")) {
    std::printf("checkpoints: %lld completed, %lld failed; %d restarts; restored from:",
                summary["checkpoints_completed"].get<long long>(), summary["checkpoints_failed"].get<long long>(),
                summary["restarts"].get<int>());
    for (const auto& id : summary["restored_from"]) std::printf(" %lld", id.get<long long>());
    std::printf(" (per attempt; 0: the beginning of the stream)\n");
    const auto& persisted = summary["checkpoint_stats"]["summary"]["persisted_data_bytes"];
    std::printf("checkpointing mode: %s, %s; persisted in-flight data per checkpoint: avg %.0f bytes, "
                "max %lld bytes\n",
                summary["checkpointing_mode"].get<std::string>().c_str(), barrier_handling(config).c_str(),
                persisted["avg"].get<double>(), persisted["max"].get<long long>());
  } else if (!checkpointing_enabled(config)) {
    std::printf("checkpointing mode: none (checkpointing is off)\n");
  }
}

void print_summary_line(const nlohmann::json& summary, const std::string& what, const char* suffix) {
  std::printf("summary: %lld %s in %.2f s = %.0f events/s, %.0f events per CPU-second, peak RSS %.1f MiB%s\n",
              summary["events"].get<long long>(), what.c_str(), summary["elapsed_s"].get<double>(),
              summary["events_per_s"].get<double>(), summary["events_per_cpu_s"].get<double>(),
              static_cast<double>(summary["peak_rss_bytes"].get<int64_t>()) / (1 << 20), suffix);
}

}  // namespace sluice::cli
