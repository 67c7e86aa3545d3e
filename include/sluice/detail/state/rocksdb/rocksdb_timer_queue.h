// Timers in RocksDB (Flink's RocksDBPriorityQueueSetFactory / RocksDBCachingPriorityQueueSet, our layout).
// Implementation header of EmbeddedRocksDBStateBackend; users do not include it.
//
//   one column family per timer queue ("state:<queue name>", like a state)
//   key   = [key group: 2 bytes big-endian][timestamp: 8 bytes, order-preserving big-endian][serialized key]
//           [serialized namespace]
//   value = empty
//
// Bytes order the timers of a key group by timestamp (then key, then namespace), so a key group's earliest
// timers are the first keys of its 2-byte prefix, and one key per (key, namespace, timestamp) makes the queue a
// set. Per key group the queue caches the first kCacheCapacity timers (decoded) and whether that is all of
// them; KeyGroupHeads picks the key group with the earliest head. Peeking the next timer therefore never reads
// RocksDB on the per-record path; a key group's head is read again (one iterator seek) only when its cache
// runs empty while RocksDB holds more, and for every key group after a restore (invalidate()).
//
// Snapshots: the column family is part of the RocksDB state, so full snapshots write it in the canonical form
// (TimerRocksDBStateCodec) and incremental snapshots carry its SST files.
// Errors: RocksDB failures throw RocksDBError (from RocksDBStore); a stored key that does not decode too.
// Thread-safety: task thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/detail/state/heap/heap_timer_queue.h"
#include "sluice/detail/state/rocksdb/rocksdb_key_layout.h"
#include "sluice/detail/state/rocksdb/rocksdb_state_codec.h"
#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "sluice/state/timer_queue.h"

namespace sluice {

namespace detail {

inline constexpr size_t kTimerKeyPrefixBytes = rocksdb_layout::kKeyGroupPrefixBytes + timer_layout::kTimestampBytes;

// Splits a stored timer key into its parts; false if it does not decode as (K, N).
template <class K, class N>
bool split_timer_key(std::string_view stored, int64_t* ts, std::string_view* key_bytes, std::string_view* ns_bytes) {
  if (stored.size() < kTimerKeyPrefixBytes) return false;
  *ts = timer_layout::read_timestamp(reinterpret_cast<const uint8_t*>(stored.data()) + rocksdb_layout::kKeyGroupPrefixBytes);
  std::string_view rest = stored.substr(kTimerKeyPrefixBytes);
  DataInputView in(rest);
  if (!rocksdb_layout::skip_serialized<K>(in)) return false;
  *key_bytes = rest.substr(0, in.position());
  *ns_bytes = rest.substr(in.position());
  return decodes_exactly_as<N>(*ns_bytes);
}

}  // namespace detail

// Converts a timer column family to and from canonical snapshot entries (timer_queue.h).
template <class K, class N>
class TimerRocksDBStateCodec final : public RocksDBStateCodec {
 public:
  using RocksDBStateCodec::RocksDBStateCodec;

  Result<uint64_t> append_snapshot_entries(RocksDBStore::Iterator& it, std::vector<uint8_t>& entries,
                                           RocksDBCodecScratch& scratch) const override {
    uint64_t count = 0;
    for (; it.valid(); it.next()) {
      int64_t ts = 0;
      std::string_view kb, nb;
      if (!detail::split_timer_key<K, N>(it.key(), &ts, &kb, &nb)) {
        return Status::corruption("timer state '" + state_name() + "': a stored timer does not decode");
      }
      scratch.value.clear();
      serialize_append(ts, scratch.value);
      KeyGroupSnapshotWriter::append_entry(entries, kb, nb, as_bytes_view(scratch.value));
      ++count;
    }
    SLUICE_RETURN_IF_ERROR(it.status());
    return count;
  }

  Status add_restored_entries(const StateSnapshotView& view, KeyGroup kg, int32_t max_parallelism, int32_t cf,
                              RocksDBStore::WriteBatch& batch, RocksDBCodecScratch& scratch) const override {
    SnapshotEntryReader reader(view);
    std::string_view kb, nb, vb;
    InternalTimer<K, N> t;
    while (reader.next(&kb, &nb, &vb)) {
      SLUICE_RETURN_IF_ERROR(detail::decode_timer_entry(state_name(), kb, nb, vb, kg, max_parallelism, &t));
      std::vector<uint8_t>& key = scratch.key;
      key.clear();
      rocksdb_layout::append_key_group(key, kg.value());
      timer_layout::append_timestamp(key, t.timestamp_ms);
      key.insert(key.end(), kb.begin(), kb.end());
      key.insert(key.end(), nb.begin(), nb.end());
      batch.put(cf, as_bytes_view(key), {});
    }
    if (!reader.ok()) return Status::corruption("timer state '" + state_name() + "': malformed entries");
    return Status::ok();
  }
};

template <class K, class N>
class RocksDBTimerQueue final : public InternalTimerQueue<K, N> {
 public:
  using Timer = InternalTimer<K, N>;
  // Timers cached per key group (Flink's RocksDBCachingPriorityQueueSet caches 128 too).
  static constexpr size_t kCacheCapacity = 128;

  RocksDBTimerQueue(std::string name, RocksDBStore* store, int32_t cf, KeyGroupRange range)
      : name_(std::move(name)),
        store_(store),
        cf_(cf),
        range_(range),
        groups_(static_cast<size_t>(range.num_key_groups())),
        heads_(range.num_key_groups()),
        unloaded_(range.num_key_groups()) {}

  // Forget every cached head (the column family changed underneath: a restore). Heads are read again lazily.
  void invalidate() {
    for (Group& g : groups_) {
      g.cache.clear();
      g.loaded = false;
      g.all_in_cache = false;
    }
    for (int32_t i = 0; i < range_.num_key_groups(); ++i) heads_.update(i, std::nullopt);
    unloaded_ = range_.num_key_groups();
  }

