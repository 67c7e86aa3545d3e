// HashMapStateBackend: keyed state as typed C++ objects in per-key-group hash tables on the heap (Flink's
// HashMapStateBackend, `state.backend.type: hashmap`, the default). Fast (no serialization on access), but
// state must fit in memory, and snapshots serialize it.
//
// Users pass it to the environment; the runtime creates a HeapKeyedStateBackend<K> per keyed operator subtask
// (create_keyed_state_backend below, or make_keyed_state_backend in keyed_state_backend.h).
//
// Key requirements (keyed_state_backend.h): TypeSerializer<K>, default-constructible, copy-assignable.
// For a user struct key, SLUICE_FIELDS is enough; add `bool operator==(const Key&) const = default;` for
// faster lookups (without it, equality compares serialized bytes). MapState user keys use std::hash<UK> when
// it exists, else the XXH3 hash of their serialized bytes.
//
// Thread-safety: the configuration object is immutable; the keyed backends it creates belong to one task
// thread.
#pragma once

#include <memory>

#include "sluice/detail/state/heap/heap_keyed_state_backend.h"
#include "sluice/state/key_group.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/state_backend.h"

namespace sluice {

class HashMapStateBackend final : public StateBackend {
 public:
  StateBackendKind kind() const override { return StateBackendKind::kHashMap; }

  // The keyed backend of one subtask. kInvalidArgument as make_keyed_state_backend.
  template <class K>
  Result<std::unique_ptr<KeyedStateBackend<K>>> create_keyed_state_backend(KeyGroupRange range,
                                                                           int32_t max_parallelism) const {
    return make_keyed_state_backend<K>(kind(), range, max_parallelism);
  }
};

}  // namespace sluice
