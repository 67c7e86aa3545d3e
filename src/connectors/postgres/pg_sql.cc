// The pure parts of the PostgreSQL sinks: SQL text, transaction ids, the roll-back rule, backoff.
#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "sluice/connectors/postgres/postgres_options.h"
#include "stable_hash.h"

namespace sluice::postgres {

namespace {
void require(bool ok, const std::string& what, const std::string& message) {
  if (!ok) throw std::invalid_argument(what + ": " + message);
}
std::string key_of(const PostgresTableOptions& table, const std::vector<size_t>& key_index, const Row& row) {
  std::string key;
  for (size_t i : key_index) {
    if (i >= row.size()) throw std::invalid_argument("PostgreSQL sink: row with " + std::to_string(row.size()) +
                                                     " values for table '" + table.table + "'");
    const auto& v = row[i];
    key += v ? 'v' : 'n';
    if (v) key += std::to_string(v->size()) + ":" + *v;
  }
  return key;
}
}  // namespace

void validate(const PostgresConnectionOptions& o, const std::string& what) {
  require(!o.conninfo.empty(), what, "conninfo is empty (expected a libpq connection string)");
  require(o.retry.max_attempts >= 1, what, "retry.max_attempts must be >= 1, got " + std::to_string(o.retry.max_attempts));
  require(o.retry.initial_backoff_ms >= 0 && o.retry.max_backoff_ms >= o.retry.initial_backoff_ms, what,
          "retry backoff must satisfy 0 <= initial_backoff_ms <= max_backoff_ms");
}

void validate(const PostgresTableOptions& o, const std::string& what) {
  require(!o.table.empty(), what, "table is empty");
  require(!o.columns.empty(), what, "columns is empty (expected the row's column names)");
  std::set<std::string> cols(o.columns.begin(), o.columns.end());
  require(cols.size() == o.columns.size(), what, "columns name a column twice");
  for (const auto& c : o.columns) require(!c.empty(), what, "a column name is empty");
  if (o.mode == WriteMode::kUpsert) {
    require(!o.key_columns.empty(), what, "key_columns is empty (an upsert needs the columns of a unique index)");
  }
  for (const auto& k : o.key_columns) {
    require(cols.count(k) > 0, what, "key column '" + k + "' is not one of columns");
  }
}

int64_t backoff_ms(const RetryOptions& retry, int32_t attempt) {
  int64_t d = retry.initial_backoff_ms;
  for (int32_t i = 0; i < attempt && d < retry.max_backoff_ms; ++i) d = d == 0 ? 0 : d * 2;
  return std::min(d, retry.max_backoff_ms);
}

std::string quote_literal(std::string_view value) {
  std::string out = "E'";
  out.reserve(value.size() + 3);
  for (char c : value) {
    if (c == '\0') throw std::invalid_argument("PostgreSQL sink: a text value holds a NUL byte, which PostgreSQL text cannot store");
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  out += '\'';
  return out;
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '\0') throw std::invalid_argument("PostgreSQL sink: an identifier holds a NUL byte");
    if (c == '"') out += c;
    out += c;
  }
  out += '"';
  return out;
}

std::string quote_qualified_name(std::string_view name) {
  size_t dot = name.find('.');
  if (dot == std::string_view::npos) return quote_identifier(name);
  return quote_identifier(name.substr(0, dot)) + "." + quote_identifier(name.substr(dot + 1));
}

std::vector<Row> last_row_per_key(const PostgresTableOptions& table, std::vector<Row> rows) {
  if (table.mode != WriteMode::kUpsert) return rows;
  std::vector<size_t> key_index;
  for (const auto& k : table.key_columns) {
    key_index.push_back(static_cast<size_t>(std::find(table.columns.begin(), table.columns.end(), k) - table.columns.begin()));
  }
  std::map<std::string, size_t> last;  // key -> index of its last row
  for (size_t i = 0; i < rows.size(); ++i) last[key_of(table, key_index, rows[i])] = i;
  if (last.size() == rows.size()) return rows;
  std::vector<bool> keep(rows.size(), false);
  for (const auto& [key, i] : last) keep[i] = true;
  std::vector<Row> out;
  out.reserve(last.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (keep[i]) out.push_back(std::move(rows[i]));
  }
  return out;
}

