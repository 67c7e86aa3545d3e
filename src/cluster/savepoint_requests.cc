#include "cluster/savepoint_requests.h"

#include <chrono>

namespace sluice::cluster {

using State = SavepointRequestStatus::State;

const char* savepoint_request_state_name(State s) {
  switch (s) {
    case State::kInProgress: return "IN_PROGRESS";
    case State::kCompleted: return "COMPLETED";
    case State::kFailed: return "FAILED";
  }
  return "UNKNOWN";
}

std::string SavepointRequests::add(bool stop) {
  std::lock_guard lock(mu_);
  std::string id = names_->hex("savepoint-trigger") + names_->hex("savepoint-trigger");  // 128 bits, as Flink's TriggerId
  SavepointRequestStatus r;
  r.stop = stop;
  requests_[id] = r;
  return id;
}

void SavepointRequests::apply_locked(SavepointRequestStatus& r) {
  if (r.state != State::kInProgress || r.savepoint_id == 0) return;
  if (auto it = completed_.find(r.savepoint_id); it != completed_.end()) {
    r.location = it->second;
    if (!r.stop) r.state = State::kCompleted;
  } else if (auto ab = aborted_.find(r.savepoint_id); ab != aborted_.end()) {
    r.state = State::kFailed;
    r.cause = ab->second;
  }
}

void SavepointRequests::bind(const std::string& trigger_id, CheckpointId id) {
  std::lock_guard lock(mu_);
  auto it = requests_.find(trigger_id);
  if (it == requests_.end()) return;
  it->second.savepoint_id = id.value();
  apply_locked(it->second);
  cv_.notify_all();
}

void SavepointRequests::fail(const std::string& trigger_id, const Status& cause) {
  std::lock_guard lock(mu_);
  auto it = requests_.find(trigger_id);
  if (it == requests_.end() || it->second.state != State::kInProgress) return;
  it->second.state = State::kFailed;
  it->second.cause = cause;
  cv_.notify_all();
}

void SavepointRequests::savepoint_completed(CheckpointId id, const std::string& location) {
  std::lock_guard lock(mu_);
  completed_[id.value()] = location;
  for (auto& [tid, r] : requests_)
    if (r.savepoint_id == id.value()) apply_locked(r);
  cv_.notify_all();
}

void SavepointRequests::savepoint_aborted(CheckpointId id, const Status& cause) {
  std::lock_guard lock(mu_);
  // Kept only while a request may be waiting for it (bound to `id`, or not bound yet): the coordinator reports
  // every aborted checkpoint here, and most are no savepoint of a request.
  bool wanted = false;
  for (const auto& [tid, r] : requests_) {
    wanted |= r.state == State::kInProgress && (r.savepoint_id == 0 || r.savepoint_id == id.value());
  }
  if (!wanted) return;
  aborted_[id.value()] = cause;
  for (auto& [tid, r] : requests_)
    if (r.savepoint_id == id.value()) apply_locked(r);
  cv_.notify_all();
}

void SavepointRequests::finish_stop(const std::string& trigger_id) {
  std::lock_guard lock(mu_);
  auto it = requests_.find(trigger_id);
  if (it == requests_.end() || it->second.state != State::kInProgress) return;
  if (it->second.location.empty()) {
    it->second.state = State::kFailed;
    it->second.cause = Status::internal("the job finished but the stop's savepoint did not complete");
  } else {
    it->second.state = State::kCompleted;
  }
  cv_.notify_all();
}

void SavepointRequests::fail_all(const Status& cause) {
  std::lock_guard lock(mu_);
  for (auto& [tid, r] : requests_) {
    if (r.state != State::kInProgress) continue;
    r.state = State::kFailed;
    r.cause = cause;
  }
  cv_.notify_all();
}

std::optional<SavepointRequestStatus> SavepointRequests::get(const std::string& trigger_id) const {
  std::lock_guard lock(mu_);
  auto it = requests_.find(trigger_id);
  if (it == requests_.end()) return std::nullopt;
  return it->second;
}

std::optional<SavepointRequestStatus> SavepointRequests::wait(const std::string& trigger_id, int64_t timeout_ms) const {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    auto it = requests_.find(trigger_id);
    return it == requests_.end() || it->second.state != State::kInProgress;
  });
  auto it = requests_.find(trigger_id);
  if (it == requests_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sluice::cluster
