// The two-phase-commit sink on the real server: every row exactly once under seeded failures (plain INSERTs, so a
// duplicate or a loss shows), a hot key that every transaction updates, and the recovery steps one by one.
#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include <signal.h>
#include <sys/wait.h>

#include "../../../config/tests/log_capture.h"
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

// True once `writer` reports (prepare_commit rethrows) that its background thread failed, within `timeout_ms`.
bool fails_within(PreparedTransactionWriter& writer, int64_t timeout_ms) {
  for (int64_t waited = 0; waited <= timeout_ms; waited += 20) {
    try {
      (void)writer.prepare_commit();  // no rows buffered: hands nothing over
    } catch (const std::runtime_error& e) {
      std::printf("%s\n", e.what());
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
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

// A zombie - the writer of an earlier attempt, still running in a TaskManager cut off from its JobManager or paused
// (docs/cluster.md), that still reaches the database - whose background thread gets to its transaction only after
// the attempt that took over prepared the transaction of the same name (both name the transaction after checkpoint 5
// by 6): the zombie must not replace it, and it learns that it was fenced. Deterministic: a third session holds the
// gid's advisory lock (the writers take it before they look at the gid) until the new writer waits for it first and
// the zombie, whose session the new writer's start terminated, has reconnected (after its 500 ms backoff).
TEST(TwoPhaseCommitSink, AZombieWriterNeverReplacesTheTransactionOfTheAttemptThatTookOver) {
  const std::string table = fresh_table("tpc_zombie", false);
  const std::string prefix = "zombie-test";
  const std::string gid = prefix + ":0:6";
  query("CREATE TABLE IF NOT EXISTS sluice_transaction_markers (gid text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now())");
  query("DELETE FROM sluice_transaction_markers WHERE gid LIKE 'zombie-test:%'");  // of an earlier run of this test
  const auto o = options(table, WriteMode::kInsert);
  auto zombie_options = o;
  zombie_options.connection.retry.initial_backoff_ms = 500;
  zombie_options.connection.retry.max_backoff_ms = 500;
  auto waiting_for_gid = [&] {
    return query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE " +
                 quote_literal("%pg_advisory_lock(hashtextextended(" + quote_literal(gid) + "%"))[0][0].as<int64_t>();
  };
  auto holder = std::make_unique<pqxx::connection>(conninfo());
  pqxx::nontransaction(*holder).exec("SELECT pg_advisory_lock(hashtextextended(" + quote_literal(gid) + ", 0))");

  PreparedTransactionWriter::Context zombie_ctx{prefix, "run1", 0, 1, true, [] { return int64_t{6}; }, {}};
  zombie_ctx.attempt = 0;
  PreparedTransactionWriter zombie(zombie_options, zombie_ctx);
  zombie.next_row() = {"1", "1"};
  ASSERT_EQ(zombie.prepare_commit().size(), 1u);
  for (int i = 0; i < 500 && waiting_for_gid() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(waiting_for_gid(), 1) << "the zombie's background thread does not wait for the gid";

  PreparedTransactionWriter::Context taker_ctx{prefix, "run1", 0, 1, true, [] { return int64_t{6}; }, {}};
  taker_ctx.attempt = 1;
  PreparedTransactionWriter taker(o, taker_ctx);  // restored from checkpoint 5, as the zombie's attempt was
  taker.next_row() = {"2", "2"};
  const auto taken = taker.prepare_commit();
  ASSERT_EQ(taken.size(), 1u);
  ASSERT_EQ(taken[0].gid, gid);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // the zombie reconnects meanwhile
  ASSERT_GE(waiting_for_gid(), 1) << "the new writer's background thread does not wait for the gid";
  holder.reset();  // the new writer prepares first; then the zombie runs
  for (int i = 0; i < 500 && (waiting_for_gid() > 0 || prepared_count(prefix) < 1); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // what the zombie does, it has done by now

  PreparedTransactionCommitter committer(o);
  committer.commit(taken);
  EXPECT_EQ(table_rows(table), (std::multiset<Count>{{2, 2}})) << "the committed transaction is not the new attempt's";
  EXPECT_EQ(prepared_count(prefix), 0);
  EXPECT_TRUE(fails_within(zombie, 5000)) << "the zombie was not told that a newer attempt fenced it";
  zombie.close();
  taker.close();
}

// The other order: an earlier writer's transaction already holds the fence when the new writer starts (here a session
// of the test, which takes the fence row FOR SHARE as the writers do and is not one their start can terminate). The
// new writer's start waits for it; the transaction is then prepared (after checkpoint 5, which the new writer
// restores: lingering), and the start's next round rolls it back and takes the fence. Its rows never show.
TEST(TwoPhaseCommitSink, ANewWriterTakesTheFenceOnlyOnceNoEarlierTransactionHoldsIt) {
  const std::string table = fresh_table("tpc_fence", false);
  const std::string prefix = "fence-test";
  const auto o = options(table, WriteMode::kInsert);
  PreparedTransactionWriter::Context old_ctx{prefix, "run1", 0, 1, false, [] { return int64_t{1}; }, {}};
  auto old_writer = std::make_unique<PreparedTransactionWriter>(o, old_ctx);  // takes the fence
  pqxx::connection earlier(conninfo());
  pqxx::nontransaction tx(earlier);
  tx.exec("BEGIN");
  ASSERT_EQ(tx.exec("SELECT writer FROM sluice_transaction_fences WHERE prefix = " + quote_literal(prefix) +
                    " AND subtask = 0 FOR SHARE")[0][0].as<std::string>(),
            "run1/0");
  tx.exec("INSERT INTO " + table + " VALUES (9, 9)");

  PreparedTransactionWriter::Context new_ctx{prefix, "run1", 0, 1, true, [] { return int64_t{6}; }, {}};
  new_ctx.attempt = 1;
  auto started = std::async(std::launch::async, [&] { return std::make_unique<PreparedTransactionWriter>(o, new_ctx); });
  EXPECT_EQ(started.wait_for(std::chrono::milliseconds(1500)), std::future_status::timeout)
      << "the new writer started while an earlier transaction held the fence";
  tx.exec("PREPARE TRANSACTION " + quote_literal(prefix + ":0:6"));
  ASSERT_EQ(started.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto new_writer = started.get();
  EXPECT_EQ(new_writer->rolled_back(), (std::vector<std::string>{prefix + ":0:6"}));
  EXPECT_EQ(prepared_count(prefix), 0);
  EXPECT_TRUE(table_rows(table).empty());
  old_writer->next_row() = {"1", "1"};
  (void)old_writer->prepare_commit();  // its background thread finds the fence taken
  EXPECT_TRUE(fails_within(*old_writer, 5000)) << "the earlier writer still prepares";
  EXPECT_EQ(prepared_count(prefix), 0);
  old_writer->close();
  new_writer->close();
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

// A session that ends while the job runs (pg_terminate_backend here; a server restart alike) loses its lock: the
// claim notices within its check interval, says so, and takes the lock again on a new session; when another
// session took it first, the claim names that session, and takes the prefix back once it is free.
TEST(TwoPhaseCommitSinkClaim, ALostSessionIsNoticedAndTheLockTakenAgain) {
  const std::string prefix = "claims-lost-" + std::to_string(::getpid());
  ExclusiveClaim claim = transaction_prefix_claim(connection_options(), prefix, 100);
  auto holder_pid = [] {
    const pqxx::result r = query("SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE "
                                 "l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'sluice job " +
                                 std::string(32, 'e') + "%'");
    return r.empty() ? int64_t{0} : r[0][0].as<int64_t>();
  };
  auto wait_for = [](const std::function<bool()>& done) {
    for (int i = 0; i < 1000; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ::sluice::testing::LogCapture log;
  auto held = claim.take(claimant("e"));
  ASSERT_TRUE(held.is_ok()) << held.status().to_string();
  const int64_t first_pid = holder_pid();
  ASSERT_NE(first_pid, 0);
  const pqxx::result row =
      query("SELECT classid, objid FROM pg_locks WHERE locktype = 'advisory' AND pid = " + std::to_string(first_pid));
  ASSERT_EQ(row.size(), 1u);
  const std::string key = std::to_string(static_cast<int64_t>((row[0][0].as<uint64_t>() << 32) | row[0][1].as<uint64_t>()));

  query("SELECT pg_terminate_backend(" + std::to_string(first_pid) + ")");
  int64_t second_pid = 0;
  ASSERT_TRUE(wait_for([&] { return (second_pid = holder_pid()) != 0 && second_pid != first_pid; }))
      << "the lock was not taken again";
  EXPECT_EQ(claim.take(claimant("f")).status().code(), StatusCode::kFailedPrecondition) << "held again, it refuses";

  // Another session waits for the lock, so it has it the moment the holder's session ends.
  pqxx::connection intruder(conninfo() + " application_name=sluice-claim-intruder");
  auto on_intruder = [&](const std::string& sql) { pqxx::nontransaction(intruder).exec(sql); };
  auto taken = std::async(std::launch::async, [&] { on_intruder("SELECT pg_advisory_lock(" + key + ")"); });
  ASSERT_TRUE(wait_for([&] {
    return !query("SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND "
                  "a.application_name = 'sluice-claim-intruder'")
                .empty();
  }));
  query("SELECT pg_terminate_backend(" + std::to_string(second_pid) + ")");
  taken.get();
  // The claim's next session (it asks who holds the lock on it) shows it noticed.
  ASSERT_TRUE(wait_for([&] {
    const int64_t pid = query("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'sluice job " +
                              std::string(32, 'e') + "%' AND pid <> " + std::to_string(second_pid))[0][0]
                            .as<int64_t>();
    return pid > 0;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few checks while the intruder holds it
  EXPECT_EQ(holder_pid(), 0) << "the claim took a lock another session holds";
  on_intruder("SELECT pg_advisory_unlock(" + key + ")");
  ASSERT_TRUE(wait_for([&] { return holder_pid() != 0; })) << "the claim did not take the freed prefix back";
  held->reset();
  const std::string text = log.text();
  const std::string what = "PostgreSQL transaction prefix '" + prefix + "'";
  EXPECT_NE(text.find("error: postgres sink: the job lost its claim of " + what + ": its session ended"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("error: postgres sink: " + what + " is now held by 'sluice-claim-intruder'"), std::string::npos)
      << text;
  EXPECT_NE(text.find("warning: postgres sink: the job holds its claim of " + what + " again"), std::string::npos)
      << text;
  EXPECT_EQ(holder_pid(), 0) << "released";
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
