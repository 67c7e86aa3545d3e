// The write-ahead-log sink over PostgreSQL (sink/write_ahead_sink.h): when checkpoint n completes, each batch of
// n's output is written in one transaction (all rows or none), and after that transaction committed, a marker row
// (the batch id) is inserted into marker_table in a second one. A failure between the two commits writes the
// batch again after the restore: at-least-once (kInsert rows appear twice; kUpsert rows are rewritten with the
// same values). Connection loss and server restarts are retried with backoff; a COMMIT whose response was lost
// counts as not committed, so the batch is written again (at-least-once, again).
// Errors: invalid options throw std::invalid_argument; SQL errors fail the task. Threading: task thread.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/postgres/postgres_options.h"
#include "sluice/sink/write_ahead_sink.h"

namespace sluice::postgres {

struct PostgresWriteAheadSinkOptions {
  PostgresConnectionOptions connection;
  PostgresTableOptions table;
  std::string marker_table = "sluice_write_ahead_markers";  // created when missing: (gid text primary key, ...)
  int32_t statement_max_rows = 1000;                        // rows per INSERT statement; >= 1
};

// The non-template part: a batch per transaction, then its marker.
class WriteAheadTableWriter {
 public:
  WriteAheadTableWriter(PostgresWriteAheadSinkOptions options, int32_t subtask);
  ~WriteAheadTableWriter();
  WriteAheadTableWriter(const WriteAheadTableWriter&) = delete;
  WriteAheadTableWriter& operator=(const WriteAheadTableWriter&) = delete;
  void write(std::vector<Row> rows);
  bool has_marker(const std::string& batch_id);
  void write_marker(const std::string& batch_id);
  void close() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T>
class PostgresWriteAheadSink final : public WriteAheadSink<T> {
 public:
  PostgresWriteAheadSink(PostgresWriteAheadSinkOptions options, RowEncoder<T> encoder)
      : options_(std::move(options)), encoder_(std::move(encoder)) {
    validate(options_.connection, "PostgresWriteAheadSink");
    validate(options_.table, "PostgresWriteAheadSink");
    if (options_.marker_table.empty()) throw std::invalid_argument("PostgresWriteAheadSink: marker_table is empty");
    if (options_.statement_max_rows < 1) throw std::invalid_argument("PostgresWriteAheadSink: statement_max_rows must be >= 1");
    if (!encoder_) throw std::invalid_argument("PostgresWriteAheadSink: the row encoder is empty");
  }
  std::unique_ptr<WriteAheadTarget<T>> create_target(WriteAheadContext& ctx) const override {
    return std::make_unique<Target>(std::make_unique<WriteAheadTableWriter>(options_, ctx.subtask_index()), encoder_, ctx);
  }

 private:
  class Target final : public WriteAheadTarget<T> {
   public:
    Target(std::unique_ptr<WriteAheadTableWriter> w, RowEncoder<T> enc, WriteAheadContext& ctx)
        : w_(std::move(w)), enc_(std::move(enc)), ctx_(ctx) {}
    bool is_checkpoint_committed(int32_t subtask, int64_t checkpoint) override {
      return w_->has_marker(write_ahead_batch_id(ctx_, subtask, checkpoint));
    }
    void send_values(const std::vector<T>& values, int32_t, int64_t) override {
      std::vector<Row> rows(values.size());
      for (size_t i = 0; i < values.size(); ++i) enc_(values[i], rows[i]);
      w_->write(std::move(rows));
    }
    void commit_checkpoint(int32_t subtask, int64_t checkpoint) override {
      w_->write_marker(write_ahead_batch_id(ctx_, subtask, checkpoint));
    }
    void close() override { w_->close(); }

   private:
    std::unique_ptr<WriteAheadTableWriter> w_;
    RowEncoder<T> enc_;
    WriteAheadContext& ctx_;
  };
  PostgresWriteAheadSinkOptions options_;
  RowEncoder<T> encoder_;
};

}  // namespace sluice::postgres
