// The two-phase-commit sink on the real server: every row exactly once under seeded failures (plain INSERTs, so a
// duplicate or a loss shows), a hot key that every transaction updates, and the recovery steps one by one.
#include <chrono>
#include <future>
#include <thread>

#include <signal.h>
#include <sys/wait.h>

#include "pg_test_util.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"

namespace sluice::postgres::testing {
namespace {

PostgresTwoPhaseCommitSinkOptions options(const std::string& table, WriteMode mode) {
  PostgresTwoPhaseCommitSinkOptions o;
  o.connection = connection_options();
  o.table = table_options(table, mode);
  o.statement_max_rows = 300;
  return o;
}

int64_t prepared_count(const std::string& prefix) {
  return query("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE " + quote_literal(prefix + ":%"))[0][0].as<int64_t>();
}

class TwoPhaseCommitFailover : public ::testing::TestWithParam<uint64_t> {};

TEST_P(TwoPhaseCommitFailover, EveryRowExactlyOnceUnderSeededFailures) {
  const uint64_t seed = GetParam();
  const std::string table = fresh_table("tpc_counts_" + std::to_string(seed), false);
  JobSpec spec;
  StreamExecutionEnvironment env(failover_config(temp_dir("tpc-ck")));
  env.set_parallelism(2);
  counts_stream(env, spec)
      .sink_to(PostgresTwoPhaseCommitSink<Count>(options(table, WriteMode::kInsert), encode))
      .name("sink")
      .uid("sink-" + std::to_string(seed));
  run_with_failures(env, "tpc-failover", spec, seed, 4);
  const auto got = table_rows(table);
  const auto want = expected_counts(spec);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "the table differs from the failure-free output";
  EXPECT_EQ(prepared_count("tpc-failover/sink-" + std::to_string(seed)), 0) << "prepared transactions left behind";
}

INSTANTIATE_TEST_SUITE_P(Seeds, TwoPhaseCommitFailover, ::testing::ValuesIn(seeds({1, 2, 3})));

// One key, updated by every transaction: each transaction's upsert waits for the row lock of the previous,
// prepared one until it commits. Checkpoints keep completing (a task thread blocked on that lock could not take
// the next barrier nor run the commit that frees it), and the final value is right.
TEST(TwoPhaseCommitSink, AHotKeyUpdatedInEveryCheckpointNeverBlocksTheJob) {
  const std::string table = fresh_table("tpc_hot_key", true);
  JobSpec spec;
  spec.keys = 1;
  spec.records = 20'000;
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.dir", temp_dir("hot-ck")).is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  counts_stream(env, spec).sink_to(PostgresTwoPhaseCommitSink<Count>(options(table, WriteMode::kUpsert), encode)).uid("sink");
  auto client = env.execute_async("tpc-hot-key");
  ASSERT_TRUE(client.is_ok());
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  const auto stats = cp->checkpoint_stats();
  std::printf("hot key: %lld checkpoints completed, %lld failed\n", static_cast<long long>(stats.num_completed),
              static_cast<long long>(stats.num_failed));
  EXPECT_GE(stats.num_completed, 10);
  EXPECT_EQ(stats.num_failed, 0);
  EXPECT_EQ(table_finals(table), expected_finals(spec));
}

// The same at the writer's interface, deterministic: transaction 2 touches the key transaction 1 holds prepared;
// handing it over returns at once, and committing 1 then 2 leaves 2's value.
TEST(TwoPhaseCommitSink, PreCommitReturnsWhileTheRowIsLockedByAPreparedTransaction) {
  const std::string table = fresh_table("tpc_lock", true);
  auto o = options(table, WriteMode::kUpsert);
  query("CREATE TABLE IF NOT EXISTS sluice_transaction_markers (gid text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now())");
  query("DELETE FROM sluice_transaction_markers WHERE gid LIKE 'lock-test:%'");  // of an earlier run of this test
  int64_t next = 1;
  PreparedTransactionWriter::Context ctx{"lock-test", "run1", 0, 1, false, [&] { return next; }, {}};
  PreparedTransactionWriter writer(o, ctx);
  PreparedTransactionCommitter committer(o);
  writer.next_row() = {"7", "1"};
  auto t1 = writer.prepare_commit();
  next = 2;
  ASSERT_EQ(t1.size(), 1u);
  // Wait until 1 is prepared (holds the row lock).
  for (int i = 0; i < 500 && prepared_count("lock-test") < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(prepared_count("lock-test"), 1);
  writer.next_row() = {"7", "2"};
  const auto t0 = std::chrono::steady_clock::now();
  auto t2 = writer.prepare_commit();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(prepared_count("lock-test"), 1) << "transaction 2 cannot have prepared while 1 holds the row";
  committer.commit(t1);
  committer.commit(t2);  // waits for 2's PREPARE, then commits it
  EXPECT_EQ(table_finals(table), (std::map<int64_t, int64_t>{{7, 2}}));
  EXPECT_EQ(committer.counts().committed_prepared, 2);
  writer.close();
}

// Recovery, step by step: a committable whose transaction was prepared is committed; one that was never prepared
// is written from its rows; committing either again changes nothing; lingering prepared transactions of the
// subtask are rolled back, those of other subtasks and of the restored state are not.
TEST(TwoPhaseCommitSink, RecoveryCommitsRewritesAndRollsBackOnlyItsOwn) {
  const std::string table = fresh_table("tpc_recovery", false);
  auto o = options(table, WriteMode::kInsert);
  const std::string prefix = "recovery-test";
  auto prepare_by_hand = [&](const std::string& gid, int64_t id) {
    pqxx::connection c(conninfo());
    pqxx::nontransaction tx(c);
    tx.exec("CREATE TABLE IF NOT EXISTS sluice_transaction_markers (gid text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now())");
    tx.exec("BEGIN");
    tx.exec("INSERT INTO " + table + " VALUES (" + std::to_string(id) + ", 0)");
    tx.exec("INSERT INTO sluice_transaction_markers (gid) VALUES (" + quote_literal(gid + "@run1") + ")");
    tx.exec("PREPARE TRANSACTION " + quote_literal(gid));
  };
  query("CREATE TABLE IF NOT EXISTS sluice_transaction_markers (gid text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now())");
  query("DELETE FROM sluice_transaction_markers WHERE gid LIKE 'recovery-test:%'");
  prepare_by_hand(prefix + ":0:4", 4);  // in the restored state: committed
  prepare_by_hand(prefix + ":0:6", 6);  // after the restored checkpoint 5: rolled back
  prepare_by_hand(prefix + ":1:6", 61);  // another subtask's: untouched by subtask 0 of 2
  PreparedTransactionCommitter committer(o);
  std::vector<PreparedTransaction> restored = {{prefix + ":0:4", "run1", {{"4", "0"}}},
                                              {prefix + ":0:5", "run1", {{"5", "0"}}}};
  committer.commit(restored);
  EXPECT_EQ(committer.counts().committed_prepared, 1);
  EXPECT_EQ(committer.counts().rewritten, 1);  // 5 was never prepared: written from its rows
  committer.commit(restored);
  EXPECT_EQ(committer.counts().already_committed, 2);
  int64_t next = 6;
  PreparedTransactionWriter::Context ctx{prefix, "run2", 0, 2, true, [&] { return next; },
                                         {prefix + ":0:4", prefix + ":0:5"}};
  PreparedTransactionWriter writer(o, ctx);
  EXPECT_EQ(writer.rolled_back(), (std::vector<std::string>{prefix + ":0:6"}));
  writer.close();
  EXPECT_EQ(table_rows(table), (std::multiset<Count>{{4, 0}, {5, 0}}));
  EXPECT_EQ(prepared_count(prefix), 1);
  query("ROLLBACK PREPARED " + quote_literal(prefix + ":1:6"));
}

}  // namespace
}  // namespace sluice::postgres::testing

namespace sluice::postgres::testing {
namespace {

ClaimingJob claimant(const std::string& id_digit) {
  ClaimingJob job;
  job.job_name = "claims";
  job.job_id = std::string(32, id_digit[0]);
  job.description = "job 'claims'";
  return job;
}

// The prefix lock: a second holder is refused naming the first's session; released, it can be taken; a holder
// process killed with SIGKILL frees it (its session ends with its socket).
TEST(TwoPhaseCommitSinkClaim, APrefixIsHeldByOneJobAndAKilledHolderFreesIt) {
  const std::string prefix = "claims-" + std::to_string(::getpid());
  ExclusiveClaim claim = transaction_prefix_claim(connection_options(), prefix);
  EXPECT_EQ(claim.what, "PostgreSQL transaction prefix '" + prefix + "'");
  auto first = claim.take(claimant("a"));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto second = claim.take(claimant("b"));
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("is in use by 'sluice job " + std::string(32, 'a') + " pid " +
                                           std::to_string(::getpid()) + "'"),
            std::string::npos)
      << second.status().to_string();
  EXPECT_TRUE(transaction_prefix_claim(connection_options(), prefix + "-other").take(claimant("b")).is_ok())
      << "another prefix is free";
  first->reset();
  // Released by the time reset() returns, not when the server gets round to ending the closed session's backend.
  EXPECT_EQ(query("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = "
                  "'advisory' AND a.application_name LIKE 'sluice job " + std::string(32, 'a') + "%'")[0][0]
                .as<int64_t>(),
            0);
  ASSERT_TRUE(claim.take(claimant("b")).is_ok()) << "released with its holder";

  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = claim.take(claimant("c"));
    const char c = held.is_ok() ? 'y' : 'n';
    (void)::write(ready[1], &c, 1);
    for (;;) ::pause();
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  EXPECT_EQ(claim.take(claimant("d")).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(ready[0]);
  ::close(ready[1]);
  // The server notices the closed socket when it next reads it: at once on a local connection, but poll briefly.
  Result<std::unique_ptr<HeldClaim>> after = Status::internal("not tried");
  for (int i = 0; i < 100 && !after.is_ok(); ++i) {
    after = claim.take(claimant("d"));
    if (!after.is_ok()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(after.is_ok()) << "the killed holder's lock stayed: " << after.status().to_string();
}

// Advisory locks are per database: the same prefix held in another database is another claim, and a refusal names
// the holder in the sink's own database.
TEST(TwoPhaseCommitSinkClaim, AHolderInAnotherDatabaseIsNeitherInTheWayNorNamed) {
  const std::string db = "sluice_claims_" + std::to_string(::getpid());
  query("DROP DATABASE IF EXISTS " + db);
  query("CREATE DATABASE " + db);
  PostgresConnectionOptions other = connection_options();
  other.conninfo = conninfo() + " dbname=" + db;
  const std::string prefix = "claims-db-" + std::to_string(::getpid());
  auto in_other = transaction_prefix_claim(other, prefix).take(claimant("1"));
  ASSERT_TRUE(in_other.is_ok()) << in_other.status().to_string();
  auto here = transaction_prefix_claim(connection_options(), prefix).take(claimant("2"));
  ASSERT_TRUE(here.is_ok()) << "another database's lock was in the way: " << here.status().to_string();
  auto third = transaction_prefix_claim(connection_options(), prefix).take(claimant("3"));
  ASSERT_FALSE(third.is_ok());
  EXPECT_NE(third.status().message().find("'sluice job " + std::string(32, '2')), std::string::npos)
      << third.status().to_string();
  in_other->reset();
  query("DROP DATABASE IF EXISTS " + db);
}

// Two running jobs of one program (same job name and sink uid, so the same prefix): the second is refused at
// submission, before it could roll back the first one's prepared transactions.
TEST(TwoPhaseCommitSinkClaim, ASecondRunningJobWithTheSamePrefixIsRefused) {
  const std::string table = fresh_table("tpc_claims", false);
  const std::string name = "tpc-claims-" + std::to_string(::getpid());
  auto start = [&](const std::string& ck) {
    JobSpec spec;
    spec.records = 1'000'000;
    spec.records_per_second = 200;  // runs until cancelled
    StreamExecutionEnvironment env(failover_config(temp_dir(ck)));
    env.set_parallelism(1);
    counts_stream(env, spec).sink_to(PostgresTwoPhaseCommitSink<Count>(options(table, WriteMode::kInsert), encode)).uid("sink");
    return env.execute_async(name);
  };
  auto first = start("claims-ck-1");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto second = start("claims-ck-2");
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("PostgreSQL transaction prefix '" + name + "/sink' is in use by 'sluice job " +
                                           (*first)->job_id().to_hex()),
            std::string::npos)
      << second.status().to_string();
  (*first)->cancel();
  EXPECT_EQ((*first)->wait().status, JobStatus::kCanceled);
  auto third = start("claims-ck-3");
  ASSERT_TRUE(third.is_ok()) << "the first job ended: " << third.status().to_string();
  (*third)->cancel();
  EXPECT_EQ((*third)->wait().status, JobStatus::kCanceled);
}

}  // namespace
}  // namespace sluice::postgres::testing
