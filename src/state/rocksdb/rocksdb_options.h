// The RocksDB options of Sluice's RocksDB instances (internal: includes RocksDB's headers). Shared by
// RocksDBStore and the benchmark's hand-written loop, so both run on the same options.
//
// instance_options() builds an instance's options in this order (the contract users see is in
// sluice/state/rocksdb_options_factory.h):
//   1. base: create a new database, no flush on close (the directory is deleted right after), quiet info log,
//      no periodic statistics dump, no fsync (nothing here must survive a crash: checkpoints do);
//   2. the predefined options (state.backend.rocksdb.predefined-options), each as Flink's PredefinedOptions:
//      DEFAULT                           nothing
//      SPINNING_DISK_OPTIMIZED           level compaction, level_compaction_dynamic_level_bytes,
//                                        max_background_jobs 4, max_open_files -1
//      SPINNING_DISK_OPTIMIZED_HIGH_MEM  dynamic level bytes, max_background_jobs 4, max_open_files -1,
//                                        block cache 256 MiB, block size 128 KiB, bloom filter 10 bits/key (full
//                                        filter), max_bytes_for_level_base 1 GiB, write buffers 4 x 64 MiB
//                                        merging 3, target_file_size_base 256 MiB
//      FLASH_SSD_OPTIMIZED               max_background_jobs 4, max_open_files -1
//      FLASH_SSD_OPTIMIZED_HIGH_MEM      (Sluice's) FLASH_SSD_OPTIMIZED + block cache 256 MiB, bloom filter 10
//                                        bits/key, dynamic level bytes, write buffers 4 x 64 MiB merging 2;
//                                        default 4 KiB blocks and 64 MiB files (SSDs read small blocks cheaply;
//                                        big blocks and files only amortize seeks on disks)
//      With managed memory the 256 MiB block caches are replaced by the shared cache (step 4).
//   3. the user's RocksDBOptionsFactory;
//   4. Sluice's non-negotiable settings: create_if_missing + error_if_exists, the list-append merge operator
//      on every column family, and with managed memory the shared block cache (index and filter blocks cached
//      with high priority, L0 and top-level index/filter pinned, as Flink) and write-buffer manager
//      (rocksdb_memory.h). Writes skip the write-ahead log (write_options()).
#pragma once

#include <rocksdb/options.h>
#include <rocksdb/status.h>

#include <memory>

#include "rocksdb_memory.h"
#include "sluice/core/status.h"
#include "sluice/state/state_backend.h"

namespace sluice::rocksdb_options {

// What one instance opens with. `shared` must outlive the database (it owns the cache and the write-buffer
// manager the options point at); null when memory is unbounded.
struct InstanceOptions {
  rocksdb::Options db;                          // database options + the default column family's
  rocksdb::ColumnFamilyOptions column_family;   // every state's column family
  std::shared_ptr<const rocksdb_memory::SharedResources> shared;
};

// kInvalidArgument for bad memory settings (rocksdb_memory::validate), a fixed-size write-back cache without a
// positive size, or, with managed memory, a factory that installed a table factory other than the block-based one.
Result<InstanceOptions> instance_options(const RocksDBStateBackendOptions& options);

// Step 2 alone, on top of whatever `db` and `cf` hold.
void apply_predefined(RocksDBPredefinedOptions predefined, rocksdb::DBOptions& db, rocksdb::ColumnFamilyOptions& cf);

// The options of an unmanaged DEFAULT instance without a factory (the benchmark's raw loop).
rocksdb::Options db_options();
rocksdb::ColumnFamilyOptions column_family_options();
// Writes skip the write-ahead log (Flink's choice: recovery comes from checkpoints).
rocksdb::WriteOptions write_options();

// A failed RocksDB call as a sluice Status. `what`: the operation and where ("RocksDB put in column family 'c'");
// `dir`: the instance's working directory. RocksDB's I/O errors are kIOError naming the directory, and a full
// disk (ENOSPC, RocksDB's NoSpace) says so; corruption is kCorruption; anything else kInternal.
Status rocksdb_failure(const rocksdb::Status& s, const std::string& what, const std::string& dir);

}  // namespace sluice::rocksdb_options
