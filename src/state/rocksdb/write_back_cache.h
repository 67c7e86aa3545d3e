// WriteBackCache: a bounded cache of recently used (column family, key) -> value entries in front of one
// RocksDBStore (internal to it: rocksdb_store.cc). Hot keys are read and updated in memory; changes reach
// RocksDB when an entry is evicted and when the store writes everything back (before every snapshot,
// iterator and batch write), so whatever reads RocksDB sees the same state as without the cache.
//
// Entries: a value (clean = equal to RocksDB's, or dirty = newer), or known absent (clean = RocksDB has no
// value, or dirty = a removal RocksDB has not seen yet). Merges (ListState appends: concatenation) apply to a
// cached entry in memory; a merge on an uncached key is the caller's to pass to RocksDB, so a blind append never
// reads.
//
// Size: each entry is charged its key and value bytes plus kEntryOverheadBytes (the list node, the hash node
// and two string headers on a 64-bit libstdc++). When the charge exceeds the limit the least recently used
// entries are evicted (dirty ones written through `write_entry` first); the entry just used is never evicted,
// so one oversized entry stays until the next one replaces it. The limit is either a fixed max_size_bytes or
// a share of a WriteBackCachePool (managed memory: rocksdb_memory.h), read again on every insert and growth,
// so a cache shrinks to its new share at its next write when another cache joins the pool.
//
// Values handed out (get) point into the cache: valid until the next call on the cache.
// Errors: write_entry's exceptions (RocksDBError) propagate; the entry it was writing stays cached and dirty.
// Thread-safety: none; the task thread's, like the store's per-record operations.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::rocksdb_cache {

// The memory the write-back caches of a process share when managed memory bounds RocksDB: each member cache
// may hold pool_bytes / members (members = caches open now). Why fair shares and not one global LRU: a cache
// belongs to one task thread and takes no lock; a share is one relaxed atomic read.
// Thread-safety: join/leave and share_bytes from any thread.
class WriteBackCachePool {
 public:
  explicit WriteBackCachePool(int64_t pool_bytes) : pool_bytes_(pool_bytes) {}
  int64_t pool_bytes() const { return pool_bytes_; }
  int32_t members() const { return members_.load(std::memory_order_relaxed); }
  int64_t share_bytes() const {
    const int32_t n = members();
    return pool_bytes_ / (n > 0 ? n : 1);
  }
  void join() { members_.fetch_add(1, std::memory_order_relaxed); }
  void leave() { members_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  const int64_t pool_bytes_;
  std::atomic<int32_t> members_{0};
};

class WriteBackCache {
 public:
  static constexpr int64_t kEntryOverheadBytes = 128;

  // write_entry(cf, key, value): value null = delete the key. Called for dirty entries on eviction and by
  // write_back(); must make the change visible to RocksDB reads or throw.
  using WriteEntry = std::function<void(int32_t cf, std::string_view key, const std::string* value)>;

  WriteBackCache(int64_t max_size_bytes, WriteEntry write_entry);
  // Limited by a share of `pool` (joined here, left in the destructor); pool must outlive the cache.
  WriteBackCache(WriteBackCachePool* pool, WriteEntry write_entry);
  ~WriteBackCache();
  WriteBackCache(const WriteBackCache&) = delete;
  WriteBackCache& operator=(const WriteBackCache&) = delete;

  enum class Lookup { kMiss, kValue, kAbsent };
  // kValue sets *value; kAbsent: known to hold no value; kMiss: ask RocksDB, then fill().
  Lookup get(int32_t cf, std::string_view key, std::string_view* value);
  // After a miss: caches RocksDB's answer (value null = none) as clean. Returns the cached value's view.
  std::string_view fill(int32_t cf, std::string_view key, const std::string_view* value);

  void put(int32_t cf, std::string_view key, std::string_view value);
  void remove(int32_t cf, std::string_view key);
  // Appends operand to a cached entry (an absent one becomes the operand) and returns true; false when the key
  // is not cached (the caller merges in RocksDB).
  bool merge(int32_t cf, std::string_view key, std::string_view operand);

  // Hands every dirty entry to write_entry (in no particular order; keys are distinct) and marks it clean.
  void write_back();
  // Drops the entry of key / every entry of cf, dirty or not (call write_back() first to keep changes).
  void invalidate(int32_t cf, std::string_view key);
  void invalidate_column_family(int32_t cf);

  int64_t size_bytes() const { return size_bytes_; }
  // The limit now: max_size_bytes, or the pool share.
  int64_t max_size_bytes() const { return pool_ != nullptr ? pool_->share_bytes() : max_size_bytes_; }
  size_t entries() const { return lru_.size(); }
  size_t dirty_entries() const { return dirty_; }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  int64_t evictions() const { return evictions_; }
  int64_t dirty_evictions() const { return dirty_evictions_; }

 private:
  struct Entry {
    int32_t cf;
    bool has_value;
    bool dirty;
    std::string key;
    std::string value;
  };
  using List = std::list<Entry>;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Keys view the entries' own key strings (list nodes never move).
  using Index = std::unordered_map<std::string_view, List::iterator, Hash, std::equal_to<>>;

  Index& index(int32_t cf);
  List::iterator find(int32_t cf, std::string_view key);
  // Moves e to the front (most recently used).
  void touch(List::iterator e) { lru_.splice(lru_.begin(), lru_, e); }
  List::iterator insert(int32_t cf, std::string_view key, bool has_value, std::string_view value, bool dirty);
  void set_value(List::iterator e, bool has_value, std::string_view value, bool dirty);
  void mark(List::iterator e, bool dirty);
  static int64_t charge(const Entry& e) {
    return static_cast<int64_t>(e.key.size() + e.value.capacity()) + kEntryOverheadBytes;
  }
  void erase(List::iterator e);
  void evict_over_budget();
  void write(Entry& e);

  int64_t max_size_bytes_;
  WriteBackCachePool* pool_ = nullptr;  // not owned; null: max_size_bytes_ is the limit
  WriteEntry write_entry_;
  List lru_;                  // front = most recently used
  std::vector<Index> index_;  // by column family id
  int64_t size_bytes_ = 0;
  size_t dirty_ = 0;
  int64_t hits_ = 0, misses_ = 0, evictions_ = 0, dirty_evictions_ = 0;
};

}  // namespace sluice::rocksdb_cache
