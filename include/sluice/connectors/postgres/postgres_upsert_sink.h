// The idempotent PostgreSQL sink: rows are upserted (`INSERT ... ON CONFLICT (key) DO UPDATE`), in batches of
// buffer_flush_max_rows (Flink JDBC's sink.buffer-flush.max-rows), and every buffered row is written out at each
// checkpoint barrier (SinkWriter::flush), so a completed checkpoint covers everything before its barrier.
//
// Guarantee: with a replayable source and keyed results (a row per key, the latest wins), the table ends up
// exactly as in a failure-free run: a restore replays records after the checkpoint, and upserting them again
// writes the same values. During recovery the table is temporarily inconsistent: it may hold values written
// after the restored checkpoint (newer than the state the job resumed from) until the replay overwrites them, and
// a reader can see a key go "back in time" meanwhile. Rows of kInsert mode are appended again on replay:
// at-least-once only (use the two-phase-commit sink for exactly-once appends).
// Each batch is one statement (atomic); broken connections and server restarts are retried with backoff
// (RetryOptions). Errors: invalid options throw std::invalid_argument at construction; SQL errors fail the task.
// Threading: one writer per subtask, task thread only.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/postgres/postgres_options.h"
#include "sluice/sink/sink.h"

namespace sluice::postgres {

struct PostgresUpsertSinkOptions {
  PostgresConnectionOptions connection;
  PostgresTableOptions table;
  int32_t buffer_flush_max_rows = 1000;  // rows per statement; >= 1
};

// The non-template part: batched upserts over one session.
class UpsertBatchWriter {
 public:
  UpsertBatchWriter(PostgresUpsertSinkOptions options, int32_t subtask);
  ~UpsertBatchWriter();
  UpsertBatchWriter(const UpsertBatchWriter&) = delete;
  UpsertBatchWriter& operator=(const UpsertBatchWriter&) = delete;
  Row& next_row();  // a cleared row to fill, buffered
  void flush();     // writes the buffered rows
  void close() noexcept;
  int64_t connection_retries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T>
class PostgresUpsertSink final : public Sink<T> {
 public:
  PostgresUpsertSink(PostgresUpsertSinkOptions options, RowEncoder<T> encoder)
      : options_(std::move(options)), encoder_(std::move(encoder)) {
    validate(options_.connection, "PostgresUpsertSink");
    validate(options_.table, "PostgresUpsertSink");
    if (options_.buffer_flush_max_rows < 1) {
      throw std::invalid_argument("PostgresUpsertSink: buffer_flush_max_rows must be >= 1, got " +
                                  std::to_string(options_.buffer_flush_max_rows));
    }
    if (!encoder_) throw std::invalid_argument("PostgresUpsertSink: the row encoder is empty");
  }
  std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext& ctx) const override {
    return std::make_unique<Writer>(std::make_unique<UpsertBatchWriter>(options_, ctx.subtask_index()), encoder_);
  }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    Writer(std::unique_ptr<UpsertBatchWriter> w, RowEncoder<T> enc) : w_(std::move(w)), enc_(std::move(enc)) {}
    void write(T&& record) override { enc_(record, w_->next_row()); }
    void flush(bool) override { w_->flush(); }
    void close() override { w_->close(); }

   private:
    std::unique_ptr<UpsertBatchWriter> w_;
    RowEncoder<T> enc_;
  };
  PostgresUpsertSinkOptions options_;
  RowEncoder<T> encoder_;
};

}  // namespace sluice::postgres
