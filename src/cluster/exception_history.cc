#include "cluster/exception_history.h"

#include <algorithm>
#include <utility>

namespace sluice::cluster {

ExceptionHistory::ExceptionHistory(int32_t capacity) : capacity_(static_cast<size_t>(std::max(1, capacity))) {}

void ExceptionHistory::add(JobException e) {
  std::lock_guard lock(mu_);
  entries_.push_front(std::move(e));
  if (entries_.size() > capacity_) entries_.pop_back();
  ++total_;
}

std::vector<JobException> ExceptionHistory::entries() const {
  std::lock_guard lock(mu_);
  return {entries_.begin(), entries_.end()};
}

int64_t ExceptionHistory::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

std::string exception_name_of(const Status& cause) { return "sluice." + std::string(status_code_name(cause.code())); }

}  // namespace sluice::cluster
