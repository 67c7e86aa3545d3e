// nexmark_engine_bench: the engine's Nexmark jobs next to the hand-written baseline loops, in one process,
// on the same events. Prints one JSON object to stdout (progress goes to stderr). See README.md.
//
//   nexmark_engine_bench [--events N] [--parallelism P] [--repeat R] [--only NAME] [--verify]
//
// Two sections: "cases" (q0, q1, q2, keyed_count: jobs written for the benchmark, engine_jobs.h) and "queries"
// (every query of the registry, examples/nexmark/queries.h, at declared rates 10 M/s and 100 K/s; the windowed
// q5, q7 and q8 next to their loops in baseline_loops.h).
//
// Per case and repeat: one engine run (CPU = getrusage(RUSAGE_SELF) user + sys delta around
// env.execute(), i.e. every thread of the process; wall = steady clock around the same call), then one
// baseline run (the same delta around the single-threaded loop). Engine and baseline alternate so that a
// change in machine load hits both alike. Reported figures are medians over the repeats; ratio is
// engine / baseline events per CPU-second.
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../baseline/baseline_loops.h"
#include "queries.h"
#include "engine_jobs.h"
#include "../common/bench_util.h"

#ifndef SLUICE_BENCH_BUILD_TYPE
#define SLUICE_BENCH_BUILD_TYPE "unknown"
#endif

namespace sluice::bench {
namespace {

using Json = nlohmann::ordered_json;

struct Options {
  int64_t events = 5'000'000;
  int32_t parallelism = 1;
  int32_t repeat = 3;
  std::optional<BenchCase> only;
  std::string only_query;  // a registry query name: only that query (and no case)
  bool verify = false;  // one extra, unmeasured engine run per case whose output is checked against the loop
};

constexpr const char* kUsage =
    "usage: nexmark_engine_bench [--events N] [--parallelism P] [--repeat R] [--only NAME] [--verify]\n"
    "  --events N       events per run (default 5000000, >= 1)\n"
    "  --parallelism P  parallelism of every engine operator (default 1, 1..64)\n"
    "  --repeat R       runs per case; figures are medians (default 3, 1..100)\n"
    "  --only NAME      run one case (q0, q1, q2, keyed_count) or one registered query (query:qN, e.g. query:q5)\n"
    "  --verify         also check each engine job's output against its baseline loop (exit 1 on mismatch)\n";

Result<Options> parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--verify") {
      o.verify = true;
      continue;
    }
    if (a == "--help" || a == "-h") return Status::invalid_argument("help");
    if (a != "--events" && a != "--parallelism" && a != "--repeat" && a != "--only") {
      return Status::invalid_argument("unknown argument '" + std::string(a) + "'");
    }
    if (i + 1 >= argc) return Status::invalid_argument(std::string(a) + ": expected a value after it");
    const std::string_view v = argv[++i];
    if (a == "--events") {
      SLUICE_ASSIGN_OR_RETURN(o.events, parse_int<int64_t>(a, v, 1, int64_t{1} << 40));
    } else if (a == "--parallelism") {
      SLUICE_ASSIGN_OR_RETURN(o.parallelism, parse_int<int32_t>(a, v, 1, 64));
    } else if (a == "--repeat") {
      SLUICE_ASSIGN_OR_RETURN(o.repeat, parse_int<int32_t>(a, v, 1, 100));
    } else if (v.rfind("query:", 0) == 0) {
      o.only_query = std::string(v.substr(6));
      if (nexmark::queries::find_query(o.only_query) == nullptr) {
        return Status::invalid_argument("--only: unknown query '" + o.only_query + "'; expected one of " +
                                        nexmark::queries::query_names());
      }
    } else {
      for (BenchCase c : kAllCases)
        if (case_name(c) == v) o.only = c;
      if (!o.only) {
        return Status::invalid_argument("--only: expected q0, q1, q2, keyed_count or query:qN, got '" +
                                        std::string(v) + "'");
      }
    }
  }
  return o;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Run {
  double cpu_s = 0;
  double wall_s = 0;
  double job_cpu_s = 0;  // JobExecutionResult::cpu_seconds (engine runs only)
};

