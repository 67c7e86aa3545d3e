// Helpers of the PostgreSQL sink tests (label postgres): the server, tables, and a keyed job whose failure-free
// output is known (running counts per key), run with seeded injected failures (tests/integration/seeded_failover.h).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <pqxx/pqxx>

#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../../../../tests/integration/seeded_failover.h"
#include "cluster/mini_cluster.h"
#include "sluice/connectors/postgres/postgres_options.h"
#include "sluice/sluice.h"
#include "test_servers.h"

namespace sluice::postgres::testing {

inline std::string conninfo() { return sluice::testing::postgres_test_server().address; }

inline pqxx::result query(const std::string& sql) {
  pqxx::connection c(conninfo());
  pqxx::nontransaction tx(c);
  return tx.exec(sql);
}

// A fresh table "<name>" (id bigint, n bigint), with a primary key on id when `keyed`. Prepared transactions an
// interrupted earlier run of these tests left behind are rolled back first: they would hold locks on the table
// (the tests of one program run one at a time, and no other program uses this server's prepared transactions).
inline std::string fresh_table(const std::string& name, bool keyed) {
  for (const auto& r : query("SELECT gid FROM pg_prepared_xacts")) {
    query("ROLLBACK PREPARED " + quote_literal(r[0].c_str()));
  }
  query("DROP TABLE IF EXISTS " + name);
  query("CREATE TABLE " + name + " (id bigint" + (keyed ? " PRIMARY KEY" : " NOT NULL") + ", n bigint NOT NULL)");
  return name;
}

inline PostgresTableOptions table_options(const std::string& name, WriteMode mode) {
  PostgresTableOptions t;
  t.table = name;
  t.columns = {"id", "n"};
  t.key_columns = {"id"};
  t.mode = mode;
  return t;
}

inline PostgresConnectionOptions connection_options() {
  PostgresConnectionOptions c;
  c.conninfo = conninfo();
  c.retry.max_attempts = 40;  // rides out a server restart (about 1.5 s down plus recovery)
  c.retry.initial_backoff_ms = 20;
  c.retry.max_backoff_ms = 500;
  return c;
}

using Count = std::pair<int64_t, int64_t>;  // (key, running count)

inline void encode(const Count& c, Row& row) {
  row.push_back(std::to_string(c.first));
  row.push_back(std::to_string(c.second));
}

// Emits (key, number of records of that key so far) per record.
struct RunningCount final : KeyedProcessFunction<int64_t, int64_t, Count> {
  ValueState<int64_t>* count = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const int64_t&, KeyedProcessContext<int64_t>& ctx, Collector<Count>& out) override {
    const int64_t n = count->value().value_or(0) + 1;
    count->update(n);
    out.collect(Count{ctx.current_key(), n});
  }
};

struct JobSpec {
  int64_t records = 30'000;
  int64_t keys = 50;
  double records_per_second = 20'000;  // slow enough for failures and checkpoints to land while records flow
  std::string checkpoint_dir;
};

// The counts job up to the keyed operator: numbers -> key v % keys -> running count.
inline auto counts_stream(StreamExecutionEnvironment& env, const JobSpec& spec) {
  const int64_t keys = spec.keys;
  return env.from_generator(spec.records, [](int64_t i) { return i; }, spec.records_per_second)
      .name("numbers")
      .uid("numbers")
      .key_by([keys](const int64_t& v) { return v % keys; })
      .process(RunningCount{})
      .name("counts")
      .uid("counts");
}

inline Configuration failover_config(const std::string& checkpoint_dir) {
  Configuration config;
  failover_test::configure_failover(config, checkpoint_dir);
  return config;
}

inline std::string temp_dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "pg-" + std::to_string(::getpid()) + "-" + name;
  std::filesystem::remove_all(d);
  return d;
}

// The failure-free output: every (key, count) once.
inline std::multiset<Count> expected_counts(const JobSpec& spec) {
  std::multiset<Count> out;
  std::map<int64_t, int64_t> n;
  for (int64_t v = 0; v < spec.records; ++v) out.insert({v % spec.keys, ++n[v % spec.keys]});
  return out;
}
// The failure-free final table of an upsert: the last count per key.
inline std::map<int64_t, int64_t> expected_finals(const JobSpec& spec) {
  std::map<int64_t, int64_t> n;
  for (int64_t v = 0; v < spec.records; ++v) ++n[v % spec.keys];
  return n;
}

inline std::multiset<Count> table_rows(const std::string& table) {
  std::multiset<Count> out;
  for (const auto& r : query("SELECT id, n FROM " + table)) out.insert({r[0].as<int64_t>(), r[1].as<int64_t>()});
  return out;
}
inline std::map<int64_t, int64_t> table_finals(const std::string& table) {
  std::map<int64_t, int64_t> out;
  for (const auto& r : query("SELECT id, n FROM " + table)) out[r[0].as<int64_t>()] = r[1].as<int64_t>();
  return out;
}

// Runs the job built into `env` with `failures` seeded failures; returns the client after it finished.
inline void run_with_failures(StreamExecutionEnvironment& env, const std::string& name, const JobSpec& spec,
                              uint64_t seed, int32_t failures) {
  std::printf("%s: seed %llu, %d failures\n", name.c_str(), static_cast<unsigned long long>(seed), failures);
  auto client = env.execute_async(name);
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);
  const auto progress = [&] { return failover_test::records_out((*client)->metrics(), name + ".numbers."); };
  failover_test::inject_seeded_failures(**client, *cp, seed, failures, spec.records, progress, name);
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  EXPECT_EQ(static_cast<int32_t>(cp->injected_failures().size()), failures);
}

// Seeds of the failure tests: SLUICE_PG_FAILOVER_SEEDS ("1,2"), else `defaults`.
inline std::vector<uint64_t> seeds(std::vector<uint64_t> defaults) {
  const char* env = std::getenv("SLUICE_PG_FAILOVER_SEEDS");
  if (env == nullptr || *env == '\0') return defaults;
  std::vector<uint64_t> out;
  std::string s(env);
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(std::stoull(s.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

}  // namespace sluice::postgres::testing
