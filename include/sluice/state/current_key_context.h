// CurrentKeyContext<K>: the current key of a keyed state backend with what set_current_key derived from it, so
// state objects and timer queues need not hash or route the key again. Thread-safety: the backend's task thread.
#pragma once

#include <cstdint>

namespace sluice {

// The current key as the backend caches it for state accesses.
template <class K>
struct CurrentKeyContext {
  K key{};
  uint64_t key_hash = 0;          // hash_key(key)
  int32_t key_group = -1;         // key_group_for_hash(key_hash, max_parallelism)
  int32_t key_group_index = -1;   // key_group - range.start(); -1 until the first set_current_key
};

}  // namespace sluice
