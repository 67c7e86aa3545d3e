#include "guarantees/record_log.h"

#include <algorithm>
#include <stdexcept>

namespace sluice::guarantees {

void RecordLog::append(const std::vector<int64_t>& records) {
  std::lock_guard lock(mu_);
  if (closed_) throw std::logic_error("RecordLog::append: the log is closed");
  records_.insert(records_.end(), records.begin(), records.end());
}

void RecordLog::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
}

bool RecordLog::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

int64_t RecordLog::size() const {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(records_.size());
}

std::vector<int64_t> RecordLog::read_at(int64_t offset, int64_t max) {
  std::lock_guard lock(mu_);
  const int64_t size = static_cast<int64_t>(records_.size());
  const int64_t begin = std::clamp<int64_t>(offset, 0, size);
  const int64_t end = std::min(size, begin + std::max<int64_t>(max, 0));
  if (end > delivered_.load()) delivered_.store(end);
  return {records_.begin() + begin, records_.begin() + end};
}

std::vector<int64_t> RecordLog::take(int64_t max) {
  std::lock_guard lock(mu_);
  const int64_t size = static_cast<int64_t>(records_.size());
  const int64_t end = std::min(size, taken_ + std::max<int64_t>(max, 0));
  std::vector<int64_t> out(records_.begin() + taken_, records_.begin() + end);
  taken_ = end;
  delivered_.store(taken_);
  return out;
}

}  // namespace sluice::guarantees
