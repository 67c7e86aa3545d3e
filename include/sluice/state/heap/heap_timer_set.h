// HeapTimerSet<K, N>: the timers of one key group on the heap: a binary min-heap with a hash index, so that
// adding a timer that is there already, adding a new one and removing one cost O(1) expected plus the heap's
// sift (usually short: new timers tend to be later than most), and taking the earliest costs O(log n).
// The structure of Flink's HeapPriorityQueueSet (a heap whose elements know their position, and a hash map for
// deduplication), written for value types: each node records its index slot, each index slot its heap position.
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
#include "sluice/state/heap/state_map.h"
#include "sluice/state/timer_queue.h"

namespace sluice {

template <class K, class N>
class HeapTimerSet {
 public:
  using Timer = InternalTimer<K, N>;
  struct Node {
    Timer timer;
    uint64_t hash = 0;  // of key and namespace (the backend's state-key hash): cheap tie-break and index hash
    uint32_t slot = 0;  // this node's slot in the index
  };

  // Adds the timer unless an equal one is there; true when added.
  bool add(Timer timer, uint64_t key_ns_hash) {
    if ((heap_.size() + 1) * 2 > index_.size()) grow();
    const size_t mask = index_.size() - 1;
    const uint32_t t = tag(timer.timestamp_ms, key_ns_hash);
    size_t s = home(t);
    for (; index_[s] != 0; s = (s + 1) & mask) {
      if (tag_of(index_[s]) == t && same(heap_[pos_of(index_[s])], timer, key_ns_hash)) return false;
    }
    heap_.push_back(Node{std::move(timer), key_ns_hash, static_cast<uint32_t>(s)});
    index_[s] = entry(t, heap_.size() - 1);
    sift_up(heap_.size() - 1);
    return true;
  }

  // Removes the timer if present; true when removed.
  bool remove(const Timer& timer, uint64_t key_ns_hash) {
    if (heap_.empty()) return false;
    const size_t mask = index_.size() - 1;
    const uint32_t t = tag(timer.timestamp_ms, key_ns_hash);
    for (size_t s = home(t); index_[s] != 0; s = (s + 1) & mask) {
      const size_t pos = pos_of(index_[s]);
      if (tag_of(index_[s]) == t && same(heap_[pos], timer, key_ns_hash)) {
        erase_at(pos);
        return true;
      }
    }
    return false;
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // The earliest node. Precondition: !empty().
  const Node& top() const { return heap_.front(); }
  // Removes and returns the earliest node. Precondition: !empty().
  Node pop() {
    Node out = std::move(heap_.front());
    erase_at(0, &out);
    return out;
  }

  // Visits the timers in the set's order (snapshots and tools: O(n log n)).
  template <class F>
  void for_each_sorted(F&& fn) const {
    std::vector<const Node*> nodes;
    nodes.reserve(heap_.size());
    for (const Node& n : heap_) nodes.push_back(&n);
    std::sort(nodes.begin(), nodes.end(), [](const Node* a, const Node* b) { return less(*a, *b); });
    for (const Node* n : nodes) fn(n->timer);
  }

  size_t bytes_estimate() const { return heap_.capacity() * sizeof(Node) + index_.capacity() * sizeof(uint64_t); }

 private:
  static bool less(const Node& a, const Node& b) {
    if (a.timer.timestamp_ms != b.timer.timestamp_ms) return a.timer.timestamp_ms < b.timer.timestamp_ms;
    if (a.hash != b.hash) return a.hash < b.hash;
    return less_by_bytes(a, b);
  }
  // Equal hashes: the same timer (never two nodes of one set) or a 64-bit collision: order by bytes (rare).
  [[gnu::noinline]] static bool less_by_bytes(const Node& a, const Node& b) {
    std::vector<uint8_t> sa, sb;
    serialize_append(a.timer.key, sa);
    serialize_append(a.timer.ns, sa);
    serialize_append(b.timer.key, sb);
    serialize_append(b.timer.ns, sb);
    return sa < sb;
  }
  static bool same(const Node& n, const Timer& t, uint64_t h) {
    return n.hash == h && n.timer.timestamp_ms == t.timestamp_ms && detail::state_key_equal(n.timer.key, t.key) &&
           detail::state_key_equal(n.timer.ns, t.ns);
  }
  // An index entry: the timer's 32-bit tag (high half) and its heap position + 1 (low half); 0 is empty. The tag
  // settles most mismatches without loading the node, and its top bits are the home slot, so deletion finds an
  // entry's home without the node either.
  static uint32_t tag(int64_t ts, uint64_t h) {
    uint64_t x = h ^ (static_cast<uint64_t>(ts) * 0x9E3779B97F4A7C15ULL);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 32;
    return static_cast<uint32_t>(x);
  }
  static uint64_t entry(uint32_t t, size_t pos) { return (uint64_t{t} << 32) | (pos + 1); }
  static uint32_t tag_of(uint64_t e) { return static_cast<uint32_t>(e >> 32); }
  static size_t pos_of(uint64_t e) { return static_cast<size_t>(e & 0xffffffffULL) - 1; }
  size_t home(uint32_t t) const { return static_cast<size_t>(t >> shift_); }

  void grow() {
    index_.assign(std::max<size_t>(16, index_.size() * 2), 0);
    shift_ = 32 - std::countr_zero(index_.size());
    const size_t mask = index_.size() - 1;
    for (size_t pos = 0; pos < heap_.size(); ++pos) {
      Node& n = heap_[pos];
      const uint32_t t = tag(n.timer.timestamp_ms, n.hash);
      size_t s = home(t);
      while (index_[s] != 0) s = (s + 1) & mask;
      index_[s] = entry(t, pos);
      n.slot = static_cast<uint32_t>(s);
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
        heap_[pos_of(index_[j])].slot = static_cast<uint32_t>(hole);
        hole = j;
      }
    }
    index_[hole] = 0;
  }

