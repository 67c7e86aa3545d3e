// Key groups: the unit in which keyed state is partitioned and redistributed on rescaling.
//
// A key maps to a key group in [0, max_parallelism): the key is serialized with TypeSerializer<K>, the
// bytes are hashed with XXH3-64, the hash is folded to 32 bits, mixed with murmur_hash (Flink's
// MathUtils.murmurHash) and reduced modulo max_parallelism. Hashing the serialized bytes (not an in-memory
// hash) keeps the mapping stable across processes, machines and versions, which checkpoints rely on.
// Subtask i of p owns the contiguous range [ceil(i*m/p), ceil((i+1)*m/p) - 1] (Flink's
// KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex; DESIGN.md section 3), so every key group has
// exactly one owner at any parallelism p <= m.
//
// Thread-safety: values and pure functions; key_group_for_key uses a thread_local scratch buffer.
#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "sluice/core/data_view.h"
#include "sluice/core/ids.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"

namespace sluice {

// Bounds of max parallelism (= number of key groups), as Flink's KeyGroupRangeAssignment:
// default lower bound 2^7, upper bound Short.MAX_VALUE + 1.
inline constexpr int32_t kDefaultLowerBoundMaxParallelism = 128;
inline constexpr int32_t kUpperBoundMaxParallelism = 32768;

// A closed range [start, end_inclusive] of key groups. The empty range is canonical: start 0, end -1, so all empty
// ranges compare equal. Iterating yields KeyGroup values in increasing order.
class KeyGroupRange {
 public:
  // The empty range.
  constexpr KeyGroupRange() = default;
  // [start, end_inclusive]; any end_inclusive < start gives the empty range. Requires start >= 0.
  constexpr KeyGroupRange(int32_t start, int32_t end_inclusive)
      : start_(end_inclusive < start ? 0 : start), end_(end_inclusive < start ? -1 : end_inclusive) {
    assert(start >= 0 && "KeyGroupRange: start must be non-negative");
  }
  static constexpr KeyGroupRange empty() { return {}; }

  constexpr int32_t start() const { return start_; }
  constexpr int32_t end_inclusive() const { return end_; }  // -1 when empty
  constexpr bool is_empty() const { return end_ < start_; }
  constexpr int32_t num_key_groups() const { return end_ - start_ + 1; }
  constexpr bool contains(KeyGroup kg) const { return kg.value() >= start_ && kg.value() <= end_; }
  // Position of kg inside the range (kg - start); only meaningful when contains(kg).
  constexpr int32_t index_of(KeyGroup kg) const { return kg.value() - start_; }
  constexpr KeyGroupRange intersection(const KeyGroupRange& o) const {
    int32_t s = start_ > o.start_ ? start_ : o.start_;
    int32_t e = end_ < o.end_ ? end_ : o.end_;
    return e < s ? KeyGroupRange() : KeyGroupRange(s, e);
  }
  constexpr bool operator==(const KeyGroupRange&) const = default;
  std::string to_string() const;  // "[0, 42]" or "[]"

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = KeyGroup;
    using difference_type = std::ptrdiff_t;
    using pointer = const KeyGroup*;
    using reference = KeyGroup;
    constexpr iterator() = default;
    constexpr explicit iterator(int32_t v) : v_(v) {}
    constexpr KeyGroup operator*() const { return KeyGroup(v_); }
    constexpr iterator& operator++() {
      ++v_;
      return *this;
    }
    constexpr iterator operator++(int) {
      iterator t = *this;
      ++v_;
      return t;
    }
    constexpr bool operator==(const iterator&) const = default;

   private:
    int32_t v_ = 0;
  };
  // for (KeyGroup kg : range) visits start .. end_inclusive.
  constexpr iterator begin() const { return iterator(start_); }
  constexpr iterator end() const { return iterator(end_ + 1); }

 private:
  int32_t start_ = 0;
  int32_t end_ = -1;
};

// Flink's MathUtils.murmurHash: one murmur3 32-bit mixing round of `code` followed by the fmix finalizer
// (length 4), made non-negative (negative -> negated; INT32_MIN -> 0).
constexpr int32_t murmur_hash(int32_t code) {
  uint32_t c = static_cast<uint32_t>(code);
  c *= 0xcc9e2d51u;
  c = std::rotl(c, 15);
  c *= 0x1b873593u;
  c = std::rotl(c, 13);
  c = c * 5 + 0xe6546b64u;
  c ^= 4u;
  c ^= c >> 16;
  c *= 0x85ebca6bu;
  c ^= c >> 13;
  c *= 0xc2b2ae35u;
  c ^= c >> 16;
  // Branch-free |c| with INT32_MIN -> 0 (the sign is random, so a branch would mispredict half the time):
  // two's-complement negation when negative, then masking the sign bit turns 0x80000000 into 0.
  const uint32_t negative = 0u - (c >> 31);
  return static_cast<int32_t>(((c ^ negative) - negative) & 0x7fffffffu);
}

