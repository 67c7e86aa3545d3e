// SavepointRequests: the savepoint and stop-with-savepoint requests of one job, by trigger id (Flink's
// asynchronous operation: POST returns a request id, GET .../savepoints/:triggerid polls it).
//
// A request is IN_PROGRESS from add() until complete() or fail(). The coordinator's outcome arrives by checkpoint
// id (savepoint_completed / savepoint_aborted), possibly before bind() tied the request to that id: the outcome is
// kept and applied at bind(). A stop-with-savepoint request (add(..., /*stop=*/true)) completes only when the job
// finished after its savepoint (finish_stop), so a COMPLETED stop means the sinks committed; its savepoint's
// completion only records the location.
//
// Thread-safety: every method from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "sluice/core/ids.h"
#include "sluice/core/name_source.h"
#include "sluice/core/status.h"

namespace sluice::cluster {

struct SavepointRequestStatus {
  enum class State : uint8_t { kInProgress, kCompleted, kFailed };
  State state = State::kInProgress;
  int64_t savepoint_id = 0;  // 0 until triggered
  std::string location;      // kCompleted: the savepoint folder
  Status cause;              // kFailed: why
  bool stop = false;         // a stop-with-savepoint request
};
const char* savepoint_request_state_name(SavepointRequestStatus::State s);  // "IN_PROGRESS", "COMPLETED", "FAILED"

class SavepointRequests {
 public:
  // `names`: where trigger ids come from (the job's name source); null: a random source.
  explicit SavepointRequests(std::shared_ptr<NameSource> names = nullptr) : names_(name_source_or_random(std::move(names))) {}
  // A new request; returns its trigger id (32 random hex digits from the stream "savepoint-trigger").
  std::string add(bool stop);
  // The request's savepoint was triggered as checkpoint id `id`.
  void bind(const std::string& trigger_id, CheckpointId id);
  void fail(const std::string& trigger_id, const Status& cause);
  // The coordinator's outcome for savepoint `id` (aborts of checkpoints no request waits for are ignored).
  void savepoint_completed(CheckpointId id, const std::string& location);
  void savepoint_aborted(CheckpointId id, const Status& cause);
  // The job finished after the stop's savepoint: the stop request completes.
  void finish_stop(const std::string& trigger_id);
  // Fails every request still in progress (the job ended).
  void fail_all(const Status& cause);

  std::optional<SavepointRequestStatus> get(const std::string& trigger_id) const;
  // Blocks until the request is no longer in progress or `timeout_ms` passed; the status then (nullopt: unknown id).
  std::optional<SavepointRequestStatus> wait(const std::string& trigger_id, int64_t timeout_ms) const;

 private:
  void apply_locked(SavepointRequestStatus& r);

  const std::shared_ptr<NameSource> names_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, SavepointRequestStatus> requests_;
  // Outcomes by savepoint id: location (completed) or cause (aborted).
  std::map<int64_t, std::string> completed_;
  std::map<int64_t, Status> aborted_;
};

}  // namespace sluice::cluster
