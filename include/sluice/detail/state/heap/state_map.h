// StateMap<K, N, V>: the hash map of one state in one key group of the heap backend: (key, namespace) ->
// typed value, with copy-on-write versions for asynchronous snapshots. Implementation header of
// HashMapStateBackend; users do not include it.
//
// A chained hash table whose entries are heap nodes. Callers pass the entry's 64-bit hash, computed once per
// record (the key's XXH3 hash, combined with the namespace's), so a lookup costs one bucket load plus the chain
// walk. Buckets are allocated on the first insert: empty key groups cost about 64 bytes.
//
// Copy-on-write (the idea of Flink's CopyOnWriteStateMap; versions in state_versions.h): every entry and the
// bucket array carry the version they were created in. view() hands a snapshot the current bucket array;
// everything reachable from it is stamped below the snapshot's version and is never written while the
// snapshot lives. Writing such an object (an entry's value or `next`, a bucket slot) first copies it: the
// bucket array once per snapshot, an entry together with the shared entries before it in its chain (their
// `next` must change). Rehashing while a snapshot lives copies the shared entries instead of relinking them,
// and waits until the load factor reaches kMaxSharedLoad (2) so a snapshot that ends soon costs nothing.
// Replaced originals go to StateVersions::retire, which frees them when no snapshot needs them.
// With no live snapshot, the only extra work on a write is one compare of the entry's version with
// highest_required().
//
// All mutation goes through put / find_or_insert / find_for_update / remove / take / clear; reads never hand
// out references that outlive the call (ValueState::value() copies).
// Thread-safety: the task thread mutates; snapshot threads only read through View objects taken by
// view() (see StateVersions for the rules that make that race-free).
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/core/data_view.h"
#include "sluice/core/serializer.h"
#include "sluice/detail/state/heap/state_versions.h"
#include "sluice/state/key_group.h"

namespace sluice {
namespace detail {

// Key and namespace equality, consistent with identity by serialized bytes (keyed_state_backend.h).
template <class T>
bool state_key_equal(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, VoidNamespace>) {
    return true;
  } else if constexpr (kHashesInPlace<T>) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;  // bitwise: NaN keys find themselves, -0.0 != 0.0
  } else if constexpr (std::equality_comparable<T>) {
    return a == b;
  } else {
    thread_local std::vector<uint8_t> sa, sb;
    sa.clear();
    sb.clear();
    serialize_append(a, sa);
    serialize_append(b, sb);
    return sa == sb;
  }
}

// Hash of a namespace; VoidNamespace hashes to 0 so that user state uses the key hash unchanged.
template <class N>
uint64_t namespace_hash(const N& ns) {
  if constexpr (std::is_same_v<N, VoidNamespace>) {
    return 0;
  } else {
    return hash_key(ns);
  }
}

inline uint64_t combine_key_namespace_hash(uint64_t key_hash, uint64_t ns_hash) {
  return key_hash ^ (ns_hash * 0x9E3779B97F4A7C15ull);
}

}  // namespace detail

template <class K, class N, class V>
class StateMap {
 public:
  struct Entry {
    K key;
    [[no_unique_address]] N ns;
    V value;
    uint64_t hash;
    Entry* next;
    uint64_t version;  // StateVersions::current() when this object was created
  };

  // A snapshot's frozen view of the map: the bucket array and chains as they were at view(). Readable from
  // another thread while the snapshot's version is live (StateVersions), whatever the task thread does.
  struct View {
    Entry* const* buckets = nullptr;
    size_t bucket_count = 0;
    size_t size = 0;

    // fn(const K&, const N&, const V&) for every entry of the view, in unspecified order.
    template <class F>
    void for_each(F&& fn) const {
      // Entries are scattered heap nodes: fetch the ones a few buckets ahead while visiting these
      // (prefetching a null bucket is harmless).
      constexpr size_t kAhead = 8;
      for (size_t i = 0; i < bucket_count; ++i) {
        if (i + kAhead < bucket_count) __builtin_prefetch(buckets[i + kAhead]);
        for (const Entry* e = buckets[i]; e != nullptr; e = e->next) fn(e->key, e->ns, e->value);
      }
    }
  };

