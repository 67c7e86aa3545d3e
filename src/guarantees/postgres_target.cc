#include "guarantees/postgres_target.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <cctype>

#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "sluice/connectors/postgres/postgres_upsert_sink.h"
#include "sluice/connectors/postgres/postgres_write_ahead_sink.h"

namespace sluice::guarantees {
namespace {

std::string table_name(const std::string& tag) {
  std::string t = "sluice_guarantees_" + tag;
  std::replace_if(t.begin(), t.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return t;
}

postgres::PostgresConnectionOptions connection(const std::string& conninfo) {
  postgres::PostgresConnectionOptions c;
  c.conninfo = conninfo;
  return c;
}

postgres::PostgresTableOptions table(const std::string& tag, SinkKind kind) {
  postgres::PostgresTableOptions t;
  t.table = table_name(tag);
  t.columns = {"k", "n"};
  t.key_columns = {"k"};
  t.mode = kind == SinkKind::kIdempotent ? postgres::WriteMode::kUpsert : postgres::WriteMode::kInsert;
  return t;
}

void encode_row(const KeyCount& r, postgres::Row& row) {
  row.push_back(std::to_string(r.key));
  row.push_back(std::to_string(r.count));
}

Status run_sql(const std::string& conninfo, const std::string& sql) {
  try {
    pqxx::connection c(conninfo);
    pqxx::nontransaction tx(c);
    tx.exec(sql);
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::io_error("PostgreSQL: " + std::string(e.what()) + " in: " + sql);
  }
}

}  // namespace

Status PostgresTarget::prepare(SinkKind kind, const std::string&, const std::string& tag) {
  const std::string t = table_name(tag);
  return run_sql(conninfo_, "DROP TABLE IF EXISTS " + t + "; CREATE TABLE " + t + " (k bigint" +
                                (kind == SinkKind::kIdempotent ? " PRIMARY KEY" : " NOT NULL") + ", n bigint NOT NULL)");
}

DataStreamSink<KeyCount> PostgresTarget::add_sink(const DataStream<KeyCount>& results, SinkKind kind,
                                                  const std::string&, const std::string& tag,
                                                  std::shared_ptr<std::atomic<int64_t>> marker_crash) {
  switch (kind) {
    case SinkKind::kPlain:
    case SinkKind::kIdempotent: {
      postgres::PostgresUpsertSinkOptions o;
      o.connection = connection(conninfo_);
      o.table = table(tag, kind);
      return results.sink_to(postgres::PostgresUpsertSink<KeyCount>(o, encode_row));
    }
    case SinkKind::kWriteAheadLog: {
      postgres::PostgresWriteAheadSinkOptions o;
      o.connection = connection(conninfo_);
      o.table = table(tag, kind);
      return results.sink_to(CrashBeforeMarkerSink<KeyCount>(
          std::make_shared<postgres::PostgresWriteAheadSink<KeyCount>>(o, encode_row), std::move(marker_crash)));
    }
    case SinkKind::kTwoPhaseCommit: {
      postgres::PostgresTwoPhaseCommitSinkOptions o;
      o.connection = connection(conninfo_);
      o.table = table(tag, kind);
      o.transaction_id_prefix = table_name(tag);  // unique per run: no run recovers another's transactions
      return results.sink_to(postgres::PostgresTwoPhaseCommitSink<KeyCount>(o, encode_row));
    }
  }
  throw std::invalid_argument("unknown sink kind");
}

Result<TargetContents> PostgresTarget::read(SinkKind kind, const std::string&, const std::string& tag) {
  TargetContents c;
  c.upserted = kind == SinkKind::kIdempotent;
  const std::string t = table_name(tag);
  try {
    pqxx::connection conn(conninfo_);
    pqxx::nontransaction tx(conn);
    for (const auto& row : tx.exec("SELECT k, n FROM " + t)) {
      c.rows.push_back(KeyCount{row[0].as<int64_t>(), row[1].as<int64_t>()});
    }
    tx.exec("DROP TABLE " + t);
  } catch (const std::exception& e) {
    return Status::io_error("PostgreSQL: reading " + t + ": " + e.what());
  }
  return c;
}

}  // namespace sluice::guarantees
