// RestartBackoffTimeStrategy: after a job failure, may the job restart, and after how long? Flink's interface
// of the same name (flink-runtime executiongraph/failover), with Flink 1.19+/2.x semantics.
//
// Pure: no clock reads. The caller passes the failure time in; `backoff_time_ms()` is measured from the
// `now_ms` of the last notify_failure. One strategy object serves a whole job: its state (attempts made,
// failure timestamps, current backoff) spans every restart, so create it once per job, not once per run.
//
// Failure classification (failure_classifier.h): a failure no restart can heal - a bad configuration or program
// (kInvalidArgument), a committable whose data is gone, a path the filesystem refuses to the job - fails the job at
// once, without consulting or updating the strategy, as Flink's SuppressRestartsException does. So does a failure
// that repeated identically restart-strategy.max-identical-failures times with no checkpoint completed between, and
// a restore point that is damaged (see decide_restart): restoring the same bad bytes again can never succeed. Every
// other failure goes through the strategy. `Status::retriable()` is not consulted: it says whether the
// same operation may succeed if repeated, while a restart redeploys the job from its latest checkpoint,
// which is how Flink treats every failure that does not suppress restarts.
//
// Thread-safety: none; the coordinator owns its strategy and calls it from one thread.
#pragma once

#include <cstdint>
#include <string>

#include "restart/failure_classifier.h"
#include "sluice/core/status.h"

namespace sluice {

class RestartBackoffTimeStrategy {
 public:
  virtual ~RestartBackoffTimeStrategy() = default;

  // Records a restartable failure that happened at `now_ms` (any consistent millisecond time base).
  // Returns true if the failure starts a new restart attempt, false if it is merged into the restart already
  // scheduled (exponential-delay merges failures that arrive before its pending restart time, as Flink's
  // does when several tasks of one failover fail; the other strategies count every failure).
  // Precondition: `cause` is not ok; `now_ms` does not go backwards between calls.
  virtual bool notify_failure(const Status& cause, int64_t now_ms) = 0;

  // Whether the job may restart after the failures notified so far. Before any failure: true (except none).
  virtual bool can_restart() const = 0;

  // Milliseconds to wait before the restart, counted from the `now_ms` of the last notify_failure (>= 0).
  // Meaningful after notify_failure; 0 before any failure.
  virtual int64_t backoff_time_ms() const = 0;

  // One line for logs and failure messages: the strategy, its settings and its progress, e.g.
  // "fixed-delay(attempts=3, delay=1s; failures so far: 1)".
  virtual std::string describe() const = 0;

 protected:
  RestartBackoffTimeStrategy() = default;
  RestartBackoffTimeStrategy(const RestartBackoffTimeStrategy&) = default;
  RestartBackoffTimeStrategy& operator=(const RestartBackoffTimeStrategy&) = default;
};

// restart-strategy.type NONE: every failure fails the job.
class NoRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  bool notify_failure(const Status& cause, int64_t now_ms) override;
  bool can_restart() const override { return false; }
  int64_t backoff_time_ms() const override { return 0; }
  std::string describe() const override { return "none"; }
};

// False for failures no restart can fix: restart_can_help(classify_failure(cause)) (failure_classifier.h).
bool is_restartable_failure(const Status& cause);

// What to do about one failure.
struct RestartDecision {
  bool restart = false;      // true: restart the job after `backoff_ms`; false: the job fails for good
  int64_t backoff_ms = 0;    // wait before redeploying, from the failure time (when `restart`)
  bool new_attempt = false;  // false: merged into the restart already scheduled (redeploy once)
  std::string reason;        // when !restart: why, naming the cause and the strategy
  // When !restart because the checkpoint a restart would restore is missing a file or damaged: that check's
  // status (kNotFound or kCorruption). Such a job keeps its checkpoints (checkpoint/checkpoint_retention.h). Ok
  // otherwise.
  Status unusable_restore_point;
};

// The whole decision for a failure at `now_ms`: a non-restartable cause fails the job without touching the
// strategy, with a reason naming its class (failure_class_name) and the cause; otherwise the strategy is notified
// and asked. Precondition: `cause` is not ok.
//
// `restore_files`: the caller's check of the files of the checkpoint a restart would restore (e.g.
// CheckpointStorage::check_restore_files; Ok when there is none or it is held in memory). Not Ok (a checkpoint
// file missing, truncated or with a wrong checksum): the job fails at once, without touching the strategy, and
// the reason names that file and what was expected. This is what stops a restore-time kCorruption of
// checkpoint files from restarting forever, while a kCorruption from any other source (a bad network buffer, a
// damaged local RocksDB working directory) stays restartable: a restart rebuilds those from the checkpoint.
//
// `identical` (nullptr: not counted): the job's count of identical failures, with `latest_checkpoint_id` the latest
// completed checkpoint (-1: none) as progress. A restartable cause is recorded there, after the restore point check;
// when the count reaches its limit the job fails without touching the strategy, and the reason names the count and
// the repeated failure.
RestartDecision decide_restart(RestartBackoffTimeStrategy& strategy, const Status& cause, int64_t now_ms,
                               const Status& restore_files = Status::ok(), IdenticalFailureCounter* identical = nullptr,
                               int64_t latest_checkpoint_id = -1);

// The error a job fails with when `d` rules out a restart: `cause`'s code with d.reason (which names the cause
// once) as its message; when the restore point is what rules it out, with that check's code (kNotFound for a
// missing file, kCorruption for a damaged one), so the job's error says what is wrong with the checkpoint rather
// than what failed the task.
Status job_failure(const RestartDecision& d, const Status& cause);

}  // namespace sluice
