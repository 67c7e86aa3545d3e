// Timers as state: the priority queue sets a keyed state backend keeps timers in (Flink's
// KeyGroupedInternalPriorityQueue / InternalPriorityQueue of TimerHeapInternalTimer, our naming).
//
// A timer is (timestamp_ms, key, namespace). A queue holds at most one timer per (key, namespace, timestamp)
// (identity by serialized bytes, as state keys: keyed_state_backend.h) and yields them in timestamp order.
// Timers live per key group, so they are checkpointed in the key-group snapshot and move with their key groups
// on a rescaled restore. Implementations: HeapTimerQueue (heap/heap_timer_queue.h; HashMapStateBackend, and
// the RocksDB backend with `state.backend.rocksdb.timer-service.factory: HEAP`) and RocksDBTimerQueue
// (rocksdb/rocksdb_timer_queue.h; a column family ordered by [key group][timestamp][key][namespace]).
//
// Canonical snapshot form (key_group_snapshot.h): a state of kind kPriorityQueue named like the queue, value
// serializer i64; one entry per timer: (serialized key, serialized namespace, TypeSerializer<int64_t> of the
// timestamp). Several entries may share a (key, namespace). The same bytes come from either store, so
// checkpoints restore across backends, timer stores and parallelisms.
//
// Ties: timers with equal timestamps come out in an order fixed by the store (heap: by a hash of key and
// namespace; RocksDB: by serialized key bytes), deterministic for equal contents but not equal across stores.
//
// Thread-safety: a queue belongs to its backend's task thread.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/state/current_key_context.h"
#include "sluice/state/key_group.h"
#include "sluice/state/key_group_snapshot.h"
#include "sluice/state/state_descriptor.h"

namespace sluice {

template <class K, class N>
struct InternalTimer {
  int64_t timestamp_ms = 0;
  K key{};
  N ns{};
};

// What the key-group snapshot records about a timer queue named `name`.
template <class N>
StateMetaInfo timer_queue_meta_info(const std::string& name) {
  return StateMetaInfo{name, StateKind::kPriorityQueue, TypeSerializer<N>::snapshot(),
                       {TypeSerializer<int64_t>::snapshot()}};
}

namespace timer_layout {

inline constexpr size_t kTimestampBytes = 8;

// Order-preserving 8-byte big-endian form of a signed timestamp (sign bit flipped), so byte order is
// timestamp order, negative timestamps included.
inline void append_timestamp(std::vector<uint8_t>& out, int64_t ts) {
  const uint64_t u = static_cast<uint64_t>(ts) ^ (uint64_t{1} << 63);
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>((u >> shift) & 0xff));
}
inline int64_t read_timestamp(const uint8_t* p) {
  uint64_t u = 0;
  for (size_t i = 0; i < kTimestampBytes; ++i) u = (u << 8) | p[i];
  return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
}

}  // namespace timer_layout

// The queue interface the timer services use (one virtual call per operation, like state objects).
template <class K, class N>
class InternalTimerQueue {
 public:
  using Timer = InternalTimer<K, N>;
  virtual ~InternalTimerQueue() = default;

  // Adds the timer (ts, key, ns); the key and its key group come from `key` (the backend's current-key
  // context). Nothing changes if the timer is there already. RocksDB errors throw RocksDBError.
  virtual void add(const CurrentKeyContext<K>& key, const N& ns, int64_t timestamp_ms) = 0;
  // Removes the timer if present.
  virtual void remove(const CurrentKeyContext<K>& key, const N& ns, int64_t timestamp_ms) = 0;
  // The earliest timestamp, or nullopt when empty. Heap: O(1); RocksDB: O(1) from the cached head of each
  // key group (a key group's head is read from RocksDB only when its cache ran empty or after a restore).
  virtual std::optional<int64_t> peek_timestamp() = 0;
  // Removes and returns the earliest timer if its timestamp is <= max_timestamp_ms.
  virtual std::optional<Timer> poll_until(int64_t max_timestamp_ms) = 0;
  // Number of timers. Heap O(1); RocksDB counts by iterating (tests, tools).
  virtual int64_t num_timers() = 0;
  // Visits the timers of key group kg in the store's order (tests, tools). kg must be in the backend's range.
  virtual void for_each_in_key_group(KeyGroup kg, const std::function<void(const Timer&)>& fn) = 0;
};

