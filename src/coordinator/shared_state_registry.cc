#include "coordinator/shared_state_registry.h"

#include <algorithm>

namespace sluice::coordinator {

void SharedStateRegistry::checkpoint_pending(CheckpointId id) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.insert(id.value());
}

void SharedStateRegistry::register_files(CheckpointId id, const std::vector<std::string>& files, Ownership ownership) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& f : files) {
    Entry& e = files_[f];
    e.referrers.insert(id.value());
    if (ownership == Ownership::kNotOwned) e.owned = false;
    by_checkpoint_[id.value()].insert(f);
    deferred_.erase(f);  // referred to again
  }
}

std::vector<std::string> SharedStateRegistry::checkpoint_ended(CheckpointId id, bool completed) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(id.value());
  std::vector<std::string> out = completed ? std::vector<std::string>{} : release_locked(id.value());
  std::vector<std::string> later = collect_deferred_locked();
  out.insert(out.end(), later.begin(), later.end());
  return out;
}

std::vector<std::string> SharedStateRegistry::release(CheckpointId id) {
  std::lock_guard<std::mutex> lock(mu_);
  return release_locked(id.value());
}

std::vector<std::string> SharedStateRegistry::release_locked(int64_t id) {
  std::vector<std::string> out;
  auto it = by_checkpoint_.find(id);
  if (it == by_checkpoint_.end()) return out;
  const int64_t newest_pending = pending_.empty() ? -1 : *pending_.rbegin();
  for (const std::string& f : it->second) {
    auto e = files_.find(f);
    if (e == files_.end()) continue;
    e->second.referrers.erase(id);
    if (!e->second.referrers.empty()) continue;
    const bool owned = e->second.owned;
    files_.erase(e);
    if (!owned) continue;
    if (newest_pending >= 0) {
      deferred_[f] = newest_pending;
    } else {
      out.push_back(f);
    }
  }
  by_checkpoint_.erase(it);
  return out;
}

std::vector<std::string> SharedStateRegistry::collect_deferred_locked() {
  std::vector<std::string> out;
  const int64_t oldest_pending = pending_.empty() ? INT64_MAX : *pending_.begin();
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    // Every checkpoint pending at the release (ids <= it->second) has ended, and none registered the file.
    if (oldest_pending > it->second && files_.count(it->first) == 0) {
      out.push_back(it->first);
      it = deferred_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

size_t SharedStateRegistry::num_files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return files_.size();
}

int32_t SharedStateRegistry::reference_count(const std::string& file) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = files_.find(file);
  return it == files_.end() ? 0 : static_cast<int32_t>(it->second.referrers.size());
}

std::vector<std::string> SharedStateRegistry::files_of(CheckpointId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_checkpoint_.find(id.value());
  if (it == by_checkpoint_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

size_t SharedStateRegistry::num_deferred() const {
  std::lock_guard<std::mutex> lock(mu_);
  return deferred_.size();
}

}  // namespace sluice::coordinator
