#include "write_back_cache.h"

#include <utility>

namespace sluice::rocksdb_cache {

WriteBackCache::WriteBackCache(int64_t max_size_bytes, WriteEntry write_entry)
    : max_size_bytes_(max_size_bytes), write_entry_(std::move(write_entry)) {}

WriteBackCache::WriteBackCache(WriteBackCachePool* pool, WriteEntry write_entry)
    : max_size_bytes_(pool->pool_bytes()), pool_(pool), write_entry_(std::move(write_entry)) {
  pool_->join();
}

WriteBackCache::~WriteBackCache() {
  if (pool_ != nullptr) pool_->leave();
}

WriteBackCache::Index& WriteBackCache::index(int32_t cf) {
  if (static_cast<size_t>(cf) >= index_.size()) index_.resize(static_cast<size_t>(cf) + 1);
  return index_[static_cast<size_t>(cf)];
}

WriteBackCache::List::iterator WriteBackCache::find(int32_t cf, std::string_view key) {
  if (static_cast<size_t>(cf) >= index_.size()) return lru_.end();
  Index& ix = index_[static_cast<size_t>(cf)];
  auto it = ix.find(key);
  return it == ix.end() ? lru_.end() : it->second;
}

WriteBackCache::Lookup WriteBackCache::get(int32_t cf, std::string_view key, std::string_view* value) {
  auto e = find(cf, key);
  if (e == lru_.end()) {
    ++misses_;
    return Lookup::kMiss;
  }
  ++hits_;
  touch(e);
  if (!e->has_value) return Lookup::kAbsent;
  *value = e->value;
  return Lookup::kValue;
}

std::string_view WriteBackCache::fill(int32_t cf, std::string_view key, const std::string_view* value) {
  auto e = insert(cf, key, value != nullptr, value != nullptr ? *value : std::string_view(), false);
  return e->value;
}

void WriteBackCache::put(int32_t cf, std::string_view key, std::string_view value) {
  auto e = find(cf, key);
  if (e == lru_.end()) {
    insert(cf, key, true, value, true);
    return;
  }
  touch(e);
  set_value(e, true, value, true);
  evict_over_budget();
}

void WriteBackCache::remove(int32_t cf, std::string_view key) {
  auto e = find(cf, key);
  if (e == lru_.end()) {
    insert(cf, key, false, {}, true);
    return;
  }
  touch(e);
  set_value(e, false, {}, true);
  evict_over_budget();
}

bool WriteBackCache::merge(int32_t cf, std::string_view key, std::string_view operand) {
  auto e = find(cf, key);
  if (e == lru_.end()) return false;
  touch(e);
  size_bytes_ -= charge(*e);
  if (!e->has_value) e->value.clear();
  e->value.append(operand);
  e->has_value = true;
  size_bytes_ += charge(*e);
  mark(e, true);
  evict_over_budget();
  return true;
}

WriteBackCache::List::iterator WriteBackCache::insert(int32_t cf, std::string_view key, bool has_value,
                                                      std::string_view value, bool dirty) {
  lru_.push_front(Entry{cf, has_value, false, std::string(key), has_value ? std::string(value) : std::string()});
  auto e = lru_.begin();
  index(cf).emplace(std::string_view(e->key), e);
  size_bytes_ += charge(*e);
  mark(e, dirty);
  evict_over_budget();
  return e;
}

void WriteBackCache::set_value(List::iterator e, bool has_value, std::string_view value, bool dirty) {
  size_bytes_ -= charge(*e);
  e->has_value = has_value;
  e->value.assign(value);  // keeps the capacity: a hot key's updates of similar size do not allocate
  size_bytes_ += charge(*e);
  mark(e, dirty);
}

void WriteBackCache::mark(List::iterator e, bool dirty) {
  if (e->dirty == dirty) return;
  e->dirty = dirty;
  if (dirty) {
    ++dirty_;
  } else {
    --dirty_;
  }
}

void WriteBackCache::write(Entry& e) {
  write_entry_(e.cf, e.key, e.has_value ? &e.value : nullptr);  // throws: e stays dirty
  e.dirty = false;
  --dirty_;
}

void WriteBackCache::erase(List::iterator e) {
  if (e->dirty) --dirty_;
  size_bytes_ -= charge(*e);
  index_[static_cast<size_t>(e->cf)].erase(std::string_view(e->key));
  lru_.erase(e);
}

void WriteBackCache::evict_over_budget() {
  const int64_t limit = max_size_bytes();
  while (size_bytes_ > limit && lru_.size() > 1) {
    auto victim = std::prev(lru_.end());
    ++evictions_;
    if (victim->dirty) {
      ++dirty_evictions_;
      write(*victim);
    }
    erase(victim);
  }
}

void WriteBackCache::write_back() {
  if (dirty_ == 0) return;
  for (Entry& e : lru_) {
    if (e.dirty) write(e);
    if (dirty_ == 0) break;
  }
}

void WriteBackCache::invalidate(int32_t cf, std::string_view key) {
  auto e = find(cf, key);
  if (e != lru_.end()) erase(e);
}

void WriteBackCache::invalidate_column_family(int32_t cf) {
  if (static_cast<size_t>(cf) >= index_.size()) return;
  Index& ix = index_[static_cast<size_t>(cf)];
  while (!ix.empty()) erase(ix.begin()->second);
}

}  // namespace sluice::rocksdb_cache
