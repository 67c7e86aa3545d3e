// RocksDBOptionsFactory: a user hook that changes the options every RocksDB instance of the job opens with
// (Flink's RocksDBOptionsFactory: createDBOptions / createColumnOptions). Set it on
// RocksDBStateBackendOptions::options_factory (state_backend.h), or with
// StreamExecutionEnvironment::set_rocksdb_options_factory for a job.
//
// This is the only public header that includes RocksDB's headers; include it only where a factory is
// implemented (its translation unit needs RocksDB's include path and links RocksDB::rocksdb-shared).
//
// Order in which an instance's options are built (src/state/rocksdb/rocksdb_options.h):
//   1. Sluice's base settings (quiet info log, no statistics dump, no fsync, no flush on close),
//   2. the predefined options (state.backend.rocksdb.predefined-options),
//   3. this factory: create_db_options, then create_column_options (once per instance: every column family of
//      the instance, one per registered state, gets the result),
//   4. Sluice's non-negotiable settings, which win over the factory: a fresh database in the working directory
//      (create_if_missing, error_if_exists), the list-append merge operator on every column family, and with
//      managed memory the shared block cache (with index and filter blocks charged to it) and write-buffer
//      manager (rocksdb_memory.h). Writes always skip the write-ahead log (WriteOptions are not the factory's).
//      With managed memory the table factory must stay block-based (its other settings, e.g. block size and
//      filter policy, are kept); anything else fails the open with kInvalidArgument.
//
// Thread-safety: the functions are called on the task threads that open instances, possibly at the same time,
// so they must be safe to call concurrently (typically they only set fields of their argument).
#pragma once

#include <rocksdb/options.h>

namespace sluice {

class RocksDBOptionsFactory {
 public:
  virtual ~RocksDBOptionsFactory() = default;

  // Changes the database-wide options in place (max_background_jobs, max_open_files, ...).
  virtual void create_db_options(rocksdb::DBOptions& options) const { (void)options; }
  // Changes the column family options in place (write_buffer_size, table_factory, compaction settings, ...);
  // every state's column family uses the result.
  virtual void create_column_options(rocksdb::ColumnFamilyOptions& options) const { (void)options; }
};

}  // namespace sluice
