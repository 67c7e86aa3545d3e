#include "guarantees/embedded_target.h"

#include <filesystem>
#include <fstream>
#include <optional>

#include "sluice/connectors/file/file_sink.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/connectors/sqlite/sqlite_sinks.h"

namespace sluice::guarantees {
namespace {

std::string db_path(const std::string& run_dir) { return run_dir + "/target.db"; }
std::string out_dir(const std::string& run_dir) { return run_dir + "/out"; }

sqlite::SqliteTableOptions table(const std::string& run_dir, SinkKind kind) {
  sqlite::SqliteTableOptions t;
  t.path = db_path(run_dir);
  t.columns = {"k", "n"};
  if (kind == SinkKind::kIdempotent) {
    t.table = "counts";
    t.key_columns = {"k"};
  } else {
    t.table = "results";
    t.mode = sqlite::SqliteWriteMode::kInsert;
  }
  return t;
}

void encode_row(const KeyCount& r, sqlite::SqliteRow& row) {
  row.push_back(std::to_string(r.key));
  row.push_back(std::to_string(r.count));
}

}  // namespace

std::optional<KeyCount> parse_key_count(const std::string& line) {
  const size_t comma = line.find(',');
  if (comma == std::string::npos || comma == 0 || comma + 1 == line.size()) return std::nullopt;
  try {
    size_t used_k = 0, used_n = 0;
    KeyCount r{std::stoll(line.substr(0, comma), &used_k), std::stoll(line.substr(comma + 1), &used_n)};
    if (used_k != comma || used_n != line.size() - comma - 1) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Result<std::vector<KeyCount>> read_result_files(const std::string& dir) {
  std::vector<KeyCount> rows;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return rows;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.empty() || name[0] == '.' || name[0] == '_') continue;
    std::ifstream in(e.path());
    if (!in) return Status::io_error("cannot read result file " + e.path().string());
    std::string line;
    while (std::getline(in, line)) {
      auto r = parse_key_count(line);
      if (!r) return Status::corruption("result file " + e.path().string() + ": malformed line '" + line + "'");
      rows.push_back(*r);
    }
  }
  if (ec) return Status::io_error("cannot list result folder " + dir + ": " + ec.message());
  return rows;
}

Status EmbeddedTarget::prepare(SinkKind kind, const std::string& run_dir, const std::string&) {
  switch (kind) {
    case SinkKind::kIdempotent:
      return sqlite::sqlite_execute(db_path(run_dir), "CREATE TABLE counts (k INTEGER PRIMARY KEY, n INTEGER NOT NULL)");
    case SinkKind::kWriteAheadLog:
      return sqlite::sqlite_execute(db_path(run_dir), "CREATE TABLE results (k INTEGER NOT NULL, n INTEGER NOT NULL)");
    case SinkKind::kPlain:
    case SinkKind::kTwoPhaseCommit: {
      std::error_code ec;
      std::filesystem::create_directories(out_dir(run_dir), ec);
      if (ec) return Status::io_error("cannot create " + out_dir(run_dir) + ": " + ec.message());
      return Status::ok();
    }
  }
  return Status::invalid_argument("unknown sink kind");
}

DataStreamSink<KeyCount> EmbeddedTarget::add_sink(const DataStream<KeyCount>& results, SinkKind kind,
                                                  const std::string& run_dir, const std::string&,
                                                  std::shared_ptr<std::atomic<int64_t>> marker_crash) {
  switch (kind) {
    case SinkKind::kPlain:
      return results.sink_to(file::FileSink<KeyCount>::for_row_format(out_dir(run_dir), encode_key_count));
    case SinkKind::kTwoPhaseCommit:
      return results.sink_to(file::TransactionalFileSink<KeyCount>(out_dir(run_dir), encode_key_count));
    case SinkKind::kIdempotent:
      return results.sink_to(sqlite::SqliteUpsertSink<KeyCount>(table(run_dir, kind), encode_row));
    case SinkKind::kWriteAheadLog:
      return results.sink_to(CrashBeforeMarkerSink<KeyCount>(
          std::make_shared<sqlite::SqliteWriteAheadSink<KeyCount>>(table(run_dir, kind), encode_row),
          std::move(marker_crash)));
  }
  throw std::invalid_argument("unknown sink kind");
}

Result<TargetContents> EmbeddedTarget::read(SinkKind kind, const std::string& run_dir, const std::string&) {
  TargetContents c;
  if (kind == SinkKind::kPlain || kind == SinkKind::kTwoPhaseCommit) {
    SLUICE_ASSIGN_OR_RETURN(c.rows, read_result_files(out_dir(run_dir)));
    return c;
  }
  c.upserted = kind == SinkKind::kIdempotent;
  SLUICE_ASSIGN_OR_RETURN(auto rows, sqlite::sqlite_query(db_path(run_dir), c.upserted ? "SELECT k, n FROM counts"
                                                                                       : "SELECT k, n FROM results"));
  for (const auto& row : rows) {
    auto r = row.size() == 2 ? parse_key_count(row[0] + "," + row[1]) : std::nullopt;
    if (!r) return Status::corruption("SQLite " + db_path(run_dir) + ": a malformed result row");
    c.rows.push_back(*r);
  }
  return c;
}

}  // namespace sluice::guarantees
