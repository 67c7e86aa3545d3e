// HeapTimerQueue<K, N>: timers on the heap, one ordered set per key group (Flink's HeapPriorityQueueSet inside a
// KeyGroupPartitionedPriorityQueue). The timer store of HashMapStateBackend, and of the RocksDB backend with
// `state.backend.rocksdb.timer-service.factory: HEAP`.
//
// Per key group a HeapTimerSet (heap_timer_set.h: a 4-ary min-heap ordered by (timestamp, hash of key and
// namespace, serialized bytes on a hash tie) with a hash index): a timer that is there already is found in O(1)
// expected, add and remove sift the heap; KeyGroupHeads keeps the smallest head over the key groups. It is also a StateTableBase, so the heap backend snapshots, restores and redistributes it with its
// key groups like any state (canonical form: timer_queue.h).
//
// Snapshots are synchronous: snapshot() copies the timers into canonical bytes at the barrier (O(timers)), as
// Flink's heap timers are copied at the synchronous part; the asynchronous part only hands the bytes out.
// Thread-safety: task thread; the StateTableSnapshot it hands out is immutable and readable from any thread.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/data_view.h"
#include "sluice/detail/state/heap/heap_timer_set.h"
#include "sluice/detail/state/heap/state_map.h"
#include "sluice/detail/state/heap/state_table.h"
#include "sluice/state/timer_queue.h"

namespace sluice {

namespace detail {

inline std::string_view bytes_view(const std::vector<uint8_t>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

// Appends one timer as a canonical snapshot entry.
template <class K, class N>
void append_timer_entry(const InternalTimer<K, N>& t, std::vector<uint8_t>& entries, std::vector<uint8_t>& kbuf,
                        std::vector<uint8_t>& nbuf, std::vector<uint8_t>& vbuf) {
  kbuf.clear();
  nbuf.clear();
  vbuf.clear();
  serialize_append(t.key, kbuf);
  serialize_append(t.ns, nbuf);
  serialize_append(t.timestamp_ms, vbuf);
  KeyGroupSnapshotWriter::append_entry(entries, bytes_view(kbuf), bytes_view(nbuf), bytes_view(vbuf));
}

// Decodes one canonical timer entry of key group kg. kCorruption naming the state and the bad part.
template <class K, class N>
Status decode_timer_entry(const std::string& state, std::string_view key_bytes, std::string_view ns_bytes,
                          std::string_view value_bytes, KeyGroup kg, int32_t max_parallelism,
                          InternalTimer<K, N>* out) {
  DataInputView kin(key_bytes);
  out->key = TypeSerializer<K>::deserialize(kin);
  if (!kin.ok() || !kin.at_end()) return Status::corruption("timer state '" + state + "': a key does not decode");
  const auto* kp = reinterpret_cast<const uint8_t*>(key_bytes.data());
  if (key_group_for_key_bytes(kp, key_bytes.size(), max_parallelism) != kg) {
    return Status::corruption("timer state '" + state + "': a key does not belong to key group " +
                              std::to_string(kg.value()));
  }
  DataInputView nin(ns_bytes);
  out->ns = TypeSerializer<N>::deserialize(nin);
  if (!nin.ok() || !nin.at_end()) return Status::corruption("timer state '" + state + "': a namespace does not decode");
  DataInputView vin(value_bytes);
  out->timestamp_ms = TypeSerializer<int64_t>::deserialize(vin);
  if (!vin.ok() || !vin.at_end()) return Status::corruption("timer state '" + state + "': a timestamp does not decode");
  return Status::ok();
}

// A snapshot of timers already in canonical bytes (per key-group index).
class CopiedTimerTableSnapshot final : public StateTableSnapshot {
 public:
  CopiedTimerTableSnapshot(StateMetaInfo meta, std::vector<std::vector<uint8_t>> entries, std::vector<size_t> counts)
      : StateTableSnapshot(std::move(meta)), entries_(std::move(entries)), counts_(std::move(counts)) {}
  size_t size_of_key_group(int32_t index) const override { return counts_[static_cast<size_t>(index)]; }
  uint64_t write_key_group(int32_t index, std::vector<uint8_t>& entries) const override {
    const auto& e = entries_[static_cast<size_t>(index)];
    entries.insert(entries.end(), e.begin(), e.end());
    return counts_[static_cast<size_t>(index)];
  }

 private:
  std::vector<std::vector<uint8_t>> entries_;
  std::vector<size_t> counts_;
};

}  // namespace detail

template <class K, class N>
class HeapTimerQueue final : public InternalTimerQueue<K, N>, public StateTableBase {
 public:
  using Timer = InternalTimer<K, N>;

  // `range`: the backend's key groups.
  HeapTimerQueue(StateMetaInfo meta, KeyGroupRange range, int32_t max_parallelism)
      : StateTableBase(std::move(meta)),
        range_(range),
        max_parallelism_(max_parallelism),
        sets_(static_cast<size_t>(range.num_key_groups())),
        heads_(range.num_key_groups()) {}

