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

#include <rocksdb/compaction_filter.h>

#include "sluice/state/rocksdb/rocksdb_store.h"

namespace sluice {

std::shared_ptr<rocksdb::CompactionFilterFactory> make_ttl_compaction_filter_factory(
    const TtlCompactionFilterConfig& config);

}  // namespace sluice
