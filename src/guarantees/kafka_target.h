// The Kafka target of `sluice guarantees --with-kafka` (a broker of the user's or the test scripts'): each run
// writes to its own single-partition topic "sluice-guarantees-<tag>". The plain sink is KafkaSink with
// AT_LEAST_ONCE (records flushed at every barrier, no transactions); the idempotent sink is the same with the
// result's key as the record key, read as a table - the last value per key, what a compacted topic keeps and
// Flink's upsert-kafka reads; the two-phase-commit sink is KafkaSink with EXACTLY_ONCE (a transaction per subtask
// and checkpoint), read with isolation.level=read_committed. Kafka has no write-ahead-log sink: that cell is
// not measured on Kafka. Results are read after the job finished, to the partition's end.
#pragma once

#include <string>

#include "guarantees/cell_job.h"

namespace sluice::guarantees {

class KafkaTarget final : public CellTarget {
 public:
  explicit KafkaTarget(std::string bootstrap) : bootstrap_(std::move(bootstrap)) {}
  std::string name() const override { return "Kafka"; }
  bool supports(SinkKind kind) const override { return kind != SinkKind::kWriteAheadLog; }
  Status prepare(SinkKind kind, const std::string& run_dir, const std::string& tag) override;
  DataStreamSink<KeyCount> add_sink(const DataStream<KeyCount>& results, SinkKind kind, const std::string& run_dir,
                                    const std::string& tag, std::shared_ptr<std::atomic<int64_t>> marker_crash) override;
  Result<TargetContents> read(SinkKind kind, const std::string& run_dir, const std::string& tag) override;

 private:
  std::string bootstrap_;
};

}  // namespace sluice::guarantees
