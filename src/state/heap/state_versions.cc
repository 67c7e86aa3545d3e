#include "sluice/detail/state/heap/state_versions.h"

#include <algorithm>
#include <utility>

namespace sluice {

StateVersions::~StateVersions() {
  for (const Retired& r : retired_) r.destroy(r.obj);
}

StateVersions& StateVersions::unversioned() {
  // Never snapshotted: highest_required() stays 0, so nothing is ever retired into it.
  static StateVersions none;
  return none;
}

uint64_t StateVersions::begin_snapshot() {
  const uint64_t s = ++current_;
  std::lock_guard<std::mutex> lock(mu_);
  live_.push_back(s);
  set_highest_required();
  return s;
}

void StateVersions::release(uint64_t version) {
  std::vector<Retired> freed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find(live_.begin(), live_.end(), version);
    if (it == live_.end()) return;
    live_.erase(it);
    set_highest_required();
    // Keep what a remaining snapshot may read; free the rest outside the lock.
    auto keep_end = std::partition(retired_.begin(), retired_.end(),
                                   [&](const Retired& r) { return needed(r.created, r.retired_at); });
    freed.assign(std::make_move_iterator(keep_end), std::make_move_iterator(retired_.end()));
    retired_.erase(keep_end, retired_.end());
    for (const Retired& r : freed) retained_bytes_ -= r.size_bytes;
  }
  for (const Retired& r : freed) r.destroy(r.obj);
}

void StateVersions::retire(void* obj, Destroy destroy, uint64_t created_version, size_t size_bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A release may have run since the caller read highest_required(): decide on the live set itself.
    if (needed(created_version, current_)) {
      retired_.push_back(Retired{obj, destroy, created_version, current_, size_bytes});
      retained_bytes_ += size_bytes;
      return;
    }
  }
  destroy(obj);
}

bool StateVersions::acquire_reader() {
  readers_.lock_shared();
  if (closed_) {
    readers_.unlock_shared();
    return false;
  }
  return true;
}

void StateVersions::release_reader() { readers_.unlock_shared(); }

void StateVersions::close() {
  {
    std::unique_lock<std::shared_mutex> lock(readers_);
    closed_ = true;
  }
  std::vector<Retired> freed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_.clear();
    set_highest_required();
    freed.swap(retired_);
    retained_bytes_ = 0;
  }
  for (const Retired& r : freed) r.destroy(r.obj);
}

size_t StateVersions::retained_objects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return retired_.size();
}

size_t StateVersions::retained_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return retained_bytes_;
}

size_t StateVersions::live_snapshots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

bool StateVersions::needed(uint64_t created, uint64_t retired_at) const {
  // Snapshot s saw the object iff it existed before s (created < s) and was still in the maps at s
  // (retired_at >= s).
  return std::any_of(live_.begin(), live_.end(), [&](uint64_t s) { return created < s && s <= retired_at; });
}

void StateVersions::set_highest_required() {
  uint64_t h = 0;
  for (uint64_t s : live_) h = std::max(h, s);
  highest_required_.store(h, std::memory_order_release);
}

}  // namespace sluice
