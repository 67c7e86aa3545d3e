// SQLite sinks' I/O over the C API (sluice/connectors/sqlite/sqlite_sinks.h).
#include <sqlite3.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/sqlite/sqlite_sinks.h"

namespace sluice::sqlite {
namespace {

// An open connection; throws std::runtime_error naming the file and what failed.
class Connection {
 public:
  Connection(const std::string& path, int32_t busy_timeout_ms) : path_(path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                        nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw std::runtime_error("SQLite: cannot open " + path + ": " + msg);
    }
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
  }
  ~Connection() { sqlite3_close(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw std::runtime_error("SQLite " + path_ + ": " + msg + " in: " + sql);
    }
  }
  sqlite3_stmt* prepare(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) fail("prepare", sql);
    return st;
  }
  [[noreturn]] void fail(const char* what, const std::string& sql) {
    throw std::runtime_error("SQLite " + path_ + ": " + what + " failed: " + sqlite3_errmsg(db_) + " in: " + sql);
  }
  // Runs a prepared statement with text parameters to completion; returns the rows it produced.
  std::vector<SqliteRow> run(sqlite3_stmt* st, const std::string& sql, const SqliteRow& params) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    for (size_t i = 0; i < params.size(); ++i) {
      sqlite3_bind_text(st, static_cast<int>(i + 1), params[i].data(), static_cast<int>(params[i].size()),
                        SQLITE_TRANSIENT);
    }
    std::vector<SqliteRow> rows;
    for (;;) {
      const int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) fail("step", sql);
      SqliteRow row(static_cast<size_t>(sqlite3_column_count(st)));
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* text = sqlite3_column_text(st, c);
        if (text != nullptr) row[static_cast<size_t>(c)] = reinterpret_cast<const char*>(text);
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string join(const std::vector<std::string>& v, const std::string& sep, const std::string& suffix = "") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i] + suffix;
  return out;
}

std::string write_statement(const SqliteTableOptions& o) {
  std::string sql = "INSERT INTO " + o.table + " (" + join(o.columns, ", ") + ") VALUES (" +
                    join(std::vector<std::string>(o.columns.size(), "?"), ", ") + ")";
  if (o.mode == SqliteWriteMode::kInsert) return sql;
  std::vector<std::string> updates;
  for (const auto& c : o.columns) {
    bool is_key = false;
    for (const auto& k : o.key_columns) is_key = is_key || k == c;
    if (!is_key) updates.push_back(c + " = excluded." + c);
  }
  sql += " ON CONFLICT (" + join(o.key_columns, ", ") + ") DO ";
  return sql + (updates.empty() ? "NOTHING" : "UPDATE SET " + join(updates, ", "));
}

}  // namespace

void validate(const SqliteTableOptions& o, const std::string& who) {
  if (o.path.empty()) throw std::invalid_argument(who + ": path (the database file) is empty");
  if (o.table.empty()) throw std::invalid_argument(who + ": table is empty");
  if (o.columns.empty()) throw std::invalid_argument(who + ": columns is empty");
  if (o.mode == SqliteWriteMode::kUpsert && o.key_columns.empty()) {
    throw std::invalid_argument(who + ": key_columns is empty (needed by upserts)");
  }
  if (o.busy_timeout_ms < 0) throw std::invalid_argument(who + ": busy_timeout_ms is negative");
}

Status sqlite_execute(const std::string& path, const std::string& sql) {
  try {
    Connection(path, 30'000).exec(sql);
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::io_error(e.what());
  }
}

Result<std::vector<SqliteRow>> sqlite_query(const std::string& path, const std::string& sql) {
  try {
    Connection c(path, 30'000);
    sqlite3_stmt* st = c.prepare(sql);
    std::vector<SqliteRow> rows;
    try {
      rows = c.run(st, sql, {});
    } catch (...) {
      sqlite3_finalize(st);
      throw;
    }
    sqlite3_finalize(st);
    return rows;
  } catch (const std::exception& e) {
    return Status::io_error(e.what());
  }
}

struct SqliteTableWriter::Impl {
  SqliteTableOptions options;
  std::string marker_table;
  std::unique_ptr<Connection> conn;
  std::string write_sql, has_marker_sql, marker_sql;
  sqlite3_stmt* write_st = nullptr;
  sqlite3_stmt* has_marker_st = nullptr;
  sqlite3_stmt* marker_st = nullptr;

  void finalize() noexcept {
    for (auto* st : {write_st, has_marker_st, marker_st}) sqlite3_finalize(st);
    write_st = has_marker_st = marker_st = nullptr;
  }
  // One transaction; a failure rolls it back and rethrows.
  template <class F>
  void in_transaction(F&& f) {
    conn->exec("BEGIN IMMEDIATE");
    try {
      f();
      conn->exec("COMMIT");
    } catch (...) {
      try {
        conn->exec("ROLLBACK");
      } catch (...) {  // the original error matters; the connection is dropped with the writer
      }
      throw;
    }
  }
};

SqliteTableWriter::SqliteTableWriter(SqliteTableOptions options, std::string marker_table)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->marker_table = std::move(marker_table);
  impl_->conn = std::make_unique<Connection>(impl_->options.path, impl_->options.busy_timeout_ms);
  impl_->write_sql = write_statement(impl_->options);
  impl_->write_st = impl_->conn->prepare(impl_->write_sql);
  if (!impl_->marker_table.empty()) {
    impl_->conn->exec("CREATE TABLE IF NOT EXISTS " + impl_->marker_table + " (batch_id TEXT PRIMARY KEY)");
    impl_->has_marker_sql = "SELECT 1 FROM " + impl_->marker_table + " WHERE batch_id = ?";
    impl_->marker_sql = "INSERT OR IGNORE INTO " + impl_->marker_table + " (batch_id) VALUES (?)";
    impl_->has_marker_st = impl_->conn->prepare(impl_->has_marker_sql);
    impl_->marker_st = impl_->conn->prepare(impl_->marker_sql);
  }
}

SqliteTableWriter::~SqliteTableWriter() { close(); }

void SqliteTableWriter::write(const std::vector<SqliteRow>& rows) {
  if (rows.empty()) return;
  impl_->in_transaction([&] {
    for (const auto& row : rows) {
      if (row.size() != impl_->options.columns.size()) {
        throw std::invalid_argument("SQLite sink: a row has " + std::to_string(row.size()) + " values for " +
                                    std::to_string(impl_->options.columns.size()) + " columns of " + impl_->options.table);
      }
      impl_->conn->run(impl_->write_st, impl_->write_sql, row);
    }
  });
}

bool SqliteTableWriter::has_marker(const std::string& batch_id) {
  if (impl_->has_marker_st == nullptr) throw std::logic_error("SqliteTableWriter: no marker table");
  return !impl_->conn->run(impl_->has_marker_st, impl_->has_marker_sql, {batch_id}).empty();
}

void SqliteTableWriter::write_marker(const std::string& batch_id) {
  if (impl_->marker_st == nullptr) throw std::logic_error("SqliteTableWriter: no marker table");
  impl_->in_transaction([&] { impl_->conn->run(impl_->marker_st, impl_->marker_sql, {batch_id}); });
}

void SqliteTableWriter::close() noexcept {
  if (!impl_ || !impl_->conn) return;
  impl_->finalize();
  impl_->conn.reset();
}

}  // namespace sluice::sqlite
