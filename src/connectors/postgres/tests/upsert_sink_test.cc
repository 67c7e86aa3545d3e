// The idempotent upsert sink on the real server: the final table equals the failure-free run's under seeded
// failures of every class.
#include "pg_test_util.h"
#include "sluice/connectors/postgres/postgres_upsert_sink.h"

namespace sluice::postgres::testing {
namespace {

class UpsertSinkFailover : public ::testing::TestWithParam<uint64_t> {};

TEST_P(UpsertSinkFailover, FinalTableEqualsTheFailureFreeRun) {
  const uint64_t seed = GetParam();
  const std::string table = fresh_table("upsert_counts_" + std::to_string(seed), true);
  JobSpec spec;
  StreamExecutionEnvironment env(failover_config(temp_dir("upsert-ck")));
  env.set_parallelism(2);
  PostgresUpsertSinkOptions o;
  o.connection = connection_options();
  o.table = table_options(table, WriteMode::kUpsert);
  o.buffer_flush_max_rows = 200;
  counts_stream(env, spec).sink_to(PostgresUpsertSink<Count>(o, encode)).name("sink").uid("sink");
  run_with_failures(env, "upsert-failover", spec, seed, 3);
  EXPECT_EQ(table_finals(table), expected_finals(spec));
}

INSTANTIATE_TEST_SUITE_P(Seeds, UpsertSinkFailover, ::testing::ValuesIn(seeds({1, 2})));

TEST(UpsertSink, BadTableFailsTheJobNamingTheTable) {
  StreamExecutionEnvironment env;
  PostgresUpsertSinkOptions o;
  o.connection = connection_options();
  o.table = table_options("no_such_table_here", WriteMode::kUpsert);
  env.from_generator(10, [](int64_t i) { return Count{i, i}; }).sink_to(PostgresUpsertSink<Count>(o, encode)).uid("sink");
  auto r = env.execute("upsert-bad-table");
  const std::string error = r.is_ok() ? r->error.to_string() : r.status().to_string();
  EXPECT_TRUE(!r.is_ok() || r->status == JobStatus::kFailed);
  EXPECT_NE(error.find("no_such_table_here"), std::string::npos) << error;
}

}  // namespace
}  // namespace sluice::postgres::testing
