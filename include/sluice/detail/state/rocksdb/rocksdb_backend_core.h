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
// Incremental snapshots and their restore (incremental_snapshot.h; src/state/rocksdb/rocksdb_incremental.cc):
// snapshot_incremental takes a native RocksDB checkpoint; the shared files a completed checkpoint uploaded
// (reported through IncrementalKeyedSnapshot::set_uploaded, confirmed by notify_checkpoint_complete) are reused
// by the next snapshots. restore_incremental replaces the (empty) database by the restored one; its states stay
// "restored, not registered" (their meta info is checked at registration) until the program registers them.
//
// Thread-safety: task thread, except the snapshot objects it hands out (keyed_state_snapshot.h,
// incremental_snapshot.h).
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
#include "sluice/detail/state/heap/restored_state_store.h"
#include "sluice/detail/state/heap/state_table.h"
#include "sluice/detail/state/rocksdb/rocksdb_state_codec.h"
#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "sluice/state/incremental_snapshot.h"
#include "sluice/state/key_group.h"
#include "sluice/state/key_group_snapshot.h"
#include "sluice/state/keyed_state_snapshot.h"
#include "sluice/state/state_backend.h"
#include "sluice/state/state_schema.h"

namespace sluice {

struct RocksDBUploadTracker;  // rocksdb_incremental.cc
std::shared_ptr<RocksDBUploadTracker> new_upload_tracker();
std::string new_backend_id(const RocksDBStateBackendOptions& options);  // 32 hex digits from options.names
std::string column_family_of(const std::string& state_name);  // "state:<name>"

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
  RocksDBTimerServiceFactory timer_service_factory() const { return options_.timer_service_factory; }
  const RocksDBStore& store() const { return *store_; }

  // Registers a new state: creates its column family and moves its restored entries, if any, into it.
  // Returns the column family. Throws std::invalid_argument naming the state if the restored state's schema is
  // incompatible with `meta` (state_schema.h; compatible ones migrate) or its entries do not decode (the state
  // is then not registered, its entries stay); RocksDBError if RocksDB fails. `ttl` installs the State TTL
  // compaction filter on the column family.
  int32_t register_state(const StateMetaInfo& meta, std::shared_ptr<const RocksDBStateCodec> codec,
                         const TtlCompactionFilterConfig* ttl = nullptr);

  // Registers a state the RocksDB backend keeps on the heap: the timers with
  // `state.backend.rocksdb.timer-service.factory: HEAP`. `table` is owned by the caller and must outlive the
  // core; `codec` converts its entries to and from the RocksDB layout. The table is filled from restored entries
  // (a full snapshot's, or an incrementally restored column family's, which is then emptied). Full snapshots
  // write the table's entries with the RocksDB states (copied at the synchronous part); incremental snapshots
  // first write them into the table's column family "state:<name>" in the synchronous part, so the native
  // checkpoint carries them (the timers' snapshot is synchronous, as in Flink). Throws
  // std::invalid_argument naming the state if restored entries do not fit; RocksDBError if RocksDB fails.
  void register_heap_state(StateTableBase* table, std::shared_ptr<const RocksDBStateCodec> codec);

  int64_t num_entries() const;
  int64_t state_size_bytes_estimate() const;

  // The schema resolutions (state_schema.h) of the restored entries added since the last call, one per state
  // and key group; the typed backend merges them into KeyedStateBackend::schema_reports.
  std::vector<StateSchemaReport> take_schema_reports();

  Status snapshot_key_group(KeyGroup kg, std::vector<uint8_t>* out) const;
  std::unique_ptr<KeyedStateSnapshot> snapshot();
  Status restore_key_group(const uint8_t* data, size_t size);

  // ---- incremental snapshots ----
  // The synchronous part: flush + native checkpoint into <working dir>-chk-<id>. kFailedPrecondition naming
  // the state if a state restored from a full snapshot is not registered (its entries are not in RocksDB yet);
  // kIOError if RocksDB fails. kUploadEverything (native savepoints): every SST is listed to upload, and the
  // snapshot's uploads are never offered for reuse.
  Result<std::unique_ptr<IncrementalKeyedSnapshot>> snapshot_incremental(CheckpointId id,
      SnapshotFileReuse reuse = SnapshotFileReuse::kReuseCompletedUploads);
  // Restores incremental handles (any number, of any key-group ranges: rescaling) into this backend, which
  // must be fresh (nothing registered or restored). Errors name the handle and file: kNotFound (missing file),
  // kCorruption (size or checksum differ, or the database does not open), kInvalidArgument (another max
  // parallelism or key serializer, or one state name with different meta info in two handles).
  Status restore_incremental(const std::vector<IncrementalRestoreHandle>& handles);
  void notify_checkpoint_complete(CheckpointId id);
  void notify_checkpoint_aborted(CheckpointId id);
  // 32 hex digits, random per backend instance.
  const std::string& backend_id() const { return backend_id_; }
  // The shared files the next incremental snapshot would reuse (SST local name -> upload), for tests.
  std::map<std::string, SharedFileRef> reusable_shared_files() const;

 private:
  RocksDBBackendCore(KeyGroupRange range, int32_t max_parallelism, TypeSerializerSnapshot key_serializer,
                     std::unique_ptr<RocksDBStore> store, RocksDBStateBackendOptions options);
  // Adds restored entries of a registered state to `batch`: resolved against `registered` (state_schema.h) and
  // migrated when that is needed. Errors: the resolution's, or the codec's.
  Status add_restored(const RocksDBStateCodec& codec, const StateMetaInfo& registered, const StateSnapshotView& view,
                      KeyGroup kg, int32_t cf, RocksDBStore::WriteBatch& batch, RocksDBCodecScratch& scratch,
                      std::vector<StateSchemaReport>& reports) const;
  // Non-ok when some state cannot be written in the canonical format (restored incrementally, not registered).
  Status full_snapshot_precondition() const;
  // pending_ plus the entries of the heap-held states (of key group `only`, or of all key groups).
  RestoredStateStore pending_with_heap_states(const KeyGroup* only) const;
  // Writes every heap-held state into its column family (incremental snapshots). kIOError if RocksDB fails.
  Status write_heap_states_to_column_families();

  KeyGroupRange range_;
  int32_t max_parallelism_;
  TypeSerializerSnapshot key_serializer_;
  std::unique_ptr<RocksDBStore> store_;
  std::map<std::string, RegisteredState, std::less<>> states_;  // by name: snapshot order
  RestoredStateStore pending_;
  struct HeapState {
    StateTableBase* table = nullptr;
    std::shared_ptr<const RocksDBStateCodec> codec;
  };
  std::map<std::string, HeapState, std::less<>> heap_states_;  // by name
  std::set<int32_t> published_;  // column families whose native metrics are published
  RocksDBStateBackendOptions options_;
  std::string backend_id_;
  std::shared_ptr<RocksDBUploadTracker> tracker_;
  // States whose column family came with an incremental restore and that are not registered yet.
  std::map<std::string, StateMetaInfo, std::less<>> restored_cf_meta_;
  std::vector<StateSchemaReport> reports_;  // not yet taken by the typed backend
};

}  // namespace sluice