// Medians of a side's runs. A run too short for the rusage clock (microseconds) still gives a finite rate.
Json summarize(const std::vector<Run>& runs, int64_t events, bool engine) {
  constexpr double kMinSeconds = 1e-6;
  std::vector<double> cpu, wall, per_cpu, per_wall, job_cpu;
  Json list = Json::array();
  for (const Run& r : runs) {
    cpu.push_back(r.cpu_s);
    wall.push_back(r.wall_s);
    per_cpu.push_back(static_cast<double>(events) / std::max(r.cpu_s, kMinSeconds));
    per_wall.push_back(static_cast<double>(events) / std::max(r.wall_s, kMinSeconds));
    job_cpu.push_back(r.job_cpu_s);
    Json j = {{"cpu_s", r.cpu_s}, {"wall_s", r.wall_s}};
    if (engine) j["job_cpu_s"] = r.job_cpu_s;
    list.push_back(std::move(j));
  }
  Json s = {{"events_per_cpu_s", median(per_cpu)}, {"events_per_wall_s", median(per_wall)},
            {"cpu_s", median(cpu)},                {"wall_s", median(wall)}};
  if (engine) s["job_cpu_s"] = median(job_cpu);
  s["runs"] = std::move(list);
  return s;
}

Result<Run> run_engine(BenchCase c, const EngineJobConfig& cfg, const std::shared_ptr<VerifyTotals>& verify) {
  StreamExecutionEnvironment env;
  build_job(env, c, cfg, verify);
  const double cpu0 = process_cpu_seconds();
  const double wall0 = wall_seconds();
  auto result = env.execute("nexmark-" + std::string(case_name(c)));
  const double wall1 = wall_seconds();
  const double cpu1 = process_cpu_seconds();
  if (!result.is_ok()) return result.status().with_context("executing " + std::string(case_name(c)));
  if (result->status != JobStatus::kFinished) {
    return Status::internal(std::string("job ") + std::string(case_name(c)) + " ended " +
                            job_status_name(result->status) + ": " + result->error.to_string());
  }
  return Run{cpu1 - cpu0, wall1 - wall0, result->cpu_seconds};
}

QueryOutput baseline_loop(BenchCase c, const nexmark::Generator& g, int64_t events) {
  switch (c) {
    case BenchCase::kQ0: return baseline_q0(g, events);
    case BenchCase::kQ1: return baseline_q1(g, events);
    case BenchCase::kQ2: return baseline_q2(g, events);
    case BenchCase::kKeyedCount: return baseline_keyed_count(g, events);
  }
  return {};
}

// The engine's expected output: q0 sinks every event (the loop counts only bids); the others match.
QueryOutput expected_engine_output(BenchCase c, const QueryOutput& baseline, int64_t events) {
  if (c == BenchCase::kQ0) return QueryOutput{events, 0, 0};
  return baseline;
}

Json output_json(const QueryOutput& q, BenchCase c) {
  Json j = {{"outputs", q.outputs}};
  if (c == BenchCase::kKeyedCount) {
    j["keys"] = q.keys;
    j["digest"] = q.digest;
  }
  return j;
}

template <class F>
Run measure(F&& fn) {
  const double cpu0 = process_cpu_seconds();
  const double wall0 = wall_seconds();
  fn();
  const double wall1 = wall_seconds();
  const double cpu1 = process_cpu_seconds();
  return Run{cpu1 - cpu0, wall1 - wall0, 0};
}

// ---- the registry's queries ------------------------------------------------------------------------------

