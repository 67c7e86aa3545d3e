// The PostgreSQL target of `sluice guarantees --with-postgres` (a server of the user's or the test scripts'):
// the plain sink appends rows with non-transactional INSERTs flushed at every barrier (PostgresUpsertSink in
// kInsert mode), the idempotent sink upserts by key (PostgresUpsertSink), the write-ahead-log sink is
// PostgresWriteAheadSink (appending, batch then marker), the two-phase-commit sink PostgresTwoPhaseCommitSink
// (appending, PREPARE TRANSACTION at the barrier, COMMIT PREPARED on completion). Each run gets its own table
// "sluice_guarantees_<tag>", dropped after it has been read, and its own marker tables' rows (markers carry the
// run's job id). The server needs max_prepared_transactions > 0.
#pragma once

#include <string>

#include "guarantees/cell_job.h"

namespace sluice::guarantees {

class PostgresTarget final : public CellTarget {
 public:
  explicit PostgresTarget(std::string conninfo) : conninfo_(std::move(conninfo)) {}
  std::string name() const override { return "PostgreSQL"; }
  bool supports(SinkKind) const override { return true; }
  Status prepare(SinkKind kind, const std::string& run_dir, const std::string& tag) override;
  DataStreamSink<KeyCount> add_sink(const DataStream<KeyCount>& results, SinkKind kind, const std::string& run_dir,
                                    const std::string& tag, std::shared_ptr<std::atomic<int64_t>> marker_crash) override;
  Result<TargetContents> read(SinkKind kind, const std::string& run_dir, const std::string& tag) override;

 private:
  std::string conninfo_;
};

}  // namespace sluice::guarantees
