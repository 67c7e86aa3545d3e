// Failure classification: may a restart heal this failure? Modelled on Flink's ThrowableClassifier
// (NON_RECOVERABLE_ERROR / PARTITION_DATA_MISSING_ERROR / ENVIRONMENT_ERROR / RECOVERABLE_ERROR) and Arroyo's
// user / external / internal errors with a retry hint. decide_restart (restart_strategy.h) fails the job at once for
// a class whose restart_can_help() is false, without consulting the restart strategy.
//
// The classes, and which failures fall in each:
// - kNonRecoverable (Flink's NON_RECOVERABLE_ERROR, Arroyo's user error): code kInvalidArgument - a bad
//   configuration value or a bad program met at run time. Only a person can fix the input.
// - kDataMissing (Flink's PARTITION_DATA_MISSING_ERROR, turned around): a committable whose data is gone - the
//   commit of a sink's pending file or multipart upload that no longer exists (core/failure_markers.h,
//   kCommittableDataGoneMark). In Flink a producer can re-create missing partition data; here the checkpoint holds
//   the only reference to the data, and every restart restores the same committable and fails the same way.
// - kEnvironment (Flink's ENVIRONMENT_ERROR, Arroyo's external error without retry): the filesystem refuses a path
//   the job must use - errno EACCES, EPERM, EROFS or ENOTDIR (kPathRefusedMark, set by fs/errno_status.h).
//   Permissions, a read-only mount or a file where a folder must be do not change by restarting.
// - kRecoverable (Flink's RECOVERABLE_ERROR, Arroyo's internal error): everything else, and in particular every
//   network and I/O error (kIOError, kTimeout), kNotFound and kCorruption without a mark (a damaged restore point
//   is caught by decide_restart's own check of the checkpoint's files), user function failures and internal
//   errors: these restart under the configured strategy, because a transient cause may have passed.
//
// The marks are looked for in the message, whatever the code, because a connector may pass a Status through an
// exception that keeps only its text. A failure that is not marked but repeats identically is stopped by
// IdenticalFailureCounter (restart-strategy.max-identical-failures).
//
// Thread-safety: the functions are pure; an IdenticalFailureCounter is not thread-safe (one per job, used by the
// thread that decides restarts).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice {

enum class FailureClass { kNonRecoverable, kDataMissing, kEnvironment, kRecoverable };

// "NON_RECOVERABLE_ERROR", "DATA_MISSING_ERROR", "ENVIRONMENT_ERROR", "RECOVERABLE_ERROR".
std::string_view failure_class_name(FailureClass c);

// The retry hint: true only for kRecoverable.
bool restart_can_help(FailureClass c);

// The class of a failure (see the file comment). Precondition: `cause` is not ok.
FailureClass classify_failure(const Status& cause);

// The identity of a failure for IdenticalFailureCounter: "<code name>: <message>" with its volatile parts replaced by
// '#': a word of 8 or more hex digits holding at least one decimal digit (an upload id, a job id, a hash), a "0x"
// hex literal, and every run of decimal digits (checkpoint ids, attempt numbers, subtask indexes, timestamps, byte
// counts). So "checkpoint 12 of job 3fa85f6457174562" and "checkpoint 13 of job 9c0d2e7a11b34f55" are identical;
// "cannot reach host-a" and "cannot reach host-b" are not.
std::string normalized_failure(const Status& cause);

// Counts identical failures in a row (normalized_failure) with no progress between them. Progress is a completed
// checkpoint: the caller passes the latest completed checkpoint's id with each failure, and a different id than at
// the previous failure starts the count over, as does a failure that is not identical to the previous one.
class IdenticalFailureCounter {
 public:
  // `max_identical` (restart-strategy.max-identical-failures): the count at which limit_reached() turns true;
  // 0 = never.
  explicit IdenticalFailureCounter(int32_t max_identical) : max_identical_(max_identical) {}

  // Records `cause` (not ok). `latest_checkpoint_id`: the id of the latest completed checkpoint when the failure
  // happened, -1 when there is none. Returns the count of identical failures in a row, this one included (>= 1).
  int32_t record(const Status& cause, int64_t latest_checkpoint_id);

  // Whether the failures recorded last reached the limit (never when the limit is 0).
  bool limit_reached() const { return max_identical_ > 0 && count_ >= max_identical_; }

  int32_t max_identical() const { return max_identical_; }
  int32_t count() const { return count_; }

 private:
  int32_t max_identical_;
  int32_t count_ = 0;
  std::string last_;
  int64_t last_checkpoint_id_ = -1;
};

}  // namespace sluice
