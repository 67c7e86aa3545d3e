// StateBackend: which keyed-state backend a job uses (Flink's `state.backend.type`). The configuration
// object users pass to the environment; the runtime creates one KeyedStateBackend<K> per keyed operator
// subtask from it (keyed_state_backend.h: make_keyed_state_backend).
//
// Thread-safety: immutable values.
#pragma once

#include <cstdint>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice {

// The backend implementations. RocksDB adds kRocksDB.
enum class StateBackendKind : uint8_t {
  kHashMap = 1,  // HashMapStateBackend: typed objects in per-key-group hash tables on the heap
};

// The `state.backend.type` value of a kind: "hashmap".
std::string_view state_backend_kind_name(StateBackendKind kind);

// Parses `state.backend.type`: "hashmap" (case-insensitive, Flink's value; "heap", Flink's legacy name, is
// accepted too). kInvalidArgument naming the value and the accepted ones otherwise (including "rocksdb"
// until that backend exists).
Result<StateBackendKind> parse_state_backend_type(std::string_view text);

class StateBackend {
 public:
  virtual ~StateBackend() = default;
  virtual StateBackendKind kind() const = 0;
  std::string_view name() const { return state_backend_kind_name(kind()); }
};

}  // namespace sluice
