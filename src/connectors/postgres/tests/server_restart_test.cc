// PostgreSQL stopped (as a crash: pg_ctl stop -m immediate) and started again while jobs write: the sinks ride it
// out with retries and backoff (or a task failure and restore when retries run out), and the result is the same
// as without the restart - exactly-once for the upsert and two-phase-commit sinks.
#include <cstdlib>
#include <thread>

#include "pg_test_util.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "sluice/connectors/postgres/postgres_upsert_sink.h"

namespace sluice::postgres::testing {
namespace {

// Restarts the test server (scripts/test-servers/postgres-restart) once the job has emitted `at` records.
void restart_server_at(JobClient& client, const std::string& job, int64_t at) {
  const char* state = std::getenv("SLUICE_PG_STATE_DIR");
  ASSERT_NE(state, nullptr) << "the restart test needs the ctest fixture's server (SLUICE_PG_STATE_DIR)";
  while (!is_globally_terminal(client.status()) &&
         failover_test::records_out(client.metrics(), job + ".numbers.") < at) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Running now, and it cannot finish without the server (its last rows are written at the end): a job that
  // finishes went through the outage.
  ASSERT_FALSE(is_globally_terminal(client.status())) << "the job ended before the server was stopped";
  const std::string cmd = std::string(SLUICE_SOURCE_DIR) + "/scripts/test-servers/postgres-restart " + state + " 1.5";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

template <class MakeSink>
void run_through_a_restart(const std::string& job, MakeSink make_sink) {
  JobSpec spec;
  StreamExecutionEnvironment env(failover_config(temp_dir(job + "-ck")));
  env.set_parallelism(2);
  counts_stream(env, spec).sink_to(make_sink()).name("sink").uid("sink");
  auto client = env.execute_async(job);
  ASSERT_TRUE(client.is_ok());
  restart_server_at(**client, job, spec.records / 3);
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  std::printf("%s: %d restarts of the job across the server restart\n", job.c_str(), cp->restarts());
}

TEST(ServerRestart, UpsertSinkEndsExactlyOnce) {
  const std::string table = fresh_table("restart_upsert", true);
  PostgresUpsertSinkOptions o;
  o.connection = connection_options();
  o.table = table_options(table, WriteMode::kUpsert);
  o.buffer_flush_max_rows = 100;
  run_through_a_restart("restart-upsert", [&] { return PostgresUpsertSink<Count>(o, encode); });
  EXPECT_EQ(table_finals(table), expected_finals(JobSpec{}));
}

TEST(ServerRestart, TwoPhaseCommitSinkEndsExactlyOnce) {
  const std::string table = fresh_table("restart_tpc", false);
  PostgresTwoPhaseCommitSinkOptions o;
  o.connection = connection_options();
  o.table = table_options(table, WriteMode::kInsert);
  run_through_a_restart("restart-tpc", [&] { return PostgresTwoPhaseCommitSink<Count>(o, encode); });
  EXPECT_TRUE(table_rows(table) == expected_counts(JobSpec{})) << "rows lost or duplicated across the restart";
}

}  // namespace
}  // namespace sluice::postgres::testing
