// The State TTL compaction filter of the RocksDB backend (Flink's cleanupInRocksdbCompactFilter; internal:
// includes RocksDB's headers). Installed per column family of a TTL state (RocksDBStore::column_family).
//
// Values (Value, Reducing, Aggregating, map entries) start with the TtlValue timestamp: an expired one is
// removed (RocksDB turns it into a deletion, so older versions do not reappear). List values and list merge
// operands are elements back to back, each with its timestamp: expired elements are cut out, an all-expired
// list is removed. Bytes that do not parse are kept (the read path reports them). Current time comes from the
// config's clock, read once per query_time_after_num_entries values.
#pragma once

#include <memory>
#include <mutex>

#include <rocksdb/compaction_filter.h>

#include "sluice/detail/state/rocksdb/rocksdb_store.h"

namespace sluice {

std::shared_ptr<rocksdb::CompactionFilterFactory> make_ttl_compaction_filter_factory(
    const TtlCompactionFilterConfig& config);

// For a column family that exists before its state is registered (one opened from the files of an incremental
// checkpoint: RocksDB fixes a column family's compaction filter factory when it opens it). Filters nothing
// until configure() gives it the state's TTL, the way Flink configures its FlinkCompactionFilter after the
// column family is created. configure() from the task thread, CreateCompactionFilter from RocksDB's background
// threads: guarded by a mutex (taken once per compaction, not per value).
class DeferredTtlCompactionFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  const char* Name() const override { return "SluiceDeferredTtlCompactionFilterFactory"; }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  void configure(const TtlCompactionFilterConfig& config);

 private:
  std::mutex mu_;
  std::shared_ptr<rocksdb::CompactionFilterFactory> configured_;  // guarded by mu_; null until configure()
};

}  // namespace sluice
