// The exactly-once PostgreSQL sink: one transaction per subtask and checkpoint, pre-committed with
// PREPARE TRANSACTION and committed with COMMIT PREPARED when the checkpoint completes (DESIGN.md "Sinks"; the
// two-phase commit on PostgreSQL's prepared transactions; max_prepared_transactions must be > 0).
//
// Protocol, per subtask:
//  - Records are encoded to rows and buffered on the task thread. At checkpoint n's barrier the rows become
//    transaction <prefix>:<subtask>:<n> (its global id, gid); the committable - the gid and the rows - goes
//    into the checkpoint. A background thread with its own connection writes the rows in that transaction,
//    inserts its marker (gid and run id) into the marker table, and runs PREPARE TRANSACTION. The task thread never executes a
//    statement that can wait for a row lock: a prepared transaction keeps its row locks until COMMIT PREPARED,
//    so the next transaction touching the same key waits for that commit - on the background thread.
//  - notify_checkpoint_complete(n): every committable of checkpoints <= n is committed, in order (a missed
//    notification is caught up by the next). Committing waits (a session advisory lock on the gid) until the
//    background thread has finished with that gid, then COMMIT PREPARED. When no such prepared transaction
//    exists, the marker table decides: the gid there means committed before (idempotent); absent means it was
//    never prepared (the process died between the barrier and the PREPARE), and its rows from the checkpoint
//    are written and committed now in one transaction together with the marker.
//  - Restore from checkpoint n: the committables in n's state are committed as above; then each subtask rolls
//    back the prepared transactions of its own prefix and index that are not in the restored state
//    (transactions_to_roll_back: pre-committed after n), after terminating sessions of an earlier attempt
//    (by application_name). A fresh start rolls back every prepared transaction of its prefix and index.
//  - Fencing: terminating sessions does not stop an earlier attempt's writer that still runs somewhere (a
//    TaskManager cut off from its JobManager or paused, which still reaches the database: docs/cluster.md) - it
//    reconnects and retries. Both attempts name the transaction after the restored checkpoint alike, so such a zombie
//    could replace the new attempt's prepared transaction of that name with its own rows, and the commit would then
//    commit the zombie's. So every writer of a subtask first takes the subtask's fence: a row of the fence table
//    (prefix, subtask) naming the writer (run id and attempt), set when the writer starts, and read FOR SHARE inside
//    every transaction it prepares - the prepared transaction keeps that row lock until it is committed or rolled
//    back. A writer prepares only while the fence names it (else it fails, saying a newer attempt fenced it), and a
//    new writer's start sets the fence only once no transaction holds it: once it is set, no earlier writer
//    prepares anything (Kafka's producer epochs play this part for the Kafka sink).
// The prefix is stable across runs: transaction_id_prefix, or job name + "/" + the sink's uid.
// Costs: the checkpoint holds each subtask's uncommitted rows (about one checkpoint interval of output) until they
// commit; rows become visible when the checkpoint completes. Prepared transactions hold their locks (and block
// VACUUM's horizon) until committed: a job that stops for good should be restored or have its prepared
// transactions rolled back (docs/postgres.md). The marker table grows by one row per transaction.
// Connection loss and server restarts: every step is retried with backoff (RetryOptions).
// Threading: writer and committer belong to the task thread; the writer owns one background thread.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/postgres/postgres_options.h"
#include "sluice/core/serializer.h"
#include "sluice/sink/two_phase_commit_sink.h"

