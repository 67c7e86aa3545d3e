// The two-phase-commit writer: rows buffered on the task thread, each checkpoint's transaction written and
// prepared by a background thread (postgres_two_phase_commit_sink.h has the protocol).
#include <condition_variable>
#include <deque>
#include <mutex>
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
        worker_session(options.connection, writer_application_name(ctx.prefix, ctx.subtask), what) {}

  PostgresTwoPhaseCommitSinkOptions options;
  Context ctx;
  std::string what;
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

  // On the task thread, before the first record: the marker table, fencing of an earlier attempt's background
  // sessions, and the roll-back of lingering prepared transactions.
  void start() {
    PgSession s(options.connection, "sluice-2pc-start", what);
    const std::string app = writer_application_name(ctx.prefix, ctx.subtask);
    s.run("preparing the marker table and rolling back lingering transactions", [&](pqxx::connection& c) {
      ensure_marker_table(c, options.marker_table);
      try {
        exec(c, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = " +
                    quote_literal(app) + " AND pid <> pg_backend_pid()");
      } catch (const pqxx::sql_error& e) {
        // 42501: a role that may not signal those sessions (another role's). Without fencing a zombie may still
        // prepare a gid this run uses again; prepare() rolls such a transaction back before writing its own.
        if (e.sqlstate() != "42501") throw;
        spdlog::warn("{}: cannot terminate earlier sessions '{}' ({}); going on without fencing", what, app, e.what());
      }
      std::vector<std::string> prepared;
      for (const auto& r : exec(c, "SELECT gid FROM pg_prepared_xacts WHERE left(gid, " +
                                       std::to_string(ctx.prefix.size() + 1) + ") = " + quote_literal(ctx.prefix + ":"))) {
        prepared.push_back(r[0].c_str());
      }
      const int64_t first_after = ctx.restored ? ctx.next_checkpoint_id() : 0;
      for (const auto& gid : transactions_to_roll_back(prepared, ctx.prefix, ctx.subtask, ctx.parallelism,
                                                       ctx.restored, first_after, ctx.keep)) {
        try {
          exec(c, "ROLLBACK PREPARED " + quote_literal(gid));
          rolled_back.push_back(gid);
        } catch (const pqxx::sql_error& e) {
          if (e.sqlstate() != "42704") throw;  // gone meanwhile (another subtask after a rescale): fine
        }
      }
      return 0;
    });
    worker = std::thread([this] { run_worker(); });
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
      bool prepared = is_prepared(c, t.gid);
      if (prepared && sent_prepare != t.gid) {
        // Prepared, but not by this writer: a zombie of an earlier attempt that fencing could not stop.
        exec(c, "ROLLBACK PREPARED " + quote_literal(t.gid));
        prepared = false;
      }
      if (!prepared && !marker_exists(c, options.marker_table, t.marker())) {
        exec(c, "BEGIN");
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
