#include "sluice/connectors/postgres/postgres_write_ahead_sink.h"
#include "transaction_steps.h"

namespace sluice::postgres {

struct WriteAheadTableWriter::Impl {
  Impl(PostgresWriteAheadSinkOptions o, int32_t subtask)
      : options(std::move(o)),
        session(options.connection, "sluice-wal-" + std::to_string(subtask),
                "PostgreSQL write-ahead-log sink (table '" + options.table.table + "', subtask " + std::to_string(subtask) + ")") {}
  PostgresWriteAheadSinkOptions options;
  PgSession session;
};

WriteAheadTableWriter::WriteAheadTableWriter(PostgresWriteAheadSinkOptions options, int32_t subtask)
    : impl_(std::make_unique<Impl>(std::move(options), subtask)) {
  impl_->session.run("creating the marker table", [&](pqxx::connection& c) {
    ensure_marker_table(c, impl_->options.marker_table);
    return 0;
  });
}

WriteAheadTableWriter::~WriteAheadTableWriter() = default;

void WriteAheadTableWriter::write(std::vector<Row> rows) {
  if (rows.empty()) return;
  impl_->session.run("writing a batch", [&](pqxx::connection& c) {
    // All or nothing per batch; a broken connection rolls it back and the retry writes it whole.
    exec(c, "BEGIN");
    try {
      write_rows(c, impl_->options.table, rows, impl_->options.statement_max_rows);
      exec(c, "COMMIT");
    } catch (const std::exception& e) {
      if (!is_retryable(e)) {
        try {
          exec(c, "ROLLBACK");
        } catch (...) {  // the error rethrown below is the one to report
        }
      }
      throw;
    }
    return 0;
  });
}

bool WriteAheadTableWriter::has_marker(const std::string& batch_id) {
  return impl_->session.run("reading a marker", [&](pqxx::connection& c) {
    return marker_exists(c, impl_->options.marker_table, batch_id);
  });
}

void WriteAheadTableWriter::write_marker(const std::string& batch_id) {
  impl_->session.run("writing a marker", [&](pqxx::connection& c) {
    return exec(c, "INSERT INTO " + quote_qualified_name(impl_->options.marker_table) + " (gid) VALUES (" +
                       quote_literal(batch_id) + ") ON CONFLICT DO NOTHING");
  });
}

void WriteAheadTableWriter::close() noexcept { impl_->session.drop(); }

}  // namespace sluice::postgres