std::string build_write_statement(const PostgresTableOptions& table, const std::vector<Row>& rows) {
  std::string sql = "INSERT INTO " + quote_qualified_name(table.table) + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) sql += (i ? ", " : "") + quote_identifier(table.columns[i]);
  sql += ") VALUES ";
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    if (row.size() != table.columns.size()) {
      throw std::invalid_argument("PostgreSQL sink: a row for table '" + table.table + "' has " +
                                  std::to_string(row.size()) + " values, expected " +
                                  std::to_string(table.columns.size()) + " (one per column)");
    }
    sql += r ? ",(" : "(";
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) sql += ',';
      sql += row[i] ? quote_literal(*row[i]) : "NULL";
    }
    sql += ')';
  }
  if (table.mode == WriteMode::kUpsert) {
    sql += " ON CONFLICT (";
    for (size_t i = 0; i < table.key_columns.size(); ++i) sql += (i ? ", " : "") + quote_identifier(table.key_columns[i]);
    sql += ")";
    std::string set;
    for (const auto& c : table.columns) {
      if (std::find(table.key_columns.begin(), table.key_columns.end(), c) != table.key_columns.end()) continue;
      set += (set.empty() ? "" : ", ") + quote_identifier(c) + " = EXCLUDED." + quote_identifier(c);
    }
    sql += set.empty() ? " DO NOTHING" : " DO UPDATE SET " + set;
  }
  return sql;
}

std::string transaction_prefix(const std::string& configured, const std::string& job_name,
                               const std::string& operator_uid) {
  std::string prefix = configured;
  if (prefix.empty()) {
    if (operator_uid.empty()) {
      throw std::invalid_argument(
          "PostgreSQL sink: set a uid on the sink (sink_to(...).uid(\"...\")) or a transaction_id_prefix: its "
          "transaction ids must be stable across runs");
    }
    prefix = job_name + "/" + operator_uid;
  }
  if (prefix.size() > 120) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(stable_hash(prefix)));
    prefix = prefix.substr(0, 100) + "~" + hash;
  }
  return prefix;
}

std::string transaction_gid(const std::string& prefix, int32_t subtask, int64_t checkpoint) {
  return prefix + ":" + std::to_string(subtask) + ":" + std::to_string(checkpoint);
}

std::optional<ParsedGid> parse_gid(const std::string& gid, const std::string& prefix) {
  if (gid.size() <= prefix.size() + 1 || gid.compare(0, prefix.size(), prefix) != 0 || gid[prefix.size()] != ':') {
    return std::nullopt;
  }
  const std::string rest = gid.substr(prefix.size() + 1);
  const size_t colon = rest.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) return std::nullopt;
  const std::string a = rest.substr(0, colon), b = rest.substr(colon + 1);
  auto digits = [](const std::string& s) { return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  if (!digits(a) || !digits(b) || a.size() > 9 || b.size() > 18) return std::nullopt;
  return ParsedGid{std::stoi(a), std::stoll(b)};
}

std::vector<std::string> transactions_to_roll_back(const std::vector<std::string>& prepared, const std::string& prefix,
                                                   int32_t subtask, int32_t parallelism, bool restored,
                                                   int64_t first_after_restore, const std::set<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& gid : prepared) {
    auto p = parse_gid(gid, prefix);
    if (!p || keep.count(gid) > 0) continue;
    const bool mine = p->subtask == subtask || (subtask == 0 && parallelism > 0 && p->subtask >= parallelism);
    if (!mine) continue;
    if (restored && p->checkpoint < first_after_restore) continue;
    out.push_back(gid);
  }
  return out;
}

}  // namespace sluice::postgres
