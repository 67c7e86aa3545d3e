#include "coordinator/job_lifecycle.h"

#include <spdlog/spdlog.h>

namespace sluice::coordinator {

JobLifecycle::JobLifecycle(JobId job_id, std::string job_name, std::shared_ptr<Clock> clock)
    : job_id_(job_id), job_name_(std::move(job_name)), clock_(std::move(clock)) {
  run_meter_.start(clock_->monotonic_ns());
}

bool JobLifecycle::allowed(JobStatus from, JobStatus to) {
  switch (from) {
    case JobStatus::kCreated: return to == JobStatus::kRunning;
    case JobStatus::kRunning:
      return to == JobStatus::kRestarting || to == JobStatus::kFailing || to == JobStatus::kCancelling ||
             to == JobStatus::kFinished;
    case JobStatus::kRestarting:
      return to == JobStatus::kRunning || to == JobStatus::kFailing || to == JobStatus::kCancelling;
    case JobStatus::kFailing: return to == JobStatus::kFailed;
    case JobStatus::kCancelling: return to == JobStatus::kCanceled;
    case JobStatus::kFailed:
    case JobStatus::kCanceled:
    case JobStatus::kFinished: return false;
  }
  return false;
}

JobStatus JobLifecycle::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

Status JobLifecycle::move_locked(JobStatus next) {
  if (!allowed(status_, next)) {
    return Status::failed_precondition("job " + job_name_ + " (" + job_id_.to_hex() + ") cannot move from " +
                                       job_status_name(status_) + " to " + job_status_name(next));
  }
  status_ = next;
  return Status::ok();
}

Status JobLifecycle::start() {
  std::lock_guard lock(mu_);
  return move_locked(JobStatus::kRunning);
}

Status JobLifecycle::transition(JobStatus next) {
  if (is_globally_terminal(next)) {
    return Status::invalid_argument(std::string("job status ") + job_status_name(next) +
                                    " is terminal: the run ends through terminate()");
  }
  std::lock_guard lock(mu_);
  return move_locked(next);
}

Status JobLifecycle::terminate(JobStatus terminal, Status error) {
  if (!is_globally_terminal(terminal)) {
    return Status::invalid_argument(std::string("job status ") + job_status_name(terminal) + " is not terminal");
  }
  std::lock_guard lock(mu_);
  if (is_globally_terminal(status_)) {
    return Status::failed_precondition("job " + job_name_ + " (" + job_id_.to_hex() + ") is " +
                                       job_status_name(status_) + " already; cannot end it as " +
                                       job_status_name(terminal));
  }
  Status path = Status::ok();
  const JobStatus via = terminal == JobStatus::kFailed     ? JobStatus::kFailing
                        : terminal == JobStatus::kCanceled ? JobStatus::kCancelling
                                                           : status_;
  if (status_ != via) path = move_locked(via);
  if (path.is_ok()) path = move_locked(terminal);
  if (!path.is_ok()) {
    // A runner's bug; the run still ends, so that nobody waits for it forever.
    spdlog::error("{}", path.to_string());
    status_ = terminal;
  }
  result_ = run_meter_.result(job_id_, job_name_, terminal, std::move(error), clock_->monotonic_ns());
  cv_.notify_all();
  return path;
}

JobExecutionResult JobLifecycle::wait() const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return is_globally_terminal(status_); });
  return result_;
}

bool JobLifecycle::wait_terminal_for(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return is_globally_terminal(status_); });
}

}  // namespace sluice::coordinator
