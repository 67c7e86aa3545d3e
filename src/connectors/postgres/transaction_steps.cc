#include "transaction_steps.h"

#include "stable_hash.h"

#include <algorithm>
#include <cstdio>

namespace sluice::postgres {

void exec_ddl(pqxx::connection& c, const std::string& sql) {
  try {
    exec(c, sql);
  } catch (const pqxx::sql_error& e) {
    // 23505 / 42P07 / 42710: another subtask created the same table (or its row type) at the same moment.
    if (e.sqlstate() != "23505" && e.sqlstate() != "42P07" && e.sqlstate() != "42710") throw;
  }
}

void ensure_marker_table(pqxx::connection& c, const std::string& table) {
  exec_ddl(c, "CREATE TABLE IF NOT EXISTS " + quote_qualified_name(table) +
                  " (gid text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now())");
}

void write_rows(pqxx::connection& c, const PostgresTableOptions& table, std::vector<Row> rows, int32_t max_rows) {
  rows = last_row_per_key(table, std::move(rows));
  pqxx::nontransaction tx(c);
  for (size_t i = 0; i < rows.size(); i += static_cast<size_t>(max_rows)) {
    const size_t end = std::min(rows.size(), i + static_cast<size_t>(max_rows));
    std::vector<Row> chunk(std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(i)),
                           std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(end)));
    tx.exec(build_write_statement(table, chunk));
  }
}

bool marker_exists(pqxx::connection& c, const std::string& table, const std::string& gid) {
  return !exec(c, "SELECT 1 FROM " + quote_qualified_name(table) + " WHERE gid = " + quote_literal(gid)).empty();
}

bool is_prepared(pqxx::connection& c, const std::string& gid) {
  return !exec(c, "SELECT 1 FROM pg_prepared_xacts WHERE gid = " + quote_literal(gid)).empty();
}

void lock_gid(pqxx::connection& c, const std::string& gid) {
  exec(c, "SELECT pg_advisory_lock(hashtextextended(" + quote_literal(gid) + ", 0))");
}

void unlock_gid(pqxx::connection& c, const std::string& gid) {
  exec(c, "SELECT pg_advisory_unlock(hashtextextended(" + quote_literal(gid) + ", 0))");
}

std::string writer_application_name(const std::string& prefix, int32_t subtask) {
  const uint64_t h = stable_hash(prefix);  // the same name in every process
  char buf[64];
  std::snprintf(buf, sizeof buf, "sluice-2pc-%016llx-%d", static_cast<unsigned long long>(h), subtask);
  return buf;
}

void ensure_fence_table(pqxx::connection& c, const std::string& table) {
  exec_ddl(c, "CREATE TABLE IF NOT EXISTS " + quote_qualified_name(table) +
                  " (prefix text NOT NULL, subtask integer NOT NULL, writer text NOT NULL, "
                  "written_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (prefix, subtask))");
}

std::string fence_writer(pqxx::connection& c, const std::string& table, const std::string& prefix, int32_t subtask,
                         bool for_share) {
  const auto r = exec(c, "SELECT writer FROM " + quote_qualified_name(table) + " WHERE prefix = " + quote_literal(prefix) +
                             " AND subtask = " + std::to_string(subtask) + (for_share ? " FOR SHARE" : ""));
  return r.empty() ? std::string() : std::string(r[0][0].c_str());
}

void take_fence(pqxx::connection& c, const std::string& table, const std::string& prefix, int32_t subtask,
                int32_t parallelism, const std::string& writer, int64_t lock_timeout_ms) {
  const std::string t = quote_qualified_name(table);
  exec(c, "BEGIN");
  try {
    exec(c, "SET LOCAL lock_timeout = " + std::to_string(lock_timeout_ms));
    exec(c, "INSERT INTO " + t + " (prefix, subtask, writer) VALUES (" + quote_literal(prefix) + ", " +
                std::to_string(subtask) + ", " + quote_literal(writer) +
                ") ON CONFLICT (prefix, subtask) DO UPDATE SET writer = EXCLUDED.writer, written_at = now()");
    if (subtask == 0) {
      exec(c, "UPDATE " + t + " SET writer = " + quote_literal(writer) + ", written_at = now() WHERE prefix = " +
                  quote_literal(prefix) + " AND subtask >= " + std::to_string(parallelism));
    }
    exec(c, "COMMIT");
  } catch (...) {
    try {
      exec(c, "ROLLBACK");
    } catch (...) {  // a broken connection rolls back by itself; the first error is the one to report
    }
    throw;
  }
}

}  // namespace sluice::postgres