  explicit StateMap(StateVersions& versions = StateVersions::unversioned())
      : versions_(&versions), buckets_version_(versions.current()), min_entry_version_(versions.current()) {}
  StateMap(const StateMap&) = delete;
  StateMap& operator=(const StateMap&) = delete;
  StateMap(StateMap&& o) noexcept : versions_(o.versions_) { steal(o); }
  // Both maps must share one StateVersions.
  StateMap& operator=(StateMap&& o) noexcept {
    if (this != &o) {
      clear();
      steal(o);
    }
    return *this;
  }
  ~StateMap() { clear(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t bucket_count() const { return bucket_count_; }

  // Task thread. The returned view stays valid while a snapshot version above the current one is live.
  View view() const { return View{buckets_, bucket_count_, size_}; }

  const V* find(const K& key, const N& ns, uint64_t hash) const {
    Entry* e = find_entry(key, ns, hash);
    return e ? &e->value : nullptr;
  }
  // The value to modify in place (copied first if a snapshot may read it); valid until the next mutation.
  V* find_for_update(const K& key, const N& ns, uint64_t hash) {
    Entry* e = find_entry(key, ns, hash);
    if (e == nullptr) return nullptr;
    const uint64_t required = versions_->highest_required();
    if (e->version < required) [[unlikely]] e = copy_on_write(e, required);
    return &e->value;
  }

  // The value of (key, ns), inserting make_value() first if absent. Returns the value and whether it was
  // inserted.
  template <class Make>
  std::pair<V*, bool> find_or_insert(const K& key, const N& ns, uint64_t hash, Make&& make_value) {
    if (Entry* e = find_entry(key, ns, hash)) {
      const uint64_t required = versions_->highest_required();
      if (e->version < required) [[unlikely]] e = copy_on_write(e, required);
      return {&e->value, false};
    }
    Entry* e = insert_new(key, ns, hash, std::forward<Make>(make_value)());
    return {&e->value, true};
  }

  template <class U>
  void put(const K& key, const N& ns, uint64_t hash, U&& value) {
    if (Entry* e = find_entry(key, ns, hash)) {
      const uint64_t required = versions_->highest_required();
      if (e->version < required) [[unlikely]] {
        replace(e, required, V(std::forward<U>(value)));  // no copy of the old value
      } else {
        e->value = std::forward<U>(value);
      }
    } else {
      insert_new(key, ns, hash, V(std::forward<U>(value)));
    }
  }

  bool remove(const K& key, const N& ns, uint64_t hash) {
    const uint64_t required = versions_->highest_required();
    Entry* e = unlink(key, ns, hash, required);
    if (e == nullptr) return false;
    dispose(e, required);
    return true;
  }

  // Removes (key, ns) and returns its value.
  std::optional<V> take(const K& key, const N& ns, uint64_t hash) {
    const uint64_t required = versions_->highest_required();
    Entry* e = unlink(key, ns, hash, required);
    if (e == nullptr) return std::nullopt;
    if (e->version < required) {  // a snapshot still reads it: hand out a copy
      std::optional<V> v(e->value);
      retire(e);
      return v;
    }
    std::optional<V> v(std::move(e->value));
    delete e;
    return v;
  }

  void clear() {
    const uint64_t required = versions_->highest_required();
    for (size_t i = 0; i < bucket_count_; ++i) {
      for (Entry* e = buckets_[i]; e != nullptr;) {
        Entry* next = e->next;
        dispose(e, required);
        e = next;
      }
    }
    dispose_buckets(required);
    buckets_ = nullptr;
    bucket_count_ = 0;
    shift_ = 64;
    size_ = 0;
    buckets_version_ = versions_->current();
    min_entry_version_ = versions_->current();
  }

  // fn(const K&, const N&, const V&) for every entry, in unspecified order. fn must not modify the map.
  template <class F>
  void for_each(F&& fn) const {
    view().for_each(std::forward<F>(fn));
  }

  // One step of a resumable sweep (TTL incremental cleanup): visits whole buckets from *bucket on until at
  // least max_entries entries were visited or the buckets end, advancing *bucket; returns the entries visited.
  // For each entry with needs_cleanup(const V&), clean(V&) runs on a private copy of the value (copy-on-write
  // as any write) and may drop parts of it; it returns false to remove the entry. A rehash between steps may
  // make a sweep skip or revisit entries (best effort, as Flink's). *bucket >= bucket_count() when done.
  template <class NeedsCleanup, class Clean>
  size_t cleanup_step(size_t* bucket, size_t max_entries, NeedsCleanup&& needs_cleanup, Clean&& clean) {
    size_t visited = 0;
    for (; *bucket < bucket_count_ && visited < max_entries; ++*bucket) {
      for (Entry* e = buckets_[*bucket]; e != nullptr;) {
        Entry* const next = e->next;  // stays in the chain: only e and its predecessors are copied or unlinked
        ++visited;
        if (needs_cleanup(static_cast<const V&>(e->value))) {
          const uint64_t required = versions_->highest_required();
          if (e->version < required) [[unlikely]] e = copy_on_write(e, required);
          if (!clean(e->value)) remove(e->key, e->ns, e->hash);
        }
        e = next;
      }
    }
    // The next step starts here, an access or a record later: fetch its chain heads now (scattered heap
    // nodes; prefetching a null bucket is harmless), so it does not stall on them.
    const size_t ahead = std::min(bucket_count_, *bucket + max_entries);
    for (size_t i = *bucket; i < ahead; ++i) __builtin_prefetch(buckets_[i]);
    return visited;
  }

  // Makes room for `n` entries without rehashing (a restore knows its entry count). Only grows; a map with a
  // live snapshot grows as usual.
  void reserve(size_t n) {
    const uint64_t required = versions_->highest_required();
    while (n > bucket_count_ - bucket_count_ / 4) grow(required);
  }

  // Memory of the table and its entries, without what values own on the heap (and without objects kept for
  // snapshots: StateVersions::retained_bytes).
  size_t fixed_size_bytes() const { return bucket_count_ * sizeof(Entry*) + size_ * sizeof(Entry); }

 private:
  static constexpr size_t kInitialBuckets = 16;
  // While entries may be shared with a snapshot, growing copies them; defer it up to this load factor.
  static constexpr size_t kMaxSharedLoad = 2;

  static void destroy_entry(void* p) { delete static_cast<Entry*>(p); }
  static void destroy_buckets(void* p) { delete[] static_cast<Entry**>(p); }

  // Fibonacci hashing: the top bits of hash * 2^64/phi, so the bucket uses all bits of the hash.
  static size_t bucket_of(uint64_t hash, int shift) {
    return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ull) >> shift);
  }
  size_t bucket_of(uint64_t hash) const { return bucket_of(hash, shift_); }

