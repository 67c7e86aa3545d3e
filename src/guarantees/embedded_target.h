// The default target of `sluice guarantees`, with no server: files for the plain sink (file::FileSink) and the
// two-phase-commit sink (file::TransactionalFileSink), an embedded SQLite database for the idempotent sink
// (sqlite::SqliteUpsertSink, one row per key) and the write-ahead-log sink (sqlite::SqliteWriteAheadSink,
// results appended, markers in a second transaction). Everything lives in the run's folder.
#pragma once

#include "guarantees/cell_job.h"

namespace sluice::guarantees {

class EmbeddedTarget final : public CellTarget {
 public:
  std::string name() const override { return "files + SQLite"; }
  bool supports(SinkKind) const override { return true; }
  Status prepare(SinkKind kind, const std::string& run_dir, const std::string& tag) override;
  DataStreamSink<KeyCount> add_sink(const DataStream<KeyCount>& results, SinkKind kind, const std::string& run_dir,
                                    const std::string& tag, std::shared_ptr<std::atomic<int64_t>> marker_crash) override;
  Result<TargetContents> read(SinkKind kind, const std::string& run_dir, const std::string& tag) override;
};

// The committed lines "<key>,<count>" of the visible files in `dir` (names not starting with '.' or '_').
Result<std::vector<KeyCount>> read_result_files(const std::string& dir);
// Parses "<key>,<count>"; nullopt when malformed.
std::optional<KeyCount> parse_key_count(const std::string& line);

}  // namespace sluice::guarantees
