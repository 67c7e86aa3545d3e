// FaultInjector: failures armed from outside a running job (tests, the demo's --inject-failures) that fire ON a
// subtask's own thread at a named point of its work, as a task failure going through the normal failover path
// (restart strategy, restore from the latest completed checkpoint). One per job, shared by all its attempts: a
// failure armed while the job restarts fires in the next attempt. In the spirit of FoundationDB's BUGGIFY
// points, but armed per run instead of compiled in.
//
// The points (FailurePoint), where the task checks them, and what must hold afterwards:
//  - kTask: the task's next mailbox turn, wherever it is (the generic failure, CheckpointingJobClient::fail_task).
//  - kSource: a source task, between two records it produces (before its next batch of reader polls).
//  - kKeyedOperator: a task whose chain holds a keyed operator, at the next input buffer, as a user function of
//    that operator throwing on the buffer's first record.
//  - kSink: a task whose chain holds a sink, at its pre-commit for a checkpoint barrier: the sink's snapshot has
//    pre-committed the transaction (a two-phase-commit sink's pending file exists), the barrier has not gone
//    on. The restore must abort that lingering transaction.
//  - kBetweenSyncAndAsyncSnapshot: any task taking a checkpoint, after its synchronous snapshot and after it
//    emitted the barrier downstream, before the asynchronous part is submitted. The task never acknowledges,
//    so that checkpoint never completes; the job restores from an earlier one.
//  - kBetweenCompletionAndCommit: a task whose chain holds a sink, when notify_checkpoint_complete(n) arrives
//    (n completed, its _metadata durable), before the sink commits n's committables. The restore from n must
//    commit them, idempotently: exactly once in the output.
//  - kAfterCommit: a task whose chain holds a sink, right after notify_checkpoint_complete(n) returned (its sinks
//    committed n's committables), before the task goes on. What the restore (STREAMING) or the commit retry
//    (BATCH) commits again must not show twice: committing a committed committable is a no-op.
//  - kRestore: a task of an attempt that restores a checkpoint, once its operators hold the restored state and
//    before they open. Nothing the failed restore did may count: the next attempt restores the same checkpoint.
//
// What a claimed failure does (InjectedFailureEffect): the claiming task throws, and the job fails over as for any
// task failure; or, in a TaskManager process of a cluster, the whole process dies at once by SIGKILL (the test of
// a machine lost at that very point: docs/cluster.md).
//
// Cost when nothing is armed: the task reads its own armed-points mask (one relaxed atomic load) once per
// mailbox-loop iteration and once per input buffer or checkpoint step - never per record.
//
// Thread-safety: every method may be called from any thread. arm() sets mask bits; the task whose check sees a
// bit calls claim(); the first claimer of an armed failure takes it (vertex / subtask -1 means "any").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::runtime {

enum class FailurePoint : uint8_t {
  kTask = 0,
  kSource,
  kKeyedOperator,
  kSink,
  kBetweenSyncAndAsyncSnapshot,
  kBetweenCompletionAndCommit,
  kAfterCommit,
  kRestore,
};
inline constexpr int kNumFailurePoints = 8;

// The five points of the failure classes (everything but the generic kTask), in the order above.
inline constexpr FailurePoint kFailureClasses[] = {
    FailurePoint::kSource, FailurePoint::kKeyedOperator, FailurePoint::kSink,
    FailurePoint::kBetweenSyncAndAsyncSnapshot, FailurePoint::kBetweenCompletionAndCommit};

constexpr uint32_t failure_point_bit(FailurePoint p) { return 1u << static_cast<uint32_t>(p); }
// "task", "source", "keyed-operator", "sink", "between-sync-and-async-snapshot", "between-completion-and-commit",
// "after-commit", "restore".
const char* failure_point_name(FailurePoint p);
// The inverse of failure_point_name; nullopt for an unknown name.
std::optional<FailurePoint> parse_failure_point(std::string_view name);

// A failure that fired (claimed by a task).
struct InjectedFailure {
  FailurePoint point = FailurePoint::kTask;
  int32_t vertex = -1;   // the task that failed
  int32_t subtask = -1;
  int32_t attempt = 0;   // the job attempt it failed in (0: the first run)
  // The checkpoint it interrupted (kSink, kBetweenSyncAndAsyncSnapshot: the one being taken;
  // kBetweenCompletionAndCommit: the completed one not committed yet; kAfterCommit: the one just committed); -1
  // for the other points (kRestore included, so a kill armed from a checkpoint id never takes a restore).
  int64_t checkpoint_id = -1;
  std::string message;   // "injected failure [<point>] <cause>"
};

enum class InjectedFailureEffect : uint8_t {
  kFailTask,     // claim() returns the message; the task throws it
  kKillProcess,  // claim() logs the message and kills this process with SIGKILL (never returns)
};

class FaultInjector {
 public:
  // One subtask of the job and the points its chain can reach (failure_point_bit() ORed).
  struct Task {
    int32_t vertex = 0;
    int32_t subtask = 0;
    uint32_t reachable_points = 0;
  };
  explicit FaultInjector(std::vector<Task> tasks, InjectedFailureEffect effect = InjectedFailureEffect::kFailTask);
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // Arms one failure at `point` for (vertex, subtask); -1 for either means any. kInvalidArgument when no task of
  // the job matches and can reach the point (the message names what is missing).
  // from_checkpoint_id > 0: only a pass of `point` for a checkpoint id >= it claims the failure, so a driver that
  // arms right after checkpoint n completed is not taken by n's own notification still queued at a task. Only the
  // checkpoint points (kSink, kBetweenSyncAndAsyncSnapshot, kBetweenCompletionAndCommit, kAfterCommit) take it;
  // for the others it is kInvalidArgument (they would never fire).
  Status arm(FailurePoint point, int32_t vertex, int32_t subtask, const std::string& cause,
             int64_t from_checkpoint_id = 0);

  // The mask of points armed for (vertex, subtask): a stable address for the injector's lifetime. A task reads
  // it with a relaxed load and calls claim() for a set bit. Null for an unknown task.
  const std::atomic<uint32_t>* armed_points(int32_t vertex, int32_t subtask) const;

  // Takes the oldest failure armed at `point` that this task matches, records it and returns its message, or
  // nullopt if none is left (another task took it first). With InjectedFailureEffect::kKillProcess it does not
  // return once it took one: the message goes to the log and the process is killed.
  std::optional<std::string> claim(FailurePoint point, int32_t vertex, int32_t subtask, int32_t attempt,
                                   int64_t checkpoint_id);

  std::vector<InjectedFailure> injected() const;  // in firing order
  int32_t num_armed() const;                      // armed, not fired yet

 private:
  struct Armed {
    FailurePoint point;
    int32_t vertex, subtask;
    std::string cause;
    int64_t from_checkpoint_id = 0;
  };
  bool matches(const Armed& a, size_t task) const;
  void refresh_masks_locked();

  const std::vector<Task> tasks_;
  const InjectedFailureEffect effect_;
  const std::unique_ptr<std::atomic<uint32_t>[]> masks_;  // one per tasks_ entry
  mutable std::mutex mu_;
  std::vector<Armed> armed_;
  std::vector<InjectedFailure> injected_;
};

}  // namespace sluice::runtime