namespace sluice::postgres {

struct PostgresTwoPhaseCommitSinkOptions {
  PostgresConnectionOptions connection;
  PostgresTableOptions table;
  std::string transaction_id_prefix;                     // "" = "<job name>/<sink uid>"
  std::string marker_table = "sluice_transaction_markers";  // created when missing: (gid text primary key, ...)
  // Created when missing: (prefix text, subtask integer, writer text, ..., primary key (prefix, subtask)).
  std::string fence_table = "sluice_transaction_fences";
  int32_t statement_max_rows = 1000;                     // rows per INSERT statement inside a transaction; >= 1
};

// A pre-committed transaction: its gid, the id of the run that prepared it, and its rows (written again if it was
// never prepared). Its marker is "<gid>@<run>": gids repeat across runs (checkpoint ids start at 1 again in a new
// run of the same job), markers do not.
struct PreparedTransaction {
  std::string gid;
  std::string run;
  std::vector<Row> rows;
  bool operator==(const PreparedTransaction&) const = default;
  std::string marker() const { return gid + "@" + run; }
  SLUICE_FIELDS(PreparedTransaction, gid, run, rows)
};

// Commits PreparedTransactions (see the protocol above). Task thread.
class PreparedTransactionCommitter final : public Committer<PreparedTransaction> {
 public:
  PreparedTransactionCommitter(PostgresTwoPhaseCommitSinkOptions options);
  ~PreparedTransactionCommitter() override;
  void commit(const std::vector<PreparedTransaction>& committables) override;
  // How the committables were committed so far (for tests and metrics).
  struct Counts {
    int64_t committed_prepared = 0;  // COMMIT PREPARED
    int64_t already_committed = 0;   // marker found
    int64_t rewritten = 0;           // never prepared: written from the checkpoint's rows
  };
  Counts counts() const { return counts_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Counts counts_;
};

// The non-template part of the writer. Task thread, except the background thread it owns. Its constructor creates the
// marker and fence tables when missing, terminates an earlier attempt's sessions, rolls back lingering transactions
// and takes the subtask's fence (it throws std::runtime_error naming the transactions that still hold the fence
// after the connection's retry budget, and the errors of the statements). prepare_commit() rethrows the background
// thread's failure, e.g. "fenced" once a newer writer took the subtask's fence.
class PreparedTransactionWriter {
 public:
  struct Context {
    std::string prefix;  // transaction_prefix(...)
    std::string run;     // this run's job id
    int32_t subtask = 0;
    int32_t parallelism = 1;
    bool restored = false;
    std::function<int64_t()> next_checkpoint_id;
    std::set<std::string> keep;  // gids in the restored state
    int32_t attempt = 0;         // with `run`, names this writer in the subtask's fence
  };
  PreparedTransactionWriter(PostgresTwoPhaseCommitSinkOptions options, Context context);
  ~PreparedTransactionWriter();
  PreparedTransactionWriter(const PreparedTransactionWriter&) = delete;
  PreparedTransactionWriter& operator=(const PreparedTransactionWriter&) = delete;
  Row& next_row();
  std::vector<PreparedTransaction> prepare_commit();
  void close() noexcept;
  // The gids rolled back at start (lingering transactions).
  const std::vector<std::string>& rolled_back() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The exclusive claim (sluice/core/exclusive_claim.h) of `prefix` on the sink's database: a session-level advisory
// lock (pg_try_advisory_lock of a stable 64-bit hash of the prefix) held by a connection of the job's own for the
// job's life, so a second running job with the same prefix is refused at submission instead of rolling back the
// first one's prepared transactions. kFailedPrecondition naming the holding session (its application_name carries
// the job id and pid); kIOError when the server cannot be reached after the connection's retries. While held, the
// lock is checked every `check_interval_ms` (default 5000, which also keeps idle_session_timeout from ending its
// session): a session that ended anyway (pg_terminate_backend, a server restart) lost the lock, which is logged as
// an error and taken again on a new session, or the session that took it meanwhile is named in the log. Limits:
// the lock is per database (docs/postgres.md).
inline constexpr int64_t kPrefixClaimCheckIntervalMs = 5000;
ExclusiveClaim transaction_prefix_claim(const PostgresConnectionOptions& connection, const std::string& prefix,
                                        int64_t check_interval_ms = kPrefixClaimCheckIntervalMs);

template <class T>
class PostgresTwoPhaseCommitSink final : public TwoPhaseCommittingSink<T, PreparedTransaction> {
 public:
  PostgresTwoPhaseCommitSink(PostgresTwoPhaseCommitSinkOptions options, RowEncoder<T> encoder)
      : options_(std::move(options)), encoder_(std::move(encoder)) {
    validate(options_.connection, "PostgresTwoPhaseCommitSink");
    validate(options_.table, "PostgresTwoPhaseCommitSink");
    if (options_.marker_table.empty()) throw std::invalid_argument("PostgresTwoPhaseCommitSink: marker_table is empty");
    if (options_.fence_table.empty()) throw std::invalid_argument("PostgresTwoPhaseCommitSink: fence_table is empty");
    if (options_.statement_max_rows < 1) {
      throw std::invalid_argument("PostgresTwoPhaseCommitSink: statement_max_rows must be >= 1");
    }
    if (!encoder_) throw std::invalid_argument("PostgresTwoPhaseCommitSink: the row encoder is empty");
  }

  std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext& ctx) const override {
    std::string prefix;
    try {
      prefix = transaction_prefix(options_.transaction_id_prefix, ctx.job_name, ctx.operator_uid);
    } catch (const std::invalid_argument&) {
      return {};  // no prefix and no uid: create_writer fails the job saying so
    }
    return {transaction_prefix_claim(options_.connection, prefix)};
  }

  std::unique_ptr<PrecommittingSinkWriter<T, PreparedTransaction>> create_writer(TwoPhaseCommitContext& ctx) const override {
    PreparedTransactionWriter::Context c;
    c.prefix = transaction_prefix(options_.transaction_id_prefix, ctx.job_name(), ctx.operator_uid());
    c.run = ctx.job_id();
    c.subtask = ctx.subtask_index();
    c.parallelism = ctx.parallelism();
    c.restored = ctx.is_restored();
    c.attempt = ctx.attempt_number();
    c.next_checkpoint_id = [&ctx] { return ctx.next_checkpoint_id(); };
    for (const auto& b : ctx.restored_committables_bytes()) {
      auto t = deserialize_bytes<PreparedTransaction>(b.data(), b.size(), "PostgreSQL sink committable");
      if (!t.is_ok()) throw std::runtime_error(t.status().to_string());
      c.keep.insert(t->gid);
    }
    return std::make_unique<Writer>(std::make_unique<PreparedTransactionWriter>(options_, std::move(c)), encoder_);
  }
  std::unique_ptr<Committer<PreparedTransaction>> create_committer() const override {
    return std::make_unique<PreparedTransactionCommitter>(options_);
  }

 private:
  class Writer final : public PrecommittingSinkWriter<T, PreparedTransaction> {
   public:
    Writer(std::unique_ptr<PreparedTransactionWriter> w, RowEncoder<T> enc) : w_(std::move(w)), enc_(std::move(enc)) {}
    void write(T&& record) override { enc_(record, w_->next_row()); }
    void flush(bool) override {}  // rows wait for the barrier's transaction
    std::vector<PreparedTransaction> prepare_commit() override { return w_->prepare_commit(); }
    void close() override { w_->close(); }

   private:
    std::unique_ptr<PreparedTransactionWriter> w_;
    RowEncoder<T> enc_;
  };
  PostgresTwoPhaseCommitSinkOptions options_;
  RowEncoder<T> encoder_;
};

}  // namespace sluice::postgres