  void add(const CurrentKeyContext<K>& key, const N& ns, int64_t ts) override {
    encode(key, ns, ts);
    store_->put(cf_, as_bytes_view(buf_), {});
    Group& g = groups_[static_cast<size_t>(key.key_group_index)];
    if (!g.loaded) return;  // read with the others at the next peek
    std::string_view stored = as_bytes_view(buf_);
    if (!g.all_in_cache && stored >= std::string_view(g.cache.rbegin()->first)) return;  // beyond the cache
    g.cache.try_emplace(std::string(stored), Timer{ts, key.key, ns});
    if (g.cache.size() > kCacheCapacity) {
      g.cache.erase(std::prev(g.cache.end()));
      g.all_in_cache = false;
    }
    heads_.update(key.key_group_index, g.cache.begin()->second.timestamp_ms);
  }

  void remove(const CurrentKeyContext<K>& key, const N& ns, int64_t ts) override {
    encode(key, ns, ts);
    store_->remove(cf_, as_bytes_view(buf_));
    Group& g = groups_[static_cast<size_t>(key.key_group_index)];
    if (!g.loaded) return;
    auto it = g.cache.find(std::string(as_bytes_view(buf_)));
    if (it == g.cache.end()) return;
    g.cache.erase(it);
    after_cache_shrank(key.key_group_index);
  }

  std::optional<int64_t> peek_timestamp() override {
    load_all();
    return heads_.top_timestamp();
  }

  std::optional<Timer> poll_until(int64_t max_ts) override {
    std::optional<int64_t> head = peek_timestamp();
    if (!head || *head > max_ts) return std::nullopt;
    const int32_t index = heads_.top_index();
    Group& g = groups_[static_cast<size_t>(index)];
    auto node = g.cache.extract(g.cache.begin());
    store_->remove(cf_, node.key());
    after_cache_shrank(index);
    return std::move(node.mapped());
  }

  int64_t num_timers() override {
    int64_t n = 0;
    for (KeyGroup kg : range_) {
      auto it = iterate(kg);
      for (; it->valid(); it->next()) ++n;
      check(*it);
    }
    return n;
  }

  void for_each_in_key_group(KeyGroup kg, const std::function<void(const Timer&)>& fn) override {
    auto it = iterate(kg);
    for (; it->valid(); it->next()) fn(decode(it->key()));
    check(*it);
  }

 private:
  struct Group {
    std::map<std::string, Timer, std::less<>> cache;  // the first timers of the key group, by stored key
    bool loaded = false;        // cache reflects RocksDB
    bool all_in_cache = false;  // RocksDB holds no timer of this key group beyond the cache
  };

  void encode(const CurrentKeyContext<K>& key, const N& ns, int64_t ts) {
    buf_.clear();
    rocksdb_layout::append_key_group(buf_, key.key_group);
    timer_layout::append_timestamp(buf_, ts);
    serialize_append(key.key, buf_);
    serialize_append(ns, buf_);
  }

  Timer decode(std::string_view stored) const {
    int64_t ts = 0;
    std::string_view kb, nb;
    if (!detail::split_timer_key<K, N>(stored, &ts, &kb, &nb)) {
      throw RocksDBError("timer state '" + name_ + "': a stored timer does not decode");
    }
    Timer t;
    t.timestamp_ms = ts;
    DataInputView kin(kb);
    t.key = TypeSerializer<K>::deserialize(kin);
    DataInputView nin(nb);
    t.ns = TypeSerializer<N>::deserialize(nin);
    return t;
  }

  std::unique_ptr<RocksDBStore::Iterator> iterate(KeyGroup kg) const {
    return store_->new_iterator(cf_, rocksdb_layout::key_group_prefix(kg.value()),
                                rocksdb_layout::key_group_prefix(kg.value() + 1));
  }
  void check(const RocksDBStore::Iterator& it) const {
    Status st = it.status();
    if (!st.is_ok()) throw RocksDBError("timer state '" + name_ + "': " + st.to_string());
  }

  // Reads the first kCacheCapacity timers of key group `index` into its cache.
  void load(int32_t index) {
    Group& g = groups_[static_cast<size_t>(index)];
    g.cache.clear();
    auto it = iterate(KeyGroup(range_.start() + index));
    while (it->valid() && g.cache.size() < kCacheCapacity) {
      g.cache.emplace(std::string(it->key()), decode(it->key()));
      it->next();
    }
    check(*it);
    g.all_in_cache = !it->valid();
    if (!g.loaded) {
      g.loaded = true;
      --unloaded_;
    }
    update_head(index);
  }
  void load_all() {
    if (unloaded_ == 0) return;
    for (int32_t i = 0; i < range_.num_key_groups(); ++i) {
      if (!groups_[static_cast<size_t>(i)].loaded) load(i);
    }
  }
  void update_head(int32_t index) {
    const Group& g = groups_[static_cast<size_t>(index)];
    heads_.update(index, g.cache.empty() ? std::nullopt : std::optional<int64_t>(g.cache.begin()->second.timestamp_ms));
  }
  void after_cache_shrank(int32_t index) {
    Group& g = groups_[static_cast<size_t>(index)];
    if (g.cache.empty() && !g.all_in_cache) {
      load(index);
      return;
    }
    update_head(index);
  }

  std::string name_;
  RocksDBStore* store_;
  int32_t cf_;
  KeyGroupRange range_;
  std::vector<Group> groups_;  // by key-group index
  KeyGroupHeads heads_;
  int32_t unloaded_;  // key groups whose cache is not loaded
  std::vector<uint8_t> buf_;
};

}  // namespace sluice