  Entry* find_entry(const K& key, const N& ns, uint64_t hash) const {
    if (size_ == 0) return nullptr;
    for (Entry* e = buckets_[bucket_of(hash)]; e != nullptr; e = e->next) {
      if (e->hash == hash && detail::state_key_equal(e->key, key) && detail::state_key_equal(e->ns, ns)) return e;
    }
    return nullptr;
  }

  Entry* insert_new(const K& key, const N& ns, uint64_t hash, V&& value) {
    const uint64_t required = versions_->highest_required();
    if (size_ + 1 > bucket_count_ - bucket_count_ / 4) [[unlikely]] {  // load factor <= 0.75
      if (!entries_may_be_shared(required) || size_ + 1 > kMaxSharedLoad * bucket_count_) grow(required);
    }
    if (buckets_version_ < required) [[unlikely]] own_buckets();
    size_t b = bucket_of(hash);
    Entry* e = new Entry{key, ns, std::move(value), hash, buckets_[b], versions_->current()};
    buckets_[b] = e;
    ++size_;
    return e;
  }

  // Unlinks (key, ns) from its chain, copying shared predecessors whose `next` changes. Null if absent.
  Entry* unlink(const K& key, const N& ns, uint64_t hash, uint64_t required) {
    if (size_ == 0) return nullptr;
    const size_t b = bucket_of(hash);
    Entry** link = &buckets_[b];
    Entry* e = *link;
    for (; e != nullptr; link = &e->next, e = e->next) {
      if (e->hash == hash && detail::state_key_equal(e->key, key) && detail::state_key_equal(e->ns, ns)) break;
    }
    if (e == nullptr) return nullptr;
    if (required > 0) [[unlikely]] link = writable_link(b, e, required);
    *link = e->next;
    --size_;
    return e;
  }

  // Copy-on-write of a shared entry: a private copy takes its place in the chain; returns the copy.
  Entry* copy_on_write(Entry* e, uint64_t required) {
    Entry** link = writable_link(bucket_of(e->hash), e, required);
    Entry* c = new Entry{e->key, e->ns, e->value, e->hash, e->next, versions_->current()};
    *link = c;
    retire(e);
    return c;
  }

  // Replaces a shared entry by one holding `value`.
  void replace(Entry* e, uint64_t required, V&& value) {
    Entry** link = writable_link(bucket_of(e->hash), e, required);
    Entry* c = new Entry{e->key, e->ns, std::move(value), e->hash, e->next, versions_->current()};
    *link = c;
    retire(e);
  }

