// HeapTimerSet<K, N>: the timers of one key group on the heap: a 4-ary min-heap of small entries over a slab of
// timers, with a hash index for deduplication. Adding a timer that is there already, adding a new one and removing
// one cost O(1) expected plus the heap's sift (usually short: new timers tend to be later than most); taking the
// earliest costs O(log n). The role of Flink's HeapPriorityQueueSet (a heap plus a hash map for deduplication),
// laid out for cache misses rather than objects:
// - the heap holds (timestamp, hash, slab handle) entries of 24 bytes, so sifting moves only those, side by side
//   (four children per node: half the levels of a binary heap); the index and the slab never move during a sift;
// - the index maps a timer to its slab handle, which is stable for the timer's life;
// - remove() is lazy: the timer leaves the index and the slab marks it dead at once (size() and deduplication see
//   it gone), and its heap entry is dropped when it reaches the top, or when dead entries outnumber live ones
//   (then the heap is rebuilt from the live ones, O(n) amortized over the removals: the heap holds at most
//   2 * size() + 64 entries).
//
// Order: (timestamp, hash of key and namespace, serialized key and namespace bytes on a hash tie), so timers
// with equal timestamps come out in an order fixed by their contents, whatever the history of adds.
// Identity: timestamp, key and namespace (state_key_equal: as state keys).
// Index: open addressing with linear probing and backward-shift deletion (no tombstones), load factor <= 1/2;
// at most 2^31 timers per key group.
// Thread-safety: none (a key group's timers belong to the backend's task thread).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/detail/state/heap/state_map.h"
#include "sluice/state/timer_queue.h"

namespace sluice {

template <class K, class N>
class HeapTimerSet {
 public:
  using Timer = InternalTimer<K, N>;

  // Adds the timer unless an equal one is there; true when added. `key_ns_hash`: the backend's state-key hash of
  // the timer's key and namespace (the tie-break of the order and the index hash).
  bool add(Timer timer, uint64_t key_ns_hash) {
    if ((live_ + 1) * 2 > index_.size()) grow();
    const size_t mask = index_.size() - 1;
    const uint32_t t = tag(timer.timestamp_ms, key_ns_hash);
    size_t s = home(t);
    for (; index_[s] != 0; s = (s + 1) & mask) {
      if (tag_of(index_[s]) == t && same(slab_[handle_of(index_[s])], timer)) return false;
    }
    const int64_t ts = timer.timestamp_ms;
    const uint32_t h = allocate(std::move(timer));
    index_[s] = entry(t, h);
    heap_.push_back(Entry{ts, key_ns_hash, h});
    sift_up(heap_.size() - 1);
    ++live_;
    return true;
  }

  // Removes the timer if present; true when removed.
  bool remove(const Timer& timer, uint64_t key_ns_hash) {
    if (live_ == 0) return false;
    const size_t mask = index_.size() - 1;
    const uint32_t t = tag(timer.timestamp_ms, key_ns_hash);
    for (size_t s = home(t); index_[s] != 0; s = (s + 1) & mask) {
      const uint32_t h = handle_of(index_[s]);
      if (tag_of(index_[s]) == t && same(slab_[h], timer)) {
        erase_slot(s);
        slab_[h].live = false;
        --live_;
        ++dead_;
        drop_dead_top();
        if (dead_ > live_ + kCompactSlack) compact();
        return true;
      }
    }
    return false;
  }

  bool empty() const { return live_ == 0; }
  size_t size() const { return live_; }
  // The earliest timer's timestamp. Precondition: !empty().
  int64_t top_timestamp() const { return heap_.front().ts; }
  // Removes and returns the earliest timer. Precondition: !empty().
  Timer pop() {
    const Entry top = heap_.front();
    Slot& slot = slab_[top.handle];
    Timer out = std::move(slot.timer);
    erase_slot(find_slot(tag(top.ts, top.hash), top.handle));
    release(top.handle);
    --live_;
    pop_heap_top();
    drop_dead_top();
    if (dead_ > live_ + kCompactSlack) compact();
    if (!heap_.empty()) {
      // Timers are usually drained in a run: start loading what the next pop reads (its slab slot and index home).
      const Entry& next = heap_.front();
      __builtin_prefetch(&slab_[next.handle]);
      __builtin_prefetch(&index_[home(tag(next.ts, next.hash))]);
    }
    return out;
  }

