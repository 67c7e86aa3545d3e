// Options shared by the PostgreSQL sinks (libpqxx 6.x), and the pure helpers they are built from: SQL text for
// a batch of rows, transaction ids of the two-phase-commit sink and which lingering prepared transactions a
// subtask rolls back, the retry backoff. See docs/postgres.md for the guarantees of each sink.
//
// Rows are text values in the order of PostgresTableOptions::columns (std::nullopt is SQL NULL); PostgreSQL
// converts them to the column types, as it does for COPY text input. Identifiers are quoted, so they are
// case-sensitive as written. Errors: bad options throw std::invalid_argument naming the option; database errors
// throw std::runtime_error with the server's message (the task fails and recovers). Thread-safety: the functions
// here are pure and keep no state; the option structs are plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::postgres {

using Row = std::vector<std::optional<std::string>>;
// Fills `row` (cleared by the caller) with one value per column for a record.
template <class T>
using RowEncoder = std::function<void(const T&, Row& row)>;

// Retries of an operation that failed because the connection broke or the server was shutting down or starting
// (SQLSTATE class 08, 57P01-57P03): reconnect and run it again after a backoff that doubles from
// initial_backoff_ms up to max_backoff_ms, at most max_attempts times in all (then the error fails the task, whose
// restart strategy takes over). Other SQL errors are not retried.
struct RetryOptions {
  int32_t max_attempts = 12;        // >= 1
  int64_t initial_backoff_ms = 50;  // >= 0
  int64_t max_backoff_ms = 2'000;   // >= initial_backoff_ms
};

struct PostgresConnectionOptions {
  std::string conninfo;  // a libpq connection string ("host=... port=... dbname=...") or URI; required
  RetryOptions retry;
};

enum class WriteMode {
  kUpsert,  // INSERT ... ON CONFLICT (key columns) DO UPDATE SET the other columns (the last row per key wins)
  kInsert,  // plain INSERT: every row appends
};

struct PostgresTableOptions {
  std::string table;                     // "name" or "schema.name"; required
  std::vector<std::string> columns;      // the row's columns in order; required
  std::vector<std::string> key_columns;  // the conflict target (a unique index); required for kUpsert
  WriteMode mode = WriteMode::kUpsert;
};

// Throws std::invalid_argument naming `what` and the bad field.
void validate(const PostgresConnectionOptions& options, const std::string& what);
void validate(const PostgresTableOptions& options, const std::string& what);

// The delay before retry `attempt` (0-based): initial * 2^attempt, capped at max. Deterministic.
int64_t backoff_ms(const RetryOptions& retry, int32_t attempt);

// An SQL string literal for `value` (E'...' with ' and \ escaped: right whatever standard_conforming_strings
// says). Throws std::invalid_argument for a NUL byte, which PostgreSQL text cannot hold.
std::string quote_literal(std::string_view value);
// A double-quoted identifier; "schema.name" becomes "schema"."name".
std::string quote_identifier(std::string_view name);
std::string quote_qualified_name(std::string_view name);

// For kUpsert, the last row of each key in `rows`, in the order of those last rows (one statement cannot update
// a row twice); for kInsert, `rows` unchanged.
std::vector<Row> last_row_per_key(const PostgresTableOptions& table, std::vector<Row> rows);
// One INSERT statement writing `rows` (non-empty, deduplicated for kUpsert). Throws std::invalid_argument when a
// row has the wrong number of values.
std::string build_write_statement(const PostgresTableOptions& table, const std::vector<Row>& rows);

// ---- two-phase commit: global transaction ids -------------------------------------------------------------

// The stable prefix of a sink's transaction ids: `configured` when set, else "<job name>/<operator uid>" (as
// Flink's Kafka sink derives transactional ids; the job id changes per run, so it is not part of it). Throws
// std::invalid_argument when neither a configured prefix nor the uid is there. Prefixes longer than 120 bytes
// are shortened with a hash (PostgreSQL's gid limit is 200 bytes).
std::string transaction_prefix(const std::string& configured, const std::string& job_name,
                               const std::string& operator_uid);
// "<prefix>:<subtask>:<checkpoint>".
std::string transaction_gid(const std::string& prefix, int32_t subtask, int64_t checkpoint);
struct ParsedGid {
  int32_t subtask = -1;
  int64_t checkpoint = -1;
};
// The subtask and checkpoint of a gid made with `prefix`; nullopt for any other gid.
std::optional<ParsedGid> parse_gid(const std::string& gid, const std::string& prefix);

// Which of the server's prepared transactions (`prepared`, every gid in pg_prepared_xacts) subtask `subtask` of
// `parallelism` rolls back when it starts (the file sink's rule, transactional_file_sink.h): only gids of this
// prefix carrying its own index - and, for subtask 0, indexes >= parallelism (a scale-down leaves
// nobody else to) - that `keep` (the restored state's gids) does not hold. After a restore only those prepared
// for checkpoints >= first_after_restore: earlier ones are in the restored state of some subtask, which commits
// them. Without a restore (restored = false), every such gid: no state refers to them.
std::vector<std::string> transactions_to_roll_back(const std::vector<std::string>& prepared, const std::string& prefix,
                                                   int32_t subtask, int32_t parallelism, bool restored,
                                                   int64_t first_after_restore, const std::set<std::string>& keep);

}  // namespace sluice::postgres
