// EmbeddedRocksDBStateBackend: keyed state as serialized bytes in an embedded RocksDB instance per keyed
// operator subtask, on local disk (Flink's EmbeddedRocksDBStateBackend, `state.backend.type: rocksdb`).
// State is limited by disk rather than memory; every access serializes (slower than HashMapStateBackend).
// Snapshots are full (canonical key-group format, restorable into either backend) or, with
// execution.checkpointing.incremental, incremental (native RocksDB checkpoints; incremental_snapshot.h).
//
// Users select it with `state.backend.type: rocksdb` (or the legacy `RocksDBStateBackend`); the runtime creates a
// RocksDBKeyedStateBackend<K> per keyed operator subtask, with its working directory under
// `state.backend.rocksdb.localdir` (default: the system temp directory). Layout and snapshot mechanics:
// sluice/detail/state/rocksdb/rocksdb_key_layout.h and rocksdb_backend_core.h; docs/state-backends.md.
//
// Thread-safety: the configuration object is immutable; the keyed backends it creates belong to one task
// thread.
#pragma once

#include <memory>
#include <utility>

#include "sluice/state/key_group.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/state_backend.h"

namespace sluice {

class EmbeddedRocksDBStateBackend final : public StateBackend {
 public:
  explicit EmbeddedRocksDBStateBackend(RocksDBStateBackendOptions options = {}) : options_(std::move(options)) {}
  StateBackendKind kind() const override { return StateBackendKind::kRocksDB; }
  const RocksDBStateBackendOptions& options() const { return options_; }

  // The keyed backend of one subtask. kInvalidArgument / kIOError as make_keyed_state_backend.
  template <class K>
  Result<std::unique_ptr<KeyedStateBackend<K>>> create_keyed_state_backend(KeyGroupRange range,
                                                                           int32_t max_parallelism) const {
    return make_keyed_state_backend<K>(kind(), range, max_parallelism, options_);
  }

 private:
  RocksDBStateBackendOptions options_;
};

}  // namespace sluice