  // Visits the timers in the set's order (snapshots and tools: O(n log n)).
  template <class F>
  void for_each_sorted(F&& fn) const {
    std::vector<Entry> entries;
    entries.reserve(live_);
    for (const Entry& e : heap_) {
      if (slab_[e.handle].live) entries.push_back(e);
    }
    std::sort(entries.begin(), entries.end(), [this](const Entry& a, const Entry& b) { return less(a, b); });
    for (const Entry& e : entries) fn(slab_[e.handle].timer);
  }

  // Heap entries held, removed timers not yet reclaimed included (at most 2 * size() + a small constant).
  size_t held_entries() const { return heap_.size(); }
  size_t bytes_estimate() const {
    return heap_.capacity() * sizeof(Entry) + slab_.capacity() * sizeof(Slot) + free_.capacity() * sizeof(uint32_t) +
           index_.capacity() * sizeof(uint64_t);
  }

 private:
  struct Entry {
    int64_t ts;
    uint64_t hash;    // of key and namespace
    uint32_t handle;  // into slab_
  };
  struct Slot {
    Timer timer;
    bool live = false;  // false: removed (its heap entry not yet dropped) or free
  };

  bool less(const Entry& a, const Entry& b) const {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.hash != b.hash) return a.hash < b.hash;
    return less_by_bytes(slab_[a.handle].timer, slab_[b.handle].timer);
  }
  // Equal hashes: the same timer (a live one and a removed copy) or a 64-bit collision: order by bytes (rare).
  [[gnu::noinline]] static bool less_by_bytes(const Timer& a, const Timer& b) {
    std::vector<uint8_t> sa, sb;
    serialize_append(a.key, sa);
    serialize_append(a.ns, sa);
    serialize_append(b.key, sb);
    serialize_append(b.ns, sb);
    return sa < sb;
  }
  // Called after the tag matched (a function of the hash and timestamp), so the hash needs no comparison.
  static bool same(const Slot& s, const Timer& t) {
    return s.timer.timestamp_ms == t.timestamp_ms && detail::state_key_equal(s.timer.key, t.key) &&
           detail::state_key_equal(s.timer.ns, t.ns);
  }

  uint32_t allocate(Timer&& timer) {
    uint32_t h;
    if (!free_.empty()) {
      h = free_.back();
      free_.pop_back();
      slab_[h].timer = std::move(timer);
    } else {
      h = static_cast<uint32_t>(slab_.size());
      slab_.push_back(Slot{std::move(timer), false});
    }
    slab_[h].live = true;
    return h;
  }
  void release(uint32_t h) {
    slab_[h].live = false;
    slab_[h].timer = Timer{};  // drop what the key and namespace own
    free_.push_back(h);
  }

  // An index entry: the timer's 32-bit tag (high half) and its slab handle + 1 (low half); 0 is empty. The tag
  // settles most mismatches without loading the slab, and its top bits are the home slot, so deletion finds an
  // entry's home without the slab either.
  static uint32_t tag(int64_t ts, uint64_t h) {
    uint64_t x = h ^ (static_cast<uint64_t>(ts) * 0x9E3779B97F4A7C15ULL);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 32;
    return static_cast<uint32_t>(x);
  }
  static uint64_t entry(uint32_t t, uint32_t handle) { return (uint64_t{t} << 32) | (uint64_t{handle} + 1); }
  static uint32_t tag_of(uint64_t e) { return static_cast<uint32_t>(e >> 32); }
  static uint32_t handle_of(uint64_t e) { return static_cast<uint32_t>((e & 0xffffffffULL) - 1); }
  size_t home(uint32_t t) const { return static_cast<size_t>(t >> shift_); }
  // The index slot of a live timer's entry.
  size_t find_slot(uint32_t t, uint32_t handle) const {
    const uint64_t want = entry(t, handle);
    const size_t mask = index_.size() - 1;
    size_t s = home(t);
    while (index_[s] != want) s = (s + 1) & mask;
    return s;
  }