  // ---- InternalTimerQueue ----
  void add(const CurrentKeyContext<K>& key, const N& ns, int64_t ts) override {
    auto& set = sets_[static_cast<size_t>(key.key_group_index)];
    if (set.add(Timer{ts, key.key, ns}, node_hash(key.key_hash, ns))) {
      ++size_;
      if (set.top_timestamp() == ts) heads_.update(key.key_group_index, ts);
    }
  }
  void remove(const CurrentKeyContext<K>& key, const N& ns, int64_t ts) override {
    auto& set = sets_[static_cast<size_t>(key.key_group_index)];
    if (!set.remove(Timer{ts, key.key, ns}, node_hash(key.key_hash, ns))) return;
    --size_;
    refresh_head(key.key_group_index);
  }
  std::optional<int64_t> peek_timestamp() override { return heads_.top_timestamp(); }
  std::optional<Timer> poll_until(int64_t max_ts) override {
    const std::optional<int64_t> head = heads_.top_timestamp();
    if (!head || *head > max_ts) return std::nullopt;
    const int32_t index = heads_.top_index();
    auto& set = sets_[static_cast<size_t>(index)];
    Timer timer = set.pop();
    --size_;
    refresh_head(index);
    return timer;
  }
  int64_t num_timers() override { return static_cast<int64_t>(size_); }
  void for_each_in_key_group(KeyGroup kg, const std::function<void(const Timer&)>& fn) override {
    sets_[static_cast<size_t>(range_.index_of(kg))].for_each_sorted(fn);
  }

  // ---- StateTableBase (the heap backend's snapshot and restore) ----
  size_t size() const override { return size_; }
  size_t size_of_key_group(int32_t index) const override { return sets_[static_cast<size_t>(index)].size(); }
  int64_t size_bytes_estimate() const override {
    size_t bytes = 0;
    for (const Set& set : sets_) bytes += set.bytes_estimate();
    return static_cast<int64_t>(bytes);
  }
  uint64_t write_key_group(int32_t index, std::vector<uint8_t>& entries) const override {
    std::vector<uint8_t> k, n, v;
    const Set& set = sets_[static_cast<size_t>(index)];
    set.for_each_sorted([&](const Timer& t) { detail::append_timer_entry(t, entries, k, n, v); });
    return set.size();
  }
  Status stage_key_group(KeyGroup kg, int32_t index, const StateSnapshotView& view, int32_t max_parallelism) override {
    Set staged;
    SnapshotEntryReader reader(view);
    std::string_view kb, nb, vb;
    while (reader.next(&kb, &nb, &vb)) {
      Timer t;
      SLUICE_RETURN_IF_ERROR(detail::decode_timer_entry(meta().name, kb, nb, vb, kg, max_parallelism, &t));
      const uint64_t h = node_hash(hash_key_bytes(kb.data(), kb.size()), t.ns);
      staged.add(std::move(t), h);
    }
    if (!reader.ok()) return Status::corruption("timer state '" + meta().name + "': malformed entries");
    staged_[index] = std::move(staged);
    return Status::ok();
  }
  void commit_staged(int32_t index) override {
    auto& set = sets_[static_cast<size_t>(index)];
    size_ -= set.size();
    auto it = staged_.find(index);
    if (it != staged_.end()) {
      set = std::move(it->second);
      staged_.erase(it);
    } else {
      set = Set();
    }
    size_ += set.size();
    refresh_head(index);
  }
  void discard_staged() override { staged_.clear(); }
  std::unique_ptr<StateTableSnapshot> snapshot() const override {
    std::vector<std::vector<uint8_t>> entries(sets_.size());
    std::vector<size_t> counts(sets_.size());
    for (size_t i = 0; i < sets_.size(); ++i) counts[i] = write_key_group(static_cast<int32_t>(i), entries[i]);
    return std::make_unique<detail::CopiedTimerTableSnapshot>(meta(), std::move(entries), std::move(counts));
  }

  const KeyGroupRange& key_group_range() const { return range_; }
  int32_t max_parallelism() const { return max_parallelism_; }

 private:
  using Set = HeapTimerSet<K, N>;

  static uint64_t node_hash(uint64_t key_hash, const N& ns) {
    return detail::combine_key_namespace_hash(key_hash, detail::namespace_hash(ns));
  }
  void refresh_head(int32_t index) {
    const auto& set = sets_[static_cast<size_t>(index)];
    heads_.update(index, set.empty() ? std::nullopt : std::optional<int64_t>(set.top_timestamp()));
  }

  KeyGroupRange range_;
  int32_t max_parallelism_;
  std::vector<Set> sets_;  // by key-group index
  KeyGroupHeads heads_;
  size_t size_ = 0;
  std::map<int32_t, Set> staged_;
};

}  // namespace sluice
