// Restores of one keyed operator subtask's state from a checkpoint on the local disk and from the same
// checkpoint on S3, the way a redeployed task restores (cluster::assign_subtask_state reads the state through
// the checkpoint storage, then the backend takes it):
//
//  - heap: ~`bytes` of serialized KeyAggregate state (a full checkpoint: one state file per subtask) read,
//    checksummed and sliced per key group, restored into a HashMap backend and decoded;
//  - rocksdb: ~`bytes` of RocksDB SST files (an incremental checkpoint, 200-byte random values) copied into a
//    new backend's working folder (S3: downloaded with ranged GETs, FileSystem::copy_to_local_file; local disk:
//    hard-linked), every file's size and XXH3-64 checked, the database opened.
//
// The checkpoint is written once to each directory; then restores alternate local / S3 `repeat` times. JSON:
// {"state_bytes", "files", "local": {"restore_s", "runs_s", phases}, "s3": {..., "requests", "bytes_received"},
//  "ratio_s3_to_local"}.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "fs/file_system_registry.h"
#include "fs/s3/s3_client.h"
#include "sluice/core/status.h"

namespace sluice::bench {

using Json = nlohmann::ordered_json;

struct RestoreTargets {
  std::string local_dir;   // checkpoint directory on the local disk
  std::string s3_dir;      // s3://bucket/prefix
  std::string work_dir;    // local scratch (RocksDB working folders)
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;
  const s3::S3Client* client = nullptr;  // the s3:// filesystem's client, for its counters
};

Result<Json> heap_restore(const RestoreTargets& targets, int64_t bytes, int32_t repeat);
Result<Json> rocksdb_restore(const RestoreTargets& targets, int64_t bytes, int32_t repeat);

}  // namespace sluice::bench
