// StateBackend: which keyed-state backend a job uses (Flink's `state.backend.type`). The configuration
// object users pass to the environment; the runtime creates one KeyedStateBackend<K> per keyed operator
// subtask from it (keyed_state_backend.h: make_keyed_state_backend).
//
// Thread-safety: immutable values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice {

// The backend implementations.
enum class StateBackendKind : uint8_t {
  kHashMap = 1,  // HashMapStateBackend: typed objects in per-key-group hash tables on the heap
  kRocksDB = 2,  // EmbeddedRocksDBStateBackend: serialized bytes in an embedded RocksDB on local disk
};

// The `state.backend.type` value of a kind: "hashmap" or "rocksdb".
std::string_view state_backend_kind_name(StateBackendKind kind);

// Parses a `state.backend.type` value into the backend it selects (case-insensitive): "hashmap" (Flink's
// value; "heap" is accepted too), "rocksdb", and the seed's legacy names: "jobmanager" / "MemoryStateBackend"
// and "filesystem" / "FsStateBackend" select hashmap, "RocksDBStateBackend" selects rocksdb. (The legacy names
// also select a checkpoint storage; that part is the configuration's: derived_options.h.)
// kInvalidArgument naming the value and the accepted ones otherwise.
Result<StateBackendKind> parse_state_backend_type(std::string_view text);

// Job-wide settings of the RocksDB backend (`state.backend.rocksdb.*`), handed from the configuration to every
// keyed operator subtask. Ignored by the heap backend.
struct RocksDBStateBackendOptions {
  // state.backend.rocksdb.localdir: the directory under which each subtask's RocksDB instance gets its own
  // working directory (deleted when the subtask's backend is destroyed). Empty: the system temp directory
  // (std::filesystem::temp_directory_path(), i.e. $TMPDIR or /tmp).
  std::string local_dir;
  // Part of the working directory's name, so one can tell whose it is: the runtime sets
  // "job_<job id>_op_<operator>_<subtask>". A random suffix keeps names unique across attempts and processes.
  std::string instance_name;
  // state.backend.rocksdb.cache.enabled / .max-size: a write-back cache of recently used keys per subtask in
  // front of RocksDB (rocksdb/rocksdb_store.h), at most this many bytes (keys + values + ~128 bytes per
  // entry). 0: off (the default, as Flink has no such cache).
  int64_t write_back_cache_max_size_bytes = 0;
};

class StateBackend {
 public:
  virtual ~StateBackend() = default;
  virtual StateBackendKind kind() const = 0;
  std::string_view name() const { return state_backend_kind_name(kind()); }
};

}  // namespace sluice
