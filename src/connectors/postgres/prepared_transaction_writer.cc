// The two-phase-commit writer: rows buffered on the task thread, each checkpoint's transaction written and
// prepared by a background thread (postgres_two_phase_commit_sink.h has the protocol).
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "transaction_steps.h"

namespace sluice::postgres {

struct PreparedTransactionWriter::Impl {
  Impl(PostgresTwoPhaseCommitSinkOptions o, Context c)
      : options(std::move(o)), ctx(std::move(c)),
        what("PostgreSQL two-phase-commit sink (table '" + options.table.table + "', subtask " +
             std::to_string(ctx.subtask) + ")"),
        writer(ctx.run + "/" + std::to_string(ctx.attempt)),
        worker_session(options.connection, writer_application_name(ctx.prefix, ctx.subtask), what) {}

  // How long one round of start() waits for the transactions that hold the fence.
  static constexpr int64_t kFenceLockTimeoutMs = 1000;

  PostgresTwoPhaseCommitSinkOptions options;
  Context ctx;
  std::string what;
  std::string writer;  // this writer in the subtask's fence: "<run>/<attempt>"
  PgSession worker_session;  // background thread only (and cancel() from close)
  std::vector<Row> rows;     // of the open transaction, task thread
  std::vector<std::string> rolled_back;
  std::string sent_prepare;  // the gid this writer last sent PREPARE TRANSACTION for (background thread)

  std::mutex mu;
  std::condition_variable cv;
  std::deque<PreparedTransaction> queue;  // handed to the background thread
  bool stop = false;
  std::string error;  // the background thread's failure, rethrown on the task thread
  std::thread worker;

  // On the task thread, before the first record: the marker and fence tables, then rounds of: terminate an earlier
  // attempt's background sessions, roll back lingering prepared transactions, take the subtask's fence. A round may
  // not get the fence: a transaction holds it - a prepared one of the restored state that another subtask's
  // committer has yet to commit, or one an earlier writer (reconnected after its session was terminated) prepared
  // after the round's roll-back or still has open. The next round ends and rolls back the latter; the former are
  // committed meanwhile. Once the fence is taken no earlier writer prepares anything (postgres_two_phase_commit_sink.h,
  // "Fencing").
  void start() {
    PgSession s(options.connection, "sluice-2pc-start", what);
    s.run("preparing the marker and fence tables", [&](pqxx::connection& c) {
      ensure_marker_table(c, options.marker_table);
      ensure_fence_table(c, options.fence_table);
      return 0;
    });
    std::vector<std::string> left;  // prepared transactions of the prefix after the last round's roll-back
    for (int32_t round = 0;; ++round) {
      const bool fenced = s.run("fencing earlier writers and rolling back lingering transactions", [&](pqxx::connection& c) {
        terminate_earlier_sessions(c);
        left = roll_back_lingering(c);
        try {
          take_fence(c, options.fence_table, ctx.prefix, ctx.subtask, ctx.parallelism, writer, kFenceLockTimeoutMs);
          return true;
        } catch (const pqxx::sql_error& e) {
          if (e.sqlstate() != "55P03") throw;  // 55P03 lock_not_available: a transaction holds the fence
          return false;
        }
      });
      if (fenced) break;
      if (round + 1 >= options.connection.retry.max_attempts) {
        std::string names;
        for (size_t i = 0; i < left.size() && i < 5; ++i) names += (i > 0 ? ", " : "") + left[i];
        throw std::runtime_error(what + ": could not take the fence of subtask " + std::to_string(ctx.subtask) +
                                 " in table '" + options.fence_table + "' in " + std::to_string(round + 1) +
                                 " rounds: transactions still hold it (prepared ones of prefix '" + ctx.prefix +
                                 "': " + (names.empty() ? "none" : names) + ")");
      }
    }
    worker = std::thread([this] { run_worker(); });
  }

  void terminate_earlier_sessions(pqxx::connection& c) {
    const std::string app = writer_application_name(ctx.prefix, ctx.subtask);
    try {
      exec(c, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = " + quote_literal(app) +
                  " AND pid <> pg_backend_pid()");
    } catch (const pqxx::sql_error& e) {
      // 42501: a role that may not signal those sessions (another role's). The fence still keeps their writer from
      // preparing once this one takes it; until then take_fence waits for their open transactions to end.
      if (e.sqlstate() != "42501") throw;
      spdlog::warn("{}: cannot terminate earlier sessions '{}' ({}); going on without", what, app, e.what());
    }
  }

