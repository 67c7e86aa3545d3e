// RocksDBBackendCore: the non-template part of RocksDBKeyedStateBackend<K>: the store, the registered states
// (meta info, column family, codec), restored-but-unregistered states, snapshots and restore. Implementation
// header of EmbeddedRocksDBStateBackend; users do not include it.
//
// Snapshots (the canonical format of key_group_snapshot.h, the same bytes for the same state as the heap
// backend writes up to the order of entries):
// - snapshot_key_group: synchronous, reads the current state.
// - snapshot(): the synchronous part takes a RocksDB snapshot (GetSnapshot, O(1)) and copies the registered
//   states' meta info and the restored-but-unregistered states (shared immutable bytes). The asynchronous
//   write_key_group iterates each state's column family over [kg, kg+1) through that RocksDB snapshot on the
//   caller's thread while the task thread keeps writing. release() returns the RocksDB snapshot, so RocksDB can
//   drop the versions it kept for it (memtable entries, SST files) at its next flush/compaction.
// Restore: restore_key_group validates everything into one WriteBatch (nothing changes on error), deleting
// the key group's old contents in the same batch.
//
// Thread-safety: task thread, except the KeyedStateSnapshot objects it hands out (keyed_state_snapshot.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/state/heap/restored_state_store.h"
#include "sluice/state/key_group.h"
#include "sluice/state/key_group_snapshot.h"
#include "sluice/state/keyed_state_snapshot.h"
#include "sluice/state/rocksdb/rocksdb_state_codec.h"
#include "sluice/state/rocksdb/rocksdb_store.h"
#include "sluice/state/state_backend.h"

namespace sluice {

class RocksDBBackendCore {
 public:
  struct RegisteredState {
    StateMetaInfo meta;
    int32_t cf = -1;
    std::shared_ptr<const RocksDBStateCodec> codec;
  };

  // Opens the backend's store (RocksDBStore::open: kIOError naming the directory).
  static Result<std::unique_ptr<RocksDBBackendCore>> open(KeyGroupRange range, int32_t max_parallelism,
                                                          TypeSerializerSnapshot key_serializer,
                                                          const RocksDBStateBackendOptions& options);
  ~RocksDBBackendCore();
  RocksDBBackendCore(const RocksDBBackendCore&) = delete;
  RocksDBBackendCore& operator=(const RocksDBBackendCore&) = delete;

  RocksDBStore& store() { return *store_; }
  const RocksDBStore& store() const { return *store_; }

  // Registers a new state: creates its column family and moves its restored entries, if any, into it.
  // Returns the column family. Throws std::invalid_argument naming the state if the restored state's kind or
  // serializers differ from `meta` or its entries do not decode (the state is then not registered and its
  // restored entries stay); RocksDBError if RocksDB fails. `ttl` installs the State TTL compaction filter
  // on the column family.
  int32_t register_state(const StateMetaInfo& meta, std::shared_ptr<const RocksDBStateCodec> codec,
                         const TtlCompactionFilterConfig* ttl = nullptr);

  int64_t num_entries() const;
  int64_t state_size_bytes_estimate() const;

  Status snapshot_key_group(KeyGroup kg, std::vector<uint8_t>* out) const;
  std::unique_ptr<KeyedStateSnapshot> snapshot();
  Status restore_key_group(const uint8_t* data, size_t size);

 private:
  RocksDBBackendCore(KeyGroupRange range, int32_t max_parallelism, TypeSerializerSnapshot key_serializer,
                     std::unique_ptr<RocksDBStore> store);

  KeyGroupRange range_;
  int32_t max_parallelism_;
  TypeSerializerSnapshot key_serializer_;
  std::unique_ptr<RocksDBStore> store_;
  std::map<std::string, RegisteredState, std::less<>> states_;  // by name: snapshot order
  RestoredStateStore pending_;
  std::set<int32_t> published_;  // column families whose native metrics are published
};

}  // namespace sluice
