// When the exactly-once file sink (transactional_file_sink.h) closes its open part file and starts the next: its
// rolling policy, after Flink's FileSink "Rolling Policy" (docs: connectors/datastream/filesystem, section Rolling
// Policy; DefaultRollingPolicy and OnCheckpointRollingPolicy).
//
// Two kinds:
//   - RollingPolicy::defaults() (Flink's DefaultRollingPolicy): a part file rolls when it reaches
//     part_size_bytes, when it has been open rollover_interval_ms, or when nothing was written to it for
//     inactivity_interval_ms. A checkpoint does not roll it unless it has reached part_size_bytes: the sink
//     persists the open file into the checkpoint (RecoverableOutputStream::persist) and keeps writing it.
//   - RollingPolicy::on_checkpoint() (Flink's OnCheckpointRollingPolicy, plus the size limit): every checkpoint
//     rolls, and a file rolls when it reaches part_size_bytes; no time conditions.
// Either way the input's end rolls the open file (the final checkpoint then commits it).
//
// Time is processing time (Clock::now_ms, wall-clock milliseconds; the sink's SinkInitContext::clock(), so tests
// inject a ManualClock). Unlike Flink, which checks the time conditions on a processing-time timer every
// bucket-check-interval (60 s), the sink checks them before every record it writes and at every checkpoint
// barrier: an idle file rolls at the first barrier after its inactivity interval passed (so with checkpointing,
// at most a checkpoint interval late), and its data is committed with that checkpoint as it would be in Flink.
//
// The decisions are pure functions of the open file's PartFileInfo (tested exhaustively in
// src/connectors/file/tests/rolling_policy_test.cc). Values; thread-safe to share.
#pragma once

#include <cstdint>

#include "sluice/core/status.h"

namespace sluice::file {

// The open part file as the policy sees it (Flink's PartFileInfo).
struct PartFileInfo {
  int64_t creation_time_ms = 0;     // when it was opened (processing time; kept across a restore)
  int64_t last_update_time_ms = 0;  // when a record was last written to it (a restore counts as a write)
  int64_t size_bytes = 0;           // bytes written to it, including those a restore kept
};

struct RollingPolicy {
  enum class Kind : uint8_t {
    kDefault,       // size, rollover interval, inactivity interval; files stay open across checkpoints
    kOnCheckpoint,  // every checkpoint, and size
  };
  static constexpr int64_t kDefaultPartSizeBytes = 128ll << 20;  // Flink's DefaultRollingPolicy: 128 MiB
  static constexpr int64_t kDefaultRolloverIntervalMs = 60'000;   // Flink's: 60 s
  static constexpr int64_t kDefaultInactivityIntervalMs = 60'000;  // Flink's: 60 s

  Kind kind = Kind::kDefault;
  // A file rolls before the record that finds it at or above this size (bytes, > 0).
  int64_t part_size_bytes = kDefaultPartSizeBytes;
  // kDefault: a file open at least this long rolls (ms, > 0). Ignored by kOnCheckpoint.
  int64_t rollover_interval_ms = kDefaultRolloverIntervalMs;
  // kDefault: a file not written for at least this long rolls (ms, > 0). Ignored by kOnCheckpoint.
  int64_t inactivity_interval_ms = kDefaultInactivityIntervalMs;

  // Flink's DefaultRollingPolicy with its defaults (128 MiB, 60 s, 60 s); change the fields to tune it.
  static RollingPolicy defaults() { return RollingPolicy{}; }
  // Rolls at every checkpoint and at part_size_bytes (the sink's behaviour before rolling policies existed).
  static RollingPolicy on_checkpoint(int64_t part_size_bytes = kDefaultPartSizeBytes) {
    return RollingPolicy{Kind::kOnCheckpoint, part_size_bytes, kDefaultRolloverIntervalMs,
                         kDefaultInactivityIntervalMs};
  }

  // Before a record is written to the open file.
  bool should_roll_on_event(const PartFileInfo& file) const;
  // At a checkpoint barrier and before a record, at processing time `now_ms`.
  bool should_roll_on_processing_time(const PartFileInfo& file, int64_t now_ms) const;
  // At a checkpoint barrier (in addition to the time conditions).
  bool should_roll_on_checkpoint(const PartFileInfo& file) const;
  // kInvalidArgument naming the field when a size or interval is not positive.
  Status validate() const;
};

}  // namespace sluice::file
