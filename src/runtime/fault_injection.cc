#include "runtime/fault_injection.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace sluice::runtime {

namespace {

const char* requirement(FailurePoint p) {
  switch (p) {
    case FailurePoint::kTask: return "a running task";
    case FailurePoint::kSource: return "a source task";
    case FailurePoint::kKeyedOperator: return "a keyed operator in the task's chain";
    case FailurePoint::kSink: return "a sink in the task's chain and checkpointing on";
    case FailurePoint::kBetweenSyncAndAsyncSnapshot: return "checkpointing on";
    case FailurePoint::kBetweenCompletionAndCommit: return "a sink in the task's chain and checkpointing on";
    case FailurePoint::kAfterCommit: return "a sink in the task's chain and checkpointing on";
    case FailurePoint::kRestore: return "checkpointing on";
  }
  return "?";
}

// Whether a task passes `p` for a particular checkpoint (claim() gets its id; -1 otherwise).
bool has_checkpoint_id(FailurePoint p) {
  return p == FailurePoint::kSink || p == FailurePoint::kBetweenSyncAndAsyncSnapshot ||
         p == FailurePoint::kBetweenCompletionAndCommit || p == FailurePoint::kAfterCommit;
}

}  // namespace

const char* failure_point_name(FailurePoint p) {
  switch (p) {
    case FailurePoint::kTask: return "task";
    case FailurePoint::kSource: return "source";
    case FailurePoint::kKeyedOperator: return "keyed-operator";
    case FailurePoint::kSink: return "sink";
    case FailurePoint::kBetweenSyncAndAsyncSnapshot: return "between-sync-and-async-snapshot";
    case FailurePoint::kBetweenCompletionAndCommit: return "between-completion-and-commit";
    case FailurePoint::kAfterCommit: return "after-commit";
    case FailurePoint::kRestore: return "restore";
  }
  return "unknown";
}

std::optional<FailurePoint> parse_failure_point(std::string_view name) {
  for (int i = 0; i < kNumFailurePoints; ++i) {
    auto p = static_cast<FailurePoint>(i);
    if (name == failure_point_name(p)) return p;
  }
  return std::nullopt;
}

FaultInjector::FaultInjector(std::vector<Task> tasks, InjectedFailureEffect effect)
    : tasks_(std::move(tasks)), effect_(effect), masks_(std::make_unique<std::atomic<uint32_t>[]>(tasks_.size())) {
  for (size_t i = 0; i < tasks_.size(); ++i) masks_[i].store(0, std::memory_order_relaxed);
}

bool FaultInjector::matches(const Armed& a, size_t task) const {
  const Task& t = tasks_[task];
  return (a.vertex < 0 || a.vertex == t.vertex) && (a.subtask < 0 || a.subtask == t.subtask) &&
         (t.reachable_points & failure_point_bit(a.point)) != 0;
}

void FaultInjector::refresh_masks_locked() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    uint32_t mask = 0;
    for (const auto& a : armed_)
      if (matches(a, i)) mask |= failure_point_bit(a.point);
    masks_[i].store(mask, std::memory_order_relaxed);
  }
}

Status FaultInjector::arm(FailurePoint point, int32_t vertex, int32_t subtask, const std::string& cause,
                          int64_t from_checkpoint_id) {
  std::lock_guard lock(mu_);
  Armed a{point, vertex, subtask, cause, from_checkpoint_id};
  bool task_exists = false, reachable = false;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if ((vertex >= 0 && tasks_[i].vertex != vertex) || (subtask >= 0 && tasks_[i].subtask != subtask)) continue;
    task_exists = true;
    reachable = reachable || matches(a, i);
  }
  auto who = "vertex " + (vertex < 0 ? std::string("any") : std::to_string(vertex)) + ", subtask " +
             (subtask < 0 ? std::string("any") : std::to_string(subtask));
  if (!task_exists) return Status::invalid_argument("cannot arm a failure for " + who + ": the job has no such task");
  if (from_checkpoint_id > 0 && !has_checkpoint_id(point)) {
    return Status::invalid_argument("cannot arm failure point '" + std::string(failure_point_name(point)) +
                                    "' from checkpoint " + std::to_string(from_checkpoint_id) +
                                    ": it is not reached for a checkpoint (only sink, between-sync-and-async-snapshot, "
                                    "between-completion-and-commit and after-commit are)");
  }
  if (!reachable) {
    return Status::invalid_argument("cannot arm failure point '" + std::string(failure_point_name(point)) + "' for " +
                                    who + ": it needs " + requirement(point));
  }
  armed_.push_back(std::move(a));
  refresh_masks_locked();
  return Status::ok();
}

const std::atomic<uint32_t>* FaultInjector::armed_points(int32_t vertex, int32_t subtask) const {
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (tasks_[i].vertex == vertex && tasks_[i].subtask == subtask) return &masks_[i];
  return nullptr;
}

std::optional<std::string> FaultInjector::claim(FailurePoint point, int32_t vertex, int32_t subtask, int32_t attempt,
                                                int64_t checkpoint_id) {
  std::lock_guard lock(mu_);
  size_t task = tasks_.size();
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (tasks_[i].vertex == vertex && tasks_[i].subtask == subtask) task = i;
  if (task == tasks_.size()) return std::nullopt;
  for (auto it = armed_.begin(); it != armed_.end(); ++it) {
    if (it->point != point || !matches(*it, task)) continue;
    if (it->from_checkpoint_id > 0 && checkpoint_id < it->from_checkpoint_id) continue;
    InjectedFailure f;
    f.point = point;
    f.vertex = vertex;
    f.subtask = subtask;
    f.attempt = attempt;
    f.checkpoint_id = checkpoint_id;
    f.message = "injected failure [" + std::string(failure_point_name(point)) + "] " + it->cause;
    std::string message = f.message;
    injected_.push_back(std::move(f));
    armed_.erase(it);
    refresh_masks_locked();
    if (effect_ == InjectedFailureEffect::kKillProcess) {
      // On stderr, unbuffered: nothing after this line is written by this process.
      std::fflush(nullptr);
      std::fprintf(stderr, "%s (vertex %d, subtask %d, attempt %d, checkpoint %lld): killing this process (SIGKILL)\n",
                   message.c_str(), vertex, subtask, attempt, static_cast<long long>(checkpoint_id));
      ::kill(::getpid(), SIGKILL);
      std::abort();  // not reached: SIGKILL cannot be caught
    }
    return message;
  }
  return std::nullopt;
}

std::vector<InjectedFailure> FaultInjector::injected() const {
  std::lock_guard lock(mu_);
  return injected_;
}

int32_t FaultInjector::num_armed() const {
  std::lock_guard lock(mu_);
  return static_cast<int32_t>(armed_.size());
}

}  // namespace sluice::runtime