// The smallest head timestamp over the key groups of a range: an indexed binary min-heap of key-group
// indices by their head timestamp (empty key groups last), so the queue's head is found in O(1) and a key
// group's head change costs O(log key groups). Flink's KeyGroupPartitionedPriorityQueue heap-of-heaps.
class KeyGroupHeads {
 public:
  explicit KeyGroupHeads(int32_t num_key_groups)
      : rank_(static_cast<size_t>(num_key_groups), kEmptyRank),
        heap_(static_cast<size_t>(num_key_groups)),
        pos_(static_cast<size_t>(num_key_groups)) {
    for (int32_t i = 0; i < num_key_groups; ++i) {
      heap_[static_cast<size_t>(i)] = i;
      pos_[static_cast<size_t>(i)] = i;
    }
  }
  // Sets key group `index`'s head timestamp (nullopt when the key group holds no timer).
  void update(int32_t index, std::optional<int64_t> head_ts) {
    const auto i = static_cast<size_t>(index);
    const Rank old = rank_[i];
    const Rank r = rank_of(head_ts);
    if (old == r) return;
    rank_[i] = r;
    if (r < old) {
      sift_up(static_cast<size_t>(pos_[i]));
    } else {
      sift_down(static_cast<size_t>(pos_[i]));
    }
  }
  // The key-group index with the earliest head; -1 when every key group is empty.
  int32_t top_index() const {
    return heap_.empty() || rank_[static_cast<size_t>(heap_[0])] == kEmptyRank ? -1 : heap_[0];
  }
  std::optional<int64_t> top_timestamp() const {
    const int32_t i = top_index();
    if (i < 0) return std::nullopt;
    return rank_[static_cast<size_t>(i)].ts;
  }

 private:
  // Empty sorts after every timestamp.
  struct Rank {
    bool empty;
    int64_t ts;
    auto operator<=>(const Rank&) const = default;
  };
  static constexpr Rank kEmptyRank{true, 0};
  static Rank rank_of(std::optional<int64_t> ts) { return ts ? Rank{false, *ts} : kEmptyRank; }
  Rank at(size_t heap_pos) const { return rank_[static_cast<size_t>(heap_[heap_pos])]; }
  void place(size_t heap_pos, int32_t index) {
    heap_[heap_pos] = index;
    pos_[static_cast<size_t>(index)] = static_cast<int32_t>(heap_pos);
  }
  void sift_up(size_t p) {
    const int32_t index = heap_[p];
    const Rank r = rank_[static_cast<size_t>(index)];
    while (p > 0) {
      const size_t parent = (p - 1) / 2;
      if (at(parent) <= r) break;
      place(p, heap_[parent]);
      p = parent;
    }
    place(p, index);
  }
  void sift_down(size_t p) {
    const int32_t index = heap_[p];
    const Rank r = rank_[static_cast<size_t>(index)];
    const size_t n = heap_.size();
    while (true) {
      size_t child = 2 * p + 1;
      if (child >= n) break;
      if (child + 1 < n && at(child + 1) < at(child)) ++child;
      if (at(child) >= r) break;
      place(p, heap_[child]);
      p = child;
    }
    place(p, index);
  }

  std::vector<Rank> rank_;  // by key-group index
  std::vector<int32_t> heap_;            // key-group indices, min-heap by rank_
  std::vector<int32_t> pos_;             // key-group index -> position in heap_
};

}  // namespace sluice
