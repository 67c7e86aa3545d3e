// COMMIT PREPARED, idempotently, with the marker table telling committed from never-prepared transactions.
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "transaction_steps.h"

namespace sluice::postgres {

struct PreparedTransactionCommitter::Impl {
  explicit Impl(PostgresTwoPhaseCommitSinkOptions o)
      : options(std::move(o)),
        session(options.connection, "sluice-2pc-commit", "PostgreSQL two-phase-commit sink (table '" + options.table.table + "')") {}
  PostgresTwoPhaseCommitSinkOptions options;
  PgSession session;
  bool marker_table_ready = false;
};

PreparedTransactionCommitter::PreparedTransactionCommitter(PostgresTwoPhaseCommitSinkOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

PreparedTransactionCommitter::~PreparedTransactionCommitter() = default;

void PreparedTransactionCommitter::commit(const std::vector<PreparedTransaction>& committables) {
  auto& o = impl_->options;
  for (const PreparedTransaction& t : committables) {
    impl_->session.run("committing transaction '" + t.gid + "'", [&](pqxx::connection& c) {
      if (!impl_->marker_table_ready) {
        ensure_marker_table(c, o.marker_table);
        impl_->marker_table_ready = true;
      }
      lock_gid(c, t.gid);  // waits while the writer's background thread is still preparing this gid
      try {
        if (is_prepared(c, t.gid)) {
          exec(c, "COMMIT PREPARED " + quote_literal(t.gid));
          ++counts_.committed_prepared;
        } else if (marker_exists(c, o.marker_table, t.marker())) {
          ++counts_.already_committed;
        } else {
          // Never prepared (the writer's process ended between the barrier and its PREPARE, or the writer has not
          // got to it yet): the checkpoint's rows, in one transaction with the marker, so the writer skips it.
          exec(c, "BEGIN");
          write_rows(c, o.table, t.rows, o.statement_max_rows);
          exec(c, "INSERT INTO " + quote_qualified_name(o.marker_table) + " (gid) VALUES (" + quote_literal(t.marker()) + ")");
          exec(c, "COMMIT");
          ++counts_.rewritten;
        }
      } catch (const std::exception& e) {
        if (!is_retryable(e)) {
          try {
            exec(c, "ROLLBACK");
            unlock_gid(c, t.gid);
          } catch (...) {  // the error rethrown below is the one to report
          }
        }
        throw;
      }
      unlock_gid(c, t.gid);
      return 0;
    });
  }
}

}  // namespace sluice::postgres
