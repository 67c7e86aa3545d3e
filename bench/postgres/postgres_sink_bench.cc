// Throughput of the PostgreSQL sinks next to a plain batched INSERT loop on one connection.
// Prints one JSON object on stdout (progress on stderr). See README.md.
#include <pqxx/pqxx>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "../common/bench_util.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "sluice/connectors/postgres/postgres_upsert_sink.h"
#include "sluice/connectors/postgres/postgres_write_ahead_sink.h"
#include "sluice/sluice.h"

namespace {

using namespace sluice;
using namespace sluice::postgres;
using Count = std::pair<int64_t, int64_t>;

struct Flags {
  std::string conninfo;
  int64_t rows = 300'000;
  int64_t keys = 0;  // 0: as many as rows (every row a new key: no compaction of upserts within a transaction)
  int64_t batch = 1'000;
  int64_t interval_ms = 200;
  int64_t repeat = 3;
};

void exec(const std::string& conninfo, const std::string& sql) {
  pqxx::connection c(conninfo);
  pqxx::nontransaction tx(c);
  tx.exec(sql);
}

void fresh_table(const Flags& f, const std::string& name, bool keyed) {
  exec(f.conninfo, "DROP TABLE IF EXISTS " + name);
  exec(f.conninfo, "CREATE TABLE " + name + " (id bigint" + (keyed ? " PRIMARY KEY" : "") + ", n bigint NOT NULL)");
}

PostgresTableOptions table(const std::string& name, WriteMode mode) {
  PostgresTableOptions t;
  t.table = name;
  t.columns = {"id", "n"};
  t.key_columns = {"id"};
  t.mode = mode;
  return t;
}

void encode(const Count& c, Row& row) {
  row.push_back(std::to_string(c.first));
  row.push_back(std::to_string(c.second));
}

// The baseline: the same rows, batched into the same statements, in a loop over one connection (autocommit).
double baseline_seconds(const Flags& f, WriteMode mode) {
  const std::string name = mode == WriteMode::kUpsert ? "bench_baseline_upsert" : "bench_baseline_insert";
  fresh_table(f, name, mode == WriteMode::kUpsert);
  const auto t = table(name, mode);
  pqxx::connection c(f.conninfo);
  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  for (int64_t i = 0; i < f.rows; ++i) {
    rows.emplace_back();
    encode({i % f.keys, i}, rows.back());
    if (static_cast<int64_t>(rows.size()) == f.batch || i + 1 == f.rows) {
      pqxx::nontransaction tx(c);
      tx.exec(build_write_statement(t, last_row_per_key(t, std::move(rows))));
      rows.clear();
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A job: generator (as fast as it goes) -> (i % keys, i) -> sink, parallelism 1, checkpoints every interval_ms.
template <class S>
double job_seconds(const Flags& f, const std::string& name, S sink) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("pg-bench-" + std::to_string(::getpid()))).string();
  Configuration config;
  (void)config.set_string("execution.checkpointing.interval", std::to_string(f.interval_ms) + "ms");
  (void)config.set_string("execution.checkpointing.dir", dir);
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  const int64_t keys = f.keys;
  env.from_generator(f.rows, [keys](int64_t i) { return Count{i % keys, i}; }).name("rows").uid("rows").sink_to(std::move(sink)).uid(name);
  auto r = env.execute(name);
  std::filesystem::remove_all(dir);
  if (!r.is_ok() || r->status != JobStatus::kFinished) {
    std::cerr << name << " failed: " << (r.is_ok() ? r->error.to_string() : r.status().to_string()) << "\n";
    std::exit(1);
  }
  return static_cast<double>(r->runtime_ms) / 1000.0;
}

PostgresConnectionOptions conn(const Flags& f) {
  PostgresConnectionOptions c;
  c.conninfo = f.conninfo;
  return c;
}

double run_case(const Flags& f, const std::string& which, WriteMode mode) {
  const std::string name = "bench_" + which + (mode == WriteMode::kUpsert ? "_upsert" : "_insert");
  if (which == "baseline") return baseline_seconds(f, mode);
  fresh_table(f, name, mode == WriteMode::kUpsert);
  if (which == "upsert_sink") {
    PostgresUpsertSinkOptions o{conn(f), table(name, mode), static_cast<int32_t>(f.batch)};
    return job_seconds(f, name, PostgresUpsertSink<Count>(o, encode));
  }
  if (which == "two_phase_commit_sink") {
    PostgresTwoPhaseCommitSinkOptions o;
    o.connection = conn(f);
    o.table = table(name, mode);
    o.statement_max_rows = static_cast<int32_t>(f.batch);
    return job_seconds(f, name, PostgresTwoPhaseCommitSink<Count>(o, encode));
  }
  PostgresWriteAheadSinkOptions o;
  o.connection = conn(f);
  o.table = table(name, mode);
  o.statement_max_rows = static_cast<int32_t>(f.batch);
  return job_seconds(f, name, PostgresWriteAheadSink<Count>(o, encode));
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("postgres_sink_bench"));  // stdout carries the JSON
  Flags f;
  if (const char* e = std::getenv("SLUICE_PG_CONNINFO")) f.conninfo = e;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], v = argv[i + 1];
    auto num = [&](int64_t min, int64_t max) {
      auto r = bench::parse_int<int64_t>(flag, v, min, max);
      if (!r.is_ok()) {
        std::cerr << r.status().to_string() << "\n";
        std::exit(2);
      }
      return *r;
    };
    if (flag == "--conninfo") f.conninfo = v;
    else if (flag == "--rows") f.rows = num(1, 1'000'000'000);
    else if (flag == "--keys") f.keys = num(0, 1'000'000'000);
    else if (flag == "--batch") f.batch = num(1, 100'000);
    else if (flag == "--interval-ms") f.interval_ms = num(10, 600'000);
    else if (flag == "--repeat") f.repeat = num(1, 100);
    else {
      std::cerr << "unknown flag " << flag << " (see bench/postgres/README.md)\n";
      return 2;
    }
  }
  if (f.conninfo.empty()) {
    std::cerr << "postgres_sink_bench: no server: pass --conninfo or set SLUICE_PG_CONNINFO "
                 "(scripts/test-servers/postgres-start STATE_DIR; . STATE_DIR/env)\n";
    return 2;
  }
  if (f.keys == 0) f.keys = f.rows;
  nlohmann::json out;
  out["config"] = {{"rows", f.rows}, {"keys", f.keys}, {"batch", f.batch}, {"interval_ms", f.interval_ms},
                   {"repeat", f.repeat}, {"parallelism", 1}};
  for (WriteMode mode : {WriteMode::kUpsert, WriteMode::kInsert}) {
    const std::string m = mode == WriteMode::kUpsert ? "upsert" : "insert";
    for (const std::string which : {"baseline", "upsert_sink", "two_phase_commit_sink", "write_ahead_sink"}) {
      if (which == "upsert_sink" && mode == WriteMode::kInsert) continue;  // not idempotent: not a use of it
      std::vector<double> rates;
      for (int64_t r = 0; r < f.repeat; ++r) {
        const double s = run_case(f, which, mode);
        rates.push_back(static_cast<double>(f.rows) / s);
        std::cerr << m << " " << which << ": " << static_cast<int64_t>(rates.back()) << " rows/s\n";
      }
      out[m][which] = {{"rows_per_second_median", bench::median(rates)}, {"rows_per_second", rates}};
    }
    const double base = out[m]["baseline"]["rows_per_second_median"];
    for (auto& [k, v] : out[m].items()) v["vs_baseline"] = v["rows_per_second_median"].get<double>() / base;
  }
  std::cout << out.dump(2) << std::endl;
  return 0;
}