  void grow() {
    index_.assign(std::max<size_t>(16, index_.size() * 2), 0);
    shift_ = 32 - std::countr_zero(index_.size());
    const size_t mask = index_.size() - 1;
    for (const Entry& e : heap_) {
      if (!slab_[e.handle].live) continue;
      const uint32_t t = tag(e.ts, e.hash);
      size_t s = home(t);
      while (index_[s] != 0) s = (s + 1) & mask;
      index_[s] = entry(t, e.handle);
    }
  }

  // Clears index slot s, shifting back the entries of its probe run that may move (Knuth's Algorithm R).
  void erase_slot(size_t s) {
    const size_t mask = index_.size() - 1;
    size_t hole = s;
    for (size_t j = (s + 1) & mask; index_[j] != 0; j = (j + 1) & mask) {
      const size_t h = home(tag_of(index_[j]));
      // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        index_[hole] = index_[j];
        hole = j;
      }
    }
    index_[hole] = 0;
  }

  // Drops removed timers' entries from the top, so that the top is live whenever a timer is.
  void drop_dead_top() {
    while (dead_ > 0 && !heap_.empty() && !slab_[heap_.front().handle].live) {
      release(heap_.front().handle);
      --dead_;
      pop_heap_top();
    }
  }
  // Rebuilds the heap from the live entries (Floyd's bottom-up construction).
  void compact() {
    std::vector<Entry> kept;
    kept.reserve(live_);
    for (const Entry& e : heap_) {
      if (slab_[e.handle].live) {
        kept.push_back(e);
      } else {
        release(e.handle);
      }
    }
    heap_ = std::move(kept);
    dead_ = 0;
    for (size_t i = heap_.size() / kArity + 1; i-- > 0;) {
      if (i < heap_.size()) sift_down(i);
    }
  }

  void pop_heap_top() {
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
  }
  static size_t parent_of(size_t pos) { return (pos - 1) / kArity; }
  void sift_up(size_t pos) {
    const Entry e = heap_[pos];
    while (pos > 0) {
      const size_t parent = parent_of(pos);
      if (!less(e, heap_[parent])) break;
      heap_[pos] = heap_[parent];
      pos = parent;
    }
    heap_[pos] = e;
  }
  void sift_down(size_t pos) {
    const size_t size = heap_.size();
    const Entry e = heap_[pos];
    for (;;) {
      const size_t first = kArity * pos + 1;
      if (first >= size) break;
      size_t child = first;
      const size_t end = std::min(first + kArity, size);
      for (size_t c = first + 1; c < end; ++c) {
        if (less(heap_[c], heap_[child])) child = c;
      }
      if (!less(heap_[child], e)) break;
      heap_[pos] = heap_[child];
      pos = child;
    }
    heap_[pos] = e;
  }

  static constexpr size_t kArity = 4;
  static constexpr size_t kCompactSlack = 64;  // dead entries tolerated beyond the live count

  std::vector<Entry> heap_;      // a 4-ary min-heap by less(); may hold removed timers' entries
  std::vector<Slot> slab_;       // timers by handle
  std::vector<uint32_t> free_;   // free slab handles
  std::vector<uint64_t> index_;  // entry(): tag and handle + 1; 0: empty. Size a power of two (or 0).
  int shift_ = 32;               // home(tag) = tag >> shift_: the top log2(index size) bits
  size_t live_ = 0;
  size_t dead_ = 0;  // removed timers whose heap entries are still held
};

}  // namespace sluice