// XXH3-64 of bytes (libxxhash's XXH3_64bits, seed 0). The hash of a key's serialized bytes is both the key's
// key-group input and the heap backend's hash-table hash.
uint64_t hash_key_bytes(const void* data, size_t size);

// murmur_hash of the 64-bit key hash folded to 32 bits (high ^ low): non-negative; % max_parallelism gives
// the key group.
constexpr int32_t murmur_hash_of_key_hash(uint64_t key_hash) {
  return murmur_hash(static_cast<int32_t>(static_cast<uint32_t>(key_hash ^ (key_hash >> 32))));
}

// Key group of a key whose 64-bit hash is key_hash (from hash_key_bytes). Requires max_parallelism in
// [1, kUpperBoundMaxParallelism].
inline KeyGroup key_group_for_hash(uint64_t key_hash, int32_t max_parallelism) {
  assert(max_parallelism > 0);
  return KeyGroup(murmur_hash_of_key_hash(key_hash) % max_parallelism);
}

// Key group of a serialized key. Stable across processes. Requires max_parallelism in [1, 32768].
inline KeyGroup key_group_for_key_bytes(const uint8_t* data, size_t size, int32_t max_parallelism) {
  return key_group_for_hash(hash_key_bytes(data, size), max_parallelism);
}

namespace detail {
// Types whose TypeSerializer writes exactly their object bytes (little-endian fixed width), so the key can
// be hashed in place without serializing. bool is excluded (its serializer normalizes to 0/1).
template <class K>
inline constexpr bool kHashesInPlace =
    (std::is_arithmetic_v<K> && !std::is_same_v<K, bool>) || std::is_enum_v<K>;
}  // namespace detail

// XXH3-64 of the key's serialized bytes. Serializes into a thread_local scratch buffer (no allocation once
// the buffer has grown); fixed-width primitives are hashed in place.
template <class K>
uint64_t hash_key(const K& key) {
  if constexpr (detail::kHashesInPlace<K>) {
    return hash_key_bytes(&key, sizeof(K));
  } else {
    thread_local std::vector<uint8_t> scratch;
    scratch.clear();
    DataOutputView out(&scratch);
    TypeSerializer<K>::serialize(key, out);
    return hash_key_bytes(scratch.data(), scratch.size());
  }
}

// Key group of a key (DESIGN.md section 3). Requires max_parallelism in [1, 32768].
template <class K>
KeyGroup key_group_for_key(const K& key, int32_t max_parallelism) {
  return key_group_for_hash(hash_key(key), max_parallelism);
}

// The key groups owned by subtask `index` of `parallelism`: [ceil(i*m/p), ceil((i+1)*m/p) - 1] (Flink's
// computeKeyGroupRangeForOperatorIndex). Requires 1 <= parallelism <= max_parallelism <= 32768 and
// 0 <= index < parallelism (see check_max_parallelism).
KeyGroupRange key_group_range_for_subtask(int32_t max_parallelism, int32_t parallelism, SubtaskIndex index);

// The subtask that owns key group kg: kg * p / m (Flink's computeOperatorIndexForKeyGroup); consistent with
// key_group_range_for_subtask. Same requirements, plus 0 <= kg < max_parallelism.
inline SubtaskIndex subtask_for_key_group(int32_t max_parallelism, int32_t parallelism, KeyGroup kg) {
  assert(max_parallelism > 0 && kg.value() >= 0 && kg.value() < max_parallelism);
  return SubtaskIndex(static_cast<int32_t>(int64_t{kg.value()} * parallelism / max_parallelism));
}

// Max parallelism when the user sets none: round_up_pow2(p + p/2) clamped to [128, 32768] (Flink's
// computeDefaultMaxParallelism). p = 1 -> 128, p = 100 -> 256, p >= 21846 -> 32768.
int32_t default_max_parallelism(int32_t parallelism);

// OK when 1 <= parallelism <= max_parallelism <= 32768; else kInvalidArgument naming both values.
Status check_max_parallelism(int32_t max_parallelism, int32_t parallelism);

}  // namespace sluice
