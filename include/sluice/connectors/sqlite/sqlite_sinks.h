// SQLite sinks (the embedded database of `sluice guarantees`; C API of libsqlite3): an idempotent upsert sink and
// a write-ahead-log sink, the SQLite counterparts of postgres_upsert_sink.h and postgres_write_ahead_sink.h.
//
//  - SqliteUpsertSink: rows are buffered and, at every checkpoint barrier (SinkWriter::flush) and when the
//    buffer reaches buffer_flush_max_rows, written in one transaction as `INSERT ... ON CONFLICT (key) DO UPDATE`.
//    With a replayable source and keyed results the table ends as in a failure-free run (a replay writes the
//    same values again); meanwhile it may hold values newer than the state the job restored (temporarily
//    inconsistent). kInsert mode appends instead (at-least-once).
//  - SqliteWriteAheadSink (sink/write_ahead_sink.h): when checkpoint n completes, n's batch is inserted in one
//    transaction, and then its marker row (the batch id) into marker_table in a second one; a failure between
//    the two inserts the batch again after the restore: at-least-once.
// The database file is opened by every subtask in WAL journal mode with synchronous=FULL (a committed
// transaction survives a crash) and a busy timeout, so subtasks writing to one file wait for each other.
// Values are bound as text; SQLite's column affinity converts them (an INTEGER column stores integers).
// Errors: invalid options throw std::invalid_argument at construction; SQLite errors throw std::runtime_error
// naming the file and statement (the task fails and recovers). Threading: one writer per subtask, task thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/sink/sink.h"
#include "sluice/sink/write_ahead_sink.h"

namespace sluice::sqlite {

using SqliteRow = std::vector<std::string>;
// Fills `row` (cleared by the caller) with one value per column.
template <class T>
using SqliteRowEncoder = std::function<void(const T&, SqliteRow& row)>;

enum class SqliteWriteMode { kUpsert, kInsert };

struct SqliteTableOptions {
  std::string path;                      // the database file; required (created when missing)
  std::string table;                     // must exist; required
  std::vector<std::string> columns;      // the row's columns in order; required
  std::vector<std::string> key_columns;  // the conflict target (a unique index); required for kUpsert
  SqliteWriteMode mode = SqliteWriteMode::kUpsert;
  int32_t busy_timeout_ms = 30'000;      // how long a writer waits for another one's lock
};
// Throws std::invalid_argument naming `who` and the missing or bad option.
void validate(const SqliteTableOptions& options, const std::string& who);

// Runs `sql` (one or more statements) on the database at `path`: kIOError naming the file and the error.
Status sqlite_execute(const std::string& path, const std::string& sql);
// The rows of a query, each column as text ("" for NULL).
Result<std::vector<SqliteRow>> sqlite_query(const std::string& path, const std::string& sql);

// The non-template part: one subtask's connection, batches in transactions, markers.
class SqliteTableWriter {
 public:
  explicit SqliteTableWriter(SqliteTableOptions options, std::string marker_table = {});
  ~SqliteTableWriter();
  SqliteTableWriter(const SqliteTableWriter&) = delete;
  SqliteTableWriter& operator=(const SqliteTableWriter&) = delete;
  void write(const std::vector<SqliteRow>& rows);  // one transaction
  bool has_marker(const std::string& batch_id);
  void write_marker(const std::string& batch_id);  // its own transaction
  void close() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T>
class SqliteUpsertSink final : public Sink<T> {
 public:
  SqliteUpsertSink(SqliteTableOptions options, SqliteRowEncoder<T> encoder, int32_t buffer_flush_max_rows = 1000)
      : options_(std::move(options)), encoder_(std::move(encoder)), max_rows_(buffer_flush_max_rows) {
    validate(options_, "SqliteUpsertSink");
    if (!encoder_) throw std::invalid_argument("SqliteUpsertSink: the row encoder is empty");
    if (max_rows_ < 1) throw std::invalid_argument("SqliteUpsertSink: buffer_flush_max_rows must be >= 1");
  }
  std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext&) const override {
    return std::make_unique<Writer>(std::make_unique<SqliteTableWriter>(options_), encoder_, max_rows_);
  }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    Writer(std::unique_ptr<SqliteTableWriter> w, SqliteRowEncoder<T> enc, int32_t max_rows)
        : w_(std::move(w)), enc_(std::move(enc)), max_rows_(max_rows) {}
    void write(T&& record) override {
      rows_.emplace_back();
      enc_(record, rows_.back());
      if (static_cast<int32_t>(rows_.size()) >= max_rows_) flush(false);
    }
    void flush(bool) override {
      if (rows_.empty()) return;
      w_->write(rows_);
      rows_.clear();
    }
    void close() override { w_->close(); }

   private:
    std::unique_ptr<SqliteTableWriter> w_;
    SqliteRowEncoder<T> enc_;
    int32_t max_rows_;
    std::vector<SqliteRow> rows_;
  };
  SqliteTableOptions options_;
  SqliteRowEncoder<T> encoder_;
  int32_t max_rows_;
};

template <class T>
class SqliteWriteAheadSink final : public WriteAheadSink<T> {
 public:
  SqliteWriteAheadSink(SqliteTableOptions options, SqliteRowEncoder<T> encoder,
                       std::string marker_table = "sluice_write_ahead_markers")
      : options_(std::move(options)), encoder_(std::move(encoder)), marker_table_(std::move(marker_table)) {
    validate(options_, "SqliteWriteAheadSink");
    if (!encoder_) throw std::invalid_argument("SqliteWriteAheadSink: the row encoder is empty");
    if (marker_table_.empty()) throw std::invalid_argument("SqliteWriteAheadSink: marker_table is empty");
  }
  std::unique_ptr<WriteAheadTarget<T>> create_target(WriteAheadContext& ctx) const override {
    return std::make_unique<Target>(std::make_unique<SqliteTableWriter>(options_, marker_table_), encoder_, ctx);
  }

 private:
  class Target final : public WriteAheadTarget<T> {
   public:
    Target(std::unique_ptr<SqliteTableWriter> w, SqliteRowEncoder<T> enc, WriteAheadContext& ctx)
        : w_(std::move(w)), enc_(std::move(enc)), ctx_(ctx) {}
    bool is_checkpoint_committed(int32_t subtask, int64_t checkpoint) override {
      return w_->has_marker(write_ahead_batch_id(ctx_, subtask, checkpoint));
    }
    void send_values(const std::vector<T>& values, int32_t, int64_t) override {
      std::vector<SqliteRow> rows(values.size());
      for (size_t i = 0; i < values.size(); ++i) enc_(values[i], rows[i]);
      w_->write(rows);
    }
    void commit_checkpoint(int32_t subtask, int64_t checkpoint) override {
      w_->write_marker(write_ahead_batch_id(ctx_, subtask, checkpoint));
    }
    void close() override { w_->close(); }

   private:
    std::unique_ptr<SqliteTableWriter> w_;
    SqliteRowEncoder<T> enc_;
    WriteAheadContext& ctx_;
  };
  SqliteTableOptions options_;
  SqliteRowEncoder<T> encoder_;
  std::string marker_table_;
};

}  // namespace sluice::sqlite