  // Rolls back this subtask's lingering prepared transactions (transactions_to_roll_back); returns the prepared
  // transactions of the prefix that are left.
  std::vector<std::string> roll_back_lingering(pqxx::connection& c) {
    std::vector<std::string> prepared;
    for (const auto& r : exec(c, "SELECT gid FROM pg_prepared_xacts WHERE left(gid, " +
                                     std::to_string(ctx.prefix.size() + 1) + ") = " + quote_literal(ctx.prefix + ":"))) {
      prepared.push_back(r[0].c_str());
    }
    const int64_t first_after = ctx.restored ? ctx.next_checkpoint_id() : 0;
    std::set<std::string> gone;
    for (const auto& gid : transactions_to_roll_back(prepared, ctx.prefix, ctx.subtask, ctx.parallelism, ctx.restored,
                                                     first_after, ctx.keep)) {
      try {
        exec(c, "ROLLBACK PREPARED " + quote_literal(gid));
        rolled_back.push_back(gid);
      } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != "42704") throw;  // gone meanwhile (another subtask after a rescale): fine
      }
      gone.insert(gid);
    }
    std::vector<std::string> left;
    for (auto& gid : prepared) {
      if (gone.count(gid) == 0) left.push_back(std::move(gid));
    }
    return left;
  }

  // Throws unless the subtask's fence names this writer. `for_share`: inside the transaction about to be prepared,
  // which then holds the fence row until it is committed or rolled back.
  void check_fence(pqxx::connection& c, bool for_share) {
    const std::string holder = fence_writer(c, options.fence_table, ctx.prefix, ctx.subtask, for_share);
    if (holder == writer) return;
    throw std::runtime_error("fenced: the fence of subtask " + std::to_string(ctx.subtask) + " of transaction prefix '" +
                             ctx.prefix + "' (table '" + options.fence_table + "') names " +
                             (holder.empty() ? std::string("no writer") : "writer " + holder) + ", not this writer (" +
                             writer + "): a newer attempt took over, so this one prepares nothing more");
  }

  void run_worker() {
    for (;;) {
      PreparedTransaction t;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (stop) return;
        t = std::move(queue.front());
        queue.pop_front();
      }
      try {
        worker_session.run("preparing transaction '" + t.gid + "'", [&](pqxx::connection& c) {
          prepare(c, t);
          return 0;
        });
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        if (!stop && error.empty()) error = e.what();
        return;
      }
    }
  }

  // BEGIN, rows, marker, PREPARE TRANSACTION - unless the gid is prepared or committed already (a retry after a
  // lost response, or the committer wrote it first). The advisory lock makes the committer wait for the outcome.
  void prepare(pqxx::connection& c, const PreparedTransaction& t) {
    lock_gid(c, t.gid);
    try {
      check_fence(c, false);  // before anything: a fenced writer must not roll back a newer one's transaction below
      bool prepared = is_prepared(c, t.gid);
      if (prepared && sent_prepare != t.gid) {
        // Prepared, but not by this writer: a zombie of an earlier attempt that fencing could not stop.
        exec(c, "ROLLBACK PREPARED " + quote_literal(t.gid));
        prepared = false;
      }
      if (!prepared && !marker_exists(c, options.marker_table, t.marker())) {
        exec(c, "BEGIN");
        check_fence(c, true);
        write_rows(c, options.table, t.rows, options.statement_max_rows);
        exec(c, "INSERT INTO " + quote_qualified_name(options.marker_table) + " (gid) VALUES (" + quote_literal(t.marker()) + ")");
        sent_prepare = t.gid;  // before sending: its response may be lost, and the retry finds it prepared
        exec(c, "PREPARE TRANSACTION " + quote_literal(t.gid));
      }
    } catch (const std::exception& e) {
      if (!is_retryable(e)) {
        try {
          exec(c, "ROLLBACK");
          unlock_gid(c, t.gid);
        } catch (...) {  // the error below is the one to report
        }
      }
      throw;
    }
    unlock_gid(c, t.gid);
  }

  void rethrow_worker_error() {
    std::lock_guard lock(mu);
    if (!error.empty()) throw std::runtime_error(error);
  }
};

PreparedTransactionWriter::PreparedTransactionWriter(PostgresTwoPhaseCommitSinkOptions options, Context context)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(context))) {
  impl_->start();
}

PreparedTransactionWriter::~PreparedTransactionWriter() { close(); }

Row& PreparedTransactionWriter::next_row() {
  impl_->rows.emplace_back();
  return impl_->rows.back();
}

std::vector<PreparedTransaction> PreparedTransactionWriter::prepare_commit() {
  impl_->rethrow_worker_error();
  if (impl_->rows.empty()) return {};
  PreparedTransaction t{transaction_gid(impl_->ctx.prefix, impl_->ctx.subtask, impl_->ctx.next_checkpoint_id()),
                        impl_->ctx.run, std::move(impl_->rows)};
  impl_->rows.clear();
  {
    std::lock_guard lock(impl_->mu);
    impl_->queue.push_back(t);
  }
  impl_->cv.notify_one();
  return {std::move(t)};
}

void PreparedTransactionWriter::close() noexcept {
  if (!impl_ || !impl_->worker.joinable()) return;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_one();
  impl_->worker_session.cancel();  // a statement waiting for a row lock returns
  impl_->worker.join();
  impl_->worker_session.drop();  // an unfinished transaction rolls back; the checkpoint holds its rows
}

const std::vector<std::string>& PreparedTransactionWriter::rolled_back() const { return impl_->rolled_back; }

}  // namespace sluice::postgres