struct Rate {
  const char* label;
  double per_s;
};
constexpr Rate kRates[] = {{"10M", 10'000'000}, {"100K", 100'000}};

// The loop of a registered query, where one exists, and the target ratio (README.md: q5, q7 >= 0.20, q8 >= 0.30).
struct QueryLoop {
  QueryOutput (*loop)(const nexmark::Generator&, int64_t) = nullptr;
  double target = 0;
};
QueryLoop query_loop(const std::string& name) {
  if (name == "q5") return {baseline_q5, 0.20};
  if (name == "q7") return {baseline_q7, 0.20};
  if (name == "q8") return {baseline_q8, 0.30};
  return {};
}

nexmark::GeneratorConfig query_generator_config(double rate, int64_t events) {
  nexmark::GeneratorConfig g = bench_generator_config(events);
  g.declared_rate_per_s = rate;
  return g;
}

// One engine run of a registered query (heap state, no checkpoints, output counted and dropped).
Result<Run> run_query(const nexmark::queries::Query& q, double rate, const Options& opt, int64_t* rows) {
  StreamExecutionEnvironment env;
  env.set_parallelism(opt.parallelism);
  nexmark::NexmarkSourceOptions source;
  source.generator = query_generator_config(rate, opt.events);
  source.num_splits = opt.parallelism;
  auto handle = q.add(nexmark::queries::nexmark_events(env, source), {nexmark::queries::OutputMode::kDiscard, ""});
  const double cpu0 = process_cpu_seconds();
  const double wall0 = wall_seconds();
  auto result = env.execute("nexmark-" + q.name);
  const double wall1 = wall_seconds();
  const double cpu1 = process_cpu_seconds();
  if (!result.is_ok()) return result.status().with_context("executing " + q.name);
  if (result->status != JobStatus::kFinished) {
    return Status::internal("job " + q.name + " ended " + job_status_name(result->status) + ": " +
                            result->error.to_string());
  }
  *rows = handle->output_rows();
  return Run{cpu1 - cpu0, wall1 - wall0, result->cpu_seconds};
}

// "queries": {name: {rate label: {engine, [baseline, ratio, ratio_wall, target, meets_target], output_rows,
// [baseline_output_rows, verified]}}}. Returns false when --verify found a difference or a run failed.
bool run_queries(const Options& opt, Json& out) {
  bool ok = true;
  out = Json::object();
  for (const nexmark::queries::Query& q : nexmark::queries::all_queries()) {
    if (!opt.only_query.empty() && opt.only_query != q.name) continue;
    const QueryLoop loop = query_loop(q.name);
    Json per_rate = Json::object();
    for (const Rate& rate : kRates) {
      const nexmark::Generator generator(query_generator_config(rate.per_s, -1));
      std::vector<Run> engine_runs, baseline_runs;
      int64_t rows = 0;
      QueryOutput loop_out;
      for (int32_t r = 0; r < opt.repeat; ++r) {
        std::fprintf(stderr, "query %s at %s/s: run %d/%d\n", q.name.c_str(), rate.label, r + 1, opt.repeat);
        auto e = run_query(q, rate.per_s, opt, &rows);
        if (!e.is_ok()) {
          std::fprintf(stderr, "nexmark_engine_bench: %s\n", e.status().to_string().c_str());
          return false;
        }
        engine_runs.push_back(*e);
        if (loop.loop != nullptr) {
          baseline_runs.push_back(measure([&] { loop_out = loop.loop(generator, opt.events); }));
        }
      }
      Json rj;
      rj["engine"] = summarize(engine_runs, opt.events, true);
      rj["output_rows"] = rows;
      if (loop.loop != nullptr) {
        rj["baseline"] = summarize(baseline_runs, opt.events, false);
        rj["baseline_output_rows"] = loop_out.outputs;
        const double ratio =
            rj["engine"]["events_per_cpu_s"].get<double>() / rj["baseline"]["events_per_cpu_s"].get<double>();
        rj["ratio"] = ratio;
        rj["ratio_wall"] =
            rj["engine"]["events_per_wall_s"].get<double>() / rj["baseline"]["events_per_wall_s"].get<double>();
        rj["target"] = loop.target;
        rj["meets_target"] = ratio >= loop.target;
        if (opt.verify) {
          // The engine's row count must equal the loop's (sluice nexmark --verify compares the rows themselves).
          rj["verified"] = rows == loop_out.outputs;
          if (rows != loop_out.outputs) {
            ok = false;
            std::fprintf(stderr, "query %s at %s/s: engine emitted %lld rows, the loop %lld\n", q.name.c_str(),
                         rate.label, static_cast<long long>(rows), static_cast<long long>(loop_out.outputs));
          }
        }
      }
      per_rate[rate.label] = std::move(rj);
    }
    out[q.name] = std::move(per_rate);
  }
  return ok;
}

int run(const Options& opt) {
  const EngineJobConfig cfg{opt.events, opt.parallelism};
  const nexmark::Generator generator(bench_generator_config(-1));  // the baselines' default config
  bool all_verified = true;

  Json out;
  out["benchmark"] = "nexmark_engine_bench";
  out["schema_version"] = 1;
  out["config"] = {{"events", opt.events},
                   {"parallelism", opt.parallelism},
                   {"repeat", opt.repeat},
                   {"seed", generator.config().seed},
                   {"declared_rate_per_s", generator.config().declared_rate_per_s},
                   {"num_splits", opt.parallelism},
                   {"build_type", SLUICE_BENCH_BUILD_TYPE},
                   {"hardware_threads", std::thread::hardware_concurrency()},
                   {"verify", opt.verify}};

  // The ceiling: generating the events alone.
  std::vector<Run> gen_runs;
  for (int32_t r = 0; r < opt.repeat; ++r) {
    gen_runs.push_back(measure([&] { benchmark::DoNotOptimize(baseline_generator(generator, opt.events)); }));
  }
  out["reference"] = {{"generator_events_per_cpu_s", summarize(gen_runs, opt.events, false)["events_per_cpu_s"]}};

  out["cases"] = Json::object();
  for (BenchCase c : kAllCases) {
    if ((opt.only && *opt.only != c) || !opt.only_query.empty()) continue;
    const std::string name(case_name(c));
    std::vector<Run> engine_runs, baseline_runs;
    QueryOutput baseline_out;
    for (int32_t r = 0; r < opt.repeat; ++r) {
      std::fprintf(stderr, "%s: run %d/%d\n", name.c_str(), r + 1, opt.repeat);
      auto e = run_engine(c, cfg, nullptr);
      if (!e.is_ok()) {
        std::fprintf(stderr, "nexmark_engine_bench: %s\n", e.status().to_string().c_str());
        return 1;
      }
      engine_runs.push_back(*e);
      baseline_runs.push_back(measure([&] { baseline_out = baseline_loop(c, generator, opt.events); }));
    }
    Json cj;
    cj["engine"] = summarize(engine_runs, opt.events, true);
    cj["baseline"] = summarize(baseline_runs, opt.events, false);
    cj["baseline_output"] = output_json(baseline_out, c);
    const double ratio = cj["engine"]["events_per_cpu_s"].get<double>() / cj["baseline"]["events_per_cpu_s"].get<double>();
    cj["ratio"] = ratio;
    cj["ratio_wall"] =
        cj["engine"]["events_per_wall_s"].get<double>() / cj["baseline"]["events_per_wall_s"].get<double>();
    cj["target"] = target_ratio(c);
    cj["meets_target"] = ratio >= target_ratio(c);
    if (opt.verify) {
      std::fprintf(stderr, "%s: verification run\n", name.c_str());
      auto totals = std::make_shared<VerifyTotals>();
      auto e = run_engine(c, cfg, totals);
      if (!e.is_ok()) {
        std::fprintf(stderr, "nexmark_engine_bench: %s\n", e.status().to_string().c_str());
        return 1;
      }
      const QueryOutput got = totals->total();
      const QueryOutput want = expected_engine_output(c, baseline_out, opt.events);
      cj["engine_output"] = output_json(got, c);
      cj["verified"] = got == want;
      if (!(got == want)) {
        all_verified = false;
        std::fprintf(stderr, "%s: engine output differs from the baseline loop's (outputs %lld, expected %lld)\n",
                     name.c_str(), static_cast<long long>(got.outputs), static_cast<long long>(want.outputs));
      }
    }
    out["cases"][name] = std::move(cj);
  }
  Json queries = Json::object();
  if (!opt.only) all_verified = run_queries(opt, queries) && all_verified;
  out["queries"] = std::move(queries);
  std::cout << out.dump(2) << std::endl;
  return all_verified ? 0 : 1;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  auto opt = sluice::bench::parse_args(argc, argv);
  if (!opt.is_ok()) {
    if (opt.status().message() != "help") std::fprintf(stderr, "nexmark_engine_bench: %s\n", opt.status().message().c_str());
    std::fputs(sluice::bench::kUsage, stderr);
    return opt.status().message() == "help" ? 0 : 2;
  }
  return sluice::bench::run(*opt);
}
