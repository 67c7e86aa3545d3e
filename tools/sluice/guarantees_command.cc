#include "guarantees_command.h"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "guarantees/embedded_target.h"
#include "guarantees/experiment.h"
#include "guarantees/kafka_target.h"
#include "guarantees/postgres_target.h"

namespace sluice::cli {
namespace {

struct GuaranteesFlags {
  std::string work_dir;
  int32_t runs = 20;
  int64_t records_per_phase = 400;
  int32_t keys = 40;
  uint64_t seed = 1;
  bool keep = false;
  bool verbose = false;
  bool with_postgres = false;
  std::string pg_conninfo;
  bool with_kafka = false;
  std::string kafka_bootstrap;
};

// A server's address: the flag, else the variable `env`, else the file `file` in the folder $`state_env` (written by
// scripts/test-servers/*-start): the way the server tests find their servers.
Result<std::string> server_address(const std::string& flag, const char* flag_name, const char* env,
                                   const char* state_env, const char* file) {
  if (!flag.empty()) return flag;
  if (const char* v = std::getenv(env); v && *v) return std::string(v);
  if (const char* dir = std::getenv(state_env); dir && *dir) {
    std::ifstream in(std::string(dir) + "/" + file);
    std::string line;
    if (in && std::getline(in, line) && !line.empty()) return line;
    return Status::not_found(std::string("no ") + file + " in " + state_env + "=" + dir);
  }
  return Status::invalid_argument(std::string("no server: pass ") + flag_name + ", or set " + env + " or " + state_env);
}

int run_guarantees(const GuaranteesFlags& f) {
  using namespace sluice::guarantees;
  // The injected failures and their recoveries are expected: the engine's log only with --verbose.
  if (!f.verbose) spdlog::set_level(spdlog::level::err);
  ExperimentOptions options;
  options.seeded_runs = f.runs;
  options.seed = f.seed;
  options.run.records_per_phase = f.records_per_phase;
  options.run.keys = f.keys;
  options.run.keep = f.keep;
  std::vector<std::unique_ptr<CellTarget>> targets;
  targets.push_back(std::make_unique<EmbeddedTarget>());
  if (f.with_postgres) {
    auto conninfo =
        server_address(f.pg_conninfo, "--pg-conninfo", "SLUICE_PG_CONNINFO", "SLUICE_PG_STATE_DIR", "conninfo");
    if (!conninfo.is_ok()) {
      std::fprintf(stderr, "error: --with-postgres: %s\n", conninfo.status().to_string().c_str());
      return 2;
    }
    targets.push_back(std::make_unique<PostgresTarget>(*conninfo));
  }
  if (f.with_kafka) {
    auto bootstrap = server_address(f.kafka_bootstrap, "--kafka-bootstrap", "SLUICE_KAFKA_BOOTSTRAP",
                                    "SLUICE_KAFKA_STATE_DIR", "bootstrap");
    if (!bootstrap.is_ok()) {
      std::fprintf(stderr, "error: --with-kafka: %s\n", bootstrap.status().to_string().c_str());
      return 2;
    }
    targets.push_back(std::make_unique<KafkaTarget>(*bootstrap));
  }
  std::string work_dir = f.work_dir;
  bool remove_work_dir = false;
  if (work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    work_dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/sluice-guarantees-" + std::to_string(::getpid());
    remove_work_dir = !f.keep;
  }
  std::error_code ec;
  std::filesystem::create_directories(work_dir, ec);
  if (ec) {
    std::fprintf(stderr, "error: --work-dir %s: %s\n", work_dir.c_str(), ec.message().c_str());
    return 2;
  }
  options.run.work_dir = work_dir;
  if (f.keep) std::printf("keeping every run's folder under %s\n", work_dir.c_str());

  const auto start = std::chrono::steady_clock::now();
  std::vector<Cell> cells;
  for (auto& target : targets) {
    std::printf("target %s:\n", target->name().c_str());
    std::fflush(stdout);
    auto got = run_cells(*target, options, [](const Cell& c) {
      std::printf("  %s source, %s sink: %s\n", source_kind_name(c.source), sink_kind_name(c.sink),
                  c.error.empty() ? guarantee_name(measured_guarantee(c.outcome)) : ("ERROR " + c.error).c_str());
      std::fflush(stdout);
    });
    cells.insert(cells.end(), got.begin(), got.end());
  }
  if (remove_work_dir) std::filesystem::remove_all(work_dir, ec);
  int mismatches = 0;
  std::printf("\n%s", format_table(cells, &mismatches).c_str());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu cells, %d mismatch(es), %.1f s\n", cells.size(), mismatches, secs);
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

void add_guarantees_command(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<GuaranteesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "guarantees", "Measure the table of end-to-end guarantees (docs/guarantees.md): replayable and non-replayable sources x "
                    "plain, idempotent, write-ahead-log and two-phase-commit sinks, under injected failures");
  cmd->add_option("--work-dir", f->work_dir, "Scratch folder for the runs (default: a new one under $TMPDIR)");
  // Range checks here, so a bad value's error names its flag and the accepted range.
  cmd->add_option("--runs", f->runs, "Seeded failure runs per exactly-once cell")
      ->default_val(20)
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--records-per-phase", f->records_per_phase, "Records fed per phase of a run")
      ->default_val(400)
      ->check(CLI::Range(int64_t{2}, int64_t{100000000}));
  cmd->add_option("--keys", f->keys, "Distinct keys of the keyed job")->default_val(40)->check(CLI::Range(1, 100000000));
  cmd->add_option("--seed", f->seed, "First seed of the seeded runs")
      ->default_val(1)
      ->check(CLI::Validator(
          [](std::string& v) {
            uint64_t parsed = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
            return ec == std::errc() && end == v.data() + v.size() && !v.empty()
                       ? std::string()
                       : "'" + v + "' is not a whole number from 0 to " +
                             std::to_string(std::numeric_limits<uint64_t>::max());
          },
          "UINT64"));
  CLI::Option* with_postgres = cmd->add_flag(
      "--with-postgres", f->with_postgres,
      "Also measure the cells on PostgreSQL (plain inserts, upserts, write-ahead log, two-phase commit)");
  cmd->add_option("--pg-conninfo", f->pg_conninfo,
                  "libpq connection string for --with-postgres (default: $SLUICE_PG_CONNINFO, else "
                  "$SLUICE_PG_STATE_DIR/conninfo)")
      ->needs(with_postgres);
  CLI::Option* with_kafka = cmd->add_flag(
      "--with-kafka", f->with_kafka,
      "Also measure the cells on Kafka (at-least-once, keyed upserts read as a table, transactions)");
  cmd->add_option("--kafka-bootstrap", f->kafka_bootstrap,
                  "Kafka bootstrap servers for --with-kafka (default: $SLUICE_KAFKA_BOOTSTRAP, else "
                  "$SLUICE_KAFKA_STATE_DIR/bootstrap)")
      ->needs(with_kafka);
  cmd->add_flag("--verbose", f->verbose, "Show the engine's log (checkpoints, injected failures, recoveries)");
  cmd->add_flag("--keep", f->keep, "Keep every run's folder (checkpoints, output)");
  cmd->callback([f, exit_code] { *exit_code = run_guarantees(*f); });
}

}  // namespace sluice::cli