  // Removes the node at heap position pos (its index slot too). `moved_out`: the node was already moved from.
  void erase_at(size_t pos, Node* moved_out = nullptr) {
    erase_slot(moved_out != nullptr ? moved_out->slot : heap_[pos].slot);
    const size_t last = heap_.size() - 1;
    if (pos != last) {
      heap_[pos] = std::move(heap_[last]);
      set_pos(heap_[pos].slot, pos);
    }
    heap_.pop_back();
    if (pos < heap_.size()) {
      if (pos > 0 && less(heap_[pos], heap_[(pos - 1) / 2])) {
        sift_up(pos);
      } else {
        sift_down(pos);
      }
    }
  }

  void place(size_t pos, Node&& n) {
    heap_[pos] = std::move(n);
    set_pos(heap_[pos].slot, pos);
  }
  void set_pos(uint32_t slot, size_t pos) { index_[slot] = (index_[slot] & ~0xffffffffULL) | (pos + 1); }
  void sift_up(size_t pos) {
    if (pos == 0 || !less(heap_[pos], heap_[(pos - 1) / 2])) return;
    Node n = std::move(heap_[pos]);
    while (pos > 0) {
      const size_t parent = (pos - 1) / 2;
      if (!less(n, heap_[parent])) break;
      place(pos, std::move(heap_[parent]));
      pos = parent;
    }
    place(pos, std::move(n));
  }
  void sift_down(size_t pos) {
    const size_t size = heap_.size();
    Node n = std::move(heap_[pos]);
    for (;;) {
      size_t child = 2 * pos + 1;
      if (child >= size) break;
      if (child + 1 < size && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], n)) break;
      place(pos, std::move(heap_[child]));
      pos = child;
    }
    place(pos, std::move(n));
  }

  std::vector<Node> heap_;
  std::vector<uint64_t> index_;  // entry(): tag and heap position + 1; 0: empty. Size a power of two (or 0).
  int shift_ = 32;               // home(tag) = tag >> shift_: the top log2(index size) bits
};

}  // namespace sluice