  // The link (bucket slot or predecessor's `next`) that points at `target` in chain b, made writable: the
  // bucket array is owned and every shared predecessor is replaced by a private copy. Chains end in shared
  // entries (a shared entry only points to shared ones), so the copied run is the one just before target.
  Entry** writable_link(size_t b, Entry* target, uint64_t required) {
    if (buckets_version_ < required) own_buckets();
    Entry** link = &buckets_[b];
    for (Entry* e = *link; e != target; e = *link) {
      if (e->version < required) {
        Entry* c = new Entry{e->key, e->ns, e->value, e->hash, e->next, versions_->current()};
        *link = c;
        retire(e);
        e = c;
      }
      link = &e->next;
    }
    return link;
  }

  // A private copy of the bucket array (a snapshot reads the current one).
  void own_buckets() {
    if (bucket_count_ == 0) {
      buckets_version_ = versions_->current();
      return;
    }
    Entry** fresh = new Entry*[bucket_count_];
    std::memcpy(fresh, buckets_, bucket_count_ * sizeof(Entry*));
    versions_->retire(buckets_, &destroy_buckets, buckets_version_, bucket_count_ * sizeof(Entry*));
    buckets_ = fresh;
    buckets_version_ = versions_->current();
  }

  // Every live entry is stamped >= min_entry_version_, so below `required` some may be shared.
  bool entries_may_be_shared(uint64_t required) const { return min_entry_version_ < required; }

  void grow(uint64_t required) {
    const size_t n = bucket_count_ == 0 ? kInitialBuckets : bucket_count_ * 2;
    const int shift = 64 - std::countr_zero(n);
    const uint64_t now = versions_->current();
    Entry** fresh = new Entry*[n]();  // value-initialized: all null
    const bool copy = entries_may_be_shared(required);
    if (copy) {
      // Shared entries keep their `next` for the snapshot: link copies instead. Copy all first, so a throwing
      // copy leaves the map unchanged.
      std::vector<Entry*> copies;
      try {
        copies.reserve(size_);
        for (size_t i = 0; i < bucket_count_; ++i) {
          for (Entry* e = buckets_[i]; e != nullptr; e = e->next) {
            if (e->version < required) copies.push_back(new Entry{e->key, e->ns, e->value, e->hash, nullptr, now});
          }
        }
      } catch (...) {
        for (Entry* c : copies) delete c;
        delete[] fresh;
        throw;
      }
      size_t next_copy = 0;
      for (size_t i = 0; i < bucket_count_; ++i) {
        for (Entry* e = buckets_[i]; e != nullptr;) {
          Entry* next = e->next;
          Entry* moved = e;
          if (e->version < required) {
            moved = copies[next_copy++];
            retire(e);
          }
          const size_t b = bucket_of(moved->hash, shift);
          moved->next = fresh[b];
          fresh[b] = moved;
          e = next;
        }
      }
      min_entry_version_ = now;
    } else {
      for (size_t i = 0; i < bucket_count_; ++i) {
        for (Entry* e = buckets_[i]; e != nullptr;) {
          Entry* next = e->next;
          const size_t b = bucket_of(e->hash, shift);
          e->next = fresh[b];
          fresh[b] = e;
          e = next;
        }
      }
    }
    dispose_buckets(required);
    buckets_ = fresh;
    bucket_count_ = n;
    shift_ = shift;
    buckets_version_ = now;
  }

  void retire(Entry* e) { versions_->retire(e, &destroy_entry, e->version, sizeof(Entry)); }
  void dispose(Entry* e, uint64_t required) {
    if (e->version < required) {
      retire(e);
    } else {
      delete e;
    }
  }
  void dispose_buckets(uint64_t required) {
    if (buckets_ == nullptr) return;
    if (buckets_version_ < required) {
      versions_->retire(buckets_, &destroy_buckets, buckets_version_, bucket_count_ * sizeof(Entry*));
    } else {
      delete[] buckets_;
    }
  }

  void steal(StateMap& o) {
    buckets_ = std::exchange(o.buckets_, nullptr);
    bucket_count_ = std::exchange(o.bucket_count_, 0);
    shift_ = std::exchange(o.shift_, 64);
    size_ = std::exchange(o.size_, 0);
    buckets_version_ = std::exchange(o.buckets_version_, o.versions_->current());
    min_entry_version_ = std::exchange(o.min_entry_version_, o.versions_->current());
  }

  StateVersions* versions_;
  Entry** buckets_ = nullptr;  // owned, unless retired
  size_t bucket_count_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
  uint64_t buckets_version_;    // version of the bucket array
  uint64_t min_entry_version_;  // lower bound of every live entry's version
};

}  // namespace sluice
