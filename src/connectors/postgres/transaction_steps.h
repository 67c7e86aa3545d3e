// The SQL steps shared by the two-phase-commit writer and committer (and the write-ahead-log target): the marker
// table, writing rows inside an open transaction, the per-gid advisory lock that orders the writer's PREPARE
// before the committer's COMMIT PREPARED, the writers' fence. Private to connectors/postgres.
#pragma once

#include <string>
#include <vector>

#include "pg_session.h"

namespace sluice::postgres {

// CREATE TABLE IF NOT EXISTS `table` (gid text PRIMARY KEY, written_at timestamptz DEFAULT now()); tolerates a
// concurrent creation by another subtask.
void ensure_marker_table(pqxx::connection& c, const std::string& table);
// Runs a DDL statement that may race with the same statement of another subtask (duplicate type / table errors
// from concurrent CREATE ... IF NOT EXISTS are ignored).
void exec_ddl(pqxx::connection& c, const std::string& sql);
// Inside an open transaction: the rows (deduplicated per key for upserts) in statements of at most max_rows.
void write_rows(pqxx::connection& c, const PostgresTableOptions& table, std::vector<Row> rows, int32_t max_rows);
bool marker_exists(pqxx::connection& c, const std::string& table, const std::string& gid);
bool is_prepared(pqxx::connection& c, const std::string& gid);
// Session-level advisory lock on a 64-bit hash of the gid (waits), and its release.
void lock_gid(pqxx::connection& c, const std::string& gid);
void unlock_gid(pqxx::connection& c, const std::string& gid);
// The application_name of a subtask's background writer sessions (fencing looks for it).
std::string writer_application_name(const std::string& prefix, int32_t subtask);

// The fence of the two-phase-commit writers (postgres_two_phase_commit_sink.h, "Fencing"): one row per prefix and
// subtask naming the writer that may prepare transactions.
// CREATE TABLE IF NOT EXISTS `table` (prefix text, subtask integer, writer text, written_at timestamptz, primary key
// (prefix, subtask)); tolerates a concurrent creation by another subtask.
void ensure_fence_table(pqxx::connection& c, const std::string& table);
// The writer the fence of (prefix, subtask) names; "" when there is no such row. With `for_share` (inside an open
// transaction) the row stays share-locked until that transaction ends - or, once it is prepared, until it is
// committed or rolled back.
std::string fence_writer(pqxx::connection& c, const std::string& table, const std::string& prefix, int32_t subtask,
                         bool for_share);
// In one transaction: sets the fence of (prefix, subtask) to `writer` and, for subtask 0, of every index >= parallelism
// of the prefix (a scale-down leaves nobody else to fence those). Waits at most `lock_timeout_ms` for transactions
// that hold one of those rows (prepared ones of earlier writers), then throws pqxx::sql_error with SQLSTATE 55P03
// (lock_not_available).
void take_fence(pqxx::connection& c, const std::string& table, const std::string& prefix, int32_t subtask,
                int32_t parallelism, const std::string& writer, int64_t lock_timeout_ms);

}  // namespace sluice::postgres
