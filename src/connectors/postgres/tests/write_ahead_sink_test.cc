// The write-ahead-log sink on PostgreSQL: at-least-once - no row of the failure-free run missing, nothing else -
// under seeded failures.
#include "pg_test_util.h"
#include "sluice/connectors/postgres/postgres_write_ahead_sink.h"

namespace sluice::postgres::testing {
namespace {

class WriteAheadFailover : public ::testing::TestWithParam<uint64_t> {};

TEST_P(WriteAheadFailover, NoRowLostAndNoneInventedUnderSeededFailures) {
  const uint64_t seed = GetParam();
  const std::string table = fresh_table("wal_counts_" + std::to_string(seed), false);
  JobSpec spec;
  StreamExecutionEnvironment env(failover_config(temp_dir("wal-ck")));
  env.set_parallelism(2);
  PostgresWriteAheadSinkOptions o;
  o.connection = connection_options();
  o.table = table_options(table, WriteMode::kInsert);
  counts_stream(env, spec).sink_to(PostgresWriteAheadSink<Count>(o, encode)).name("sink").uid("sink");
  run_with_failures(env, "wal-failover", spec, seed, 4);
  const auto got = table_rows(table);
  const auto want = expected_counts(spec);
  const std::set<Count> got_set(got.begin(), got.end()), want_set(want.begin(), want.end());
  EXPECT_EQ(got_set, want_set) << "a row is missing or not from the failure-free run";
  std::printf("write-ahead log: %zu rows for %zu distinct (%zu duplicates)\n", got.size(), want.size(),
              got.size() - want.size());
}

INSTANTIATE_TEST_SUITE_P(Seeds, WriteAheadFailover, ::testing::ValuesIn(seeds({1, 2})));

}  // namespace
}  // namespace sluice::postgres::testing
