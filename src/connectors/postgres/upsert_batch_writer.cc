#include "pg_session.h"
#include "sluice/connectors/postgres/postgres_upsert_sink.h"

namespace sluice::postgres {

struct UpsertBatchWriter::Impl {
  Impl(PostgresUpsertSinkOptions o, int32_t subtask)
      : options(std::move(o)),
        session(options.connection, "sluice-upsert-" + std::to_string(subtask), "PostgreSQL upsert sink (table '" +
                                                                                     options.table.table + "')") {}
  PostgresUpsertSinkOptions options;
  PgSession session;
  std::vector<Row> rows;

  void write_out() {
    if (rows.empty()) return;
    // One statement per batch: atomic, and idempotent for upserts, so a retry after a lost response is harmless.
    const std::string sql = build_write_statement(options.table, last_row_per_key(options.table, std::move(rows)));
    rows.clear();
    session.run("upserting a batch", [&](pqxx::connection& c) { return exec(c, sql); });
  }
};

UpsertBatchWriter::UpsertBatchWriter(PostgresUpsertSinkOptions options, int32_t subtask)
    : impl_(std::make_unique<Impl>(std::move(options), subtask)) {
  impl_->rows.reserve(static_cast<size_t>(impl_->options.buffer_flush_max_rows));
}

UpsertBatchWriter::~UpsertBatchWriter() = default;

Row& UpsertBatchWriter::next_row() {
  if (static_cast<int32_t>(impl_->rows.size()) >= impl_->options.buffer_flush_max_rows) impl_->write_out();
  impl_->rows.emplace_back();
  return impl_->rows.back();
}

void UpsertBatchWriter::flush() { impl_->write_out(); }

void UpsertBatchWriter::close() noexcept {
  // Buffered rows after the last barrier are not written: a restore replays them (the source is replayable).
  impl_->session.cancel();
  impl_->session.drop();
}

int64_t UpsertBatchWriter::connection_retries() const { return impl_->session.retries(); }

}  // namespace sluice::postgres
