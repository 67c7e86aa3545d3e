// The RocksDB options every Sluice RocksDB instance uses (internal: includes RocksDB's headers). Shared by
// RocksDBStore and the benchmark's hand-written loop, so both run on the same options.
#pragma once

#include <rocksdb/options.h>

namespace sluice::rocksdb_options {

// Database options: create a new database, no flush on close (the directory is deleted right after), quiet
// info log, no periodic statistics dump, no fsync (nothing here must survive a crash: checkpoints do).
// Every column family gets the list-append merge operator.
rocksdb::Options db_options();
// Options of the column families of registered states (RocksDB's defaults plus the merge operator).
rocksdb::ColumnFamilyOptions column_family_options();
// Writes skip the write-ahead log (Flink's choice: recovery comes from checkpoints).
rocksdb::WriteOptions write_options();

}  // namespace sluice::rocksdb_options
