// One run of bench/checkpoint's keyed job (keyed_job.h, an unbounded Nexmark source; its keys dealt in turn so
// the state holds all `keys` after a warm-up without checkpoints) with checkpoints to one directory, triggered by
// the harness every `interval_ms` from then on, cancelled once `checkpoints` of them have completed: each one's end-to-end duration and sizes from the coordinator's
// statistics, and, when the directory is on S3, the requests the job's S3 client sent between the first and the
// last of them it saw.
//
// Thread-safety: one run at a time per registry (the S3 counters are the client's, not the run's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fs/file_system_registry.h"
#include "fs/s3/s3_client.h"
#include "sluice/config/configuration.h"
#include "sluice/core/status.h"

namespace sluice::bench {

enum class StateKind { kHeapFull, kRocksDBIncremental };

struct CheckpointRunConfig {
  StateKind state = StateKind::kHeapFull;
  int64_t keys = 100'000;
  int32_t parallelism = 2;
  int64_t interval_ms = 500;          // between checkpoint triggers (the next waits for the previous one)
  int32_t checkpoints = 10;           // completed checkpoints before the job is cancelled
  int64_t timeout_s = 300;            // cancelled after this long (warm-up included) even with fewer checkpoints
  std::string checkpoint_dir;         // a local path or s3://bucket/prefix
  std::string rocksdb_local_dir;      // RocksDB working folders (StateKind::kRocksDBIncremental)
  Configuration base;                 // the s3.* keys and -D options
};

struct CheckpointRun {
  std::vector<int64_t> end_to_end_ms;           // per completed checkpoint
  std::vector<int64_t> checkpointed_bytes;      // bytes each checkpoint uploaded
  std::vector<int64_t> state_bytes;             // full state each checkpoint refers to
  int64_t failed = 0;                 // checkpoints failed after the warm-up
  int64_t failed_before_warm = 0;
  double warmup_s = 0;                // until the state held every key
  double wall_s = 0;
  // S3 only (`client` given): counters between the first and the last completion the poller saw, and how many
  // checkpoints completed in between; whole_run over the whole run (start, retention, cancellation).
  int64_t counted_checkpoints = 0;
  s3::S3ClientStats counted;
  s3::S3ClientStats whole_run;
};

// `client`: the S3 client of `file_systems`' s3:// filesystem when checkpoint_dir is on S3, else null.
Result<CheckpointRun> run_checkpointed_job(const CheckpointRunConfig& config,
                                           std::shared_ptr<const fs::FileSystemRegistry> file_systems,
                                           const s3::S3Client* client);

s3::S3ClientStats stats_minus(const s3::S3ClientStats& after, const s3::S3ClientStats& before);

}  // namespace sluice::bench
