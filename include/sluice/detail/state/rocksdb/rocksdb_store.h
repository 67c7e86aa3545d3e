// RocksDBStore: one embedded RocksDB instance in its own working directory, seen as column families of
// byte keys and byte values. The non-template layer under RocksDBKeyedStateBackend<K>: the typed states
// serialize keys, namespaces and values into byte buffers and call this. Implementation header of
// EmbeddedRocksDBStateBackend; users do not include it. RocksDB's own headers stay in rocksdb_store.cc (they
// are heavy to compile: deps-notes.md).
//
// The store owns its directory: open() creates <local_dir>/sluice-rocksdb-<instance>-<16 hex digits> and
// a new database there; the destructor closes the database and deletes the directory. Writes skip RocksDB's
// write-ahead log (recovery comes from checkpoints, as in Flink), so nothing written survives the process.
// Every column family concatenates merge operands (ListState appends: rocksdb_state_codec.h).
//
// Write-back cache (Options::write_back_cache, unless kOff; `state.backend.rocksdb.cache.*`): get, put,
// merge and remove of recently used keys are served by a bounded in-memory cache (src/state/rocksdb/
// write_back_cache.h); changed entries reach RocksDB when evicted and before anything reads RocksDB as a whole:
// snapshot(), new_iterator()/has_key_in() and write()/try_write() first write every cached change back. So
// snapshots, iterations and batches see exactly the state the per-key operations produced, as without the cache.
// RocksDB's estimates (estimate_num_keys, estimate_size_bytes) do not count changes still only in the cache.
//
// Errors: open() and the batch/restore paths return Status. The per-record operations (get, put, merge,
// remove, write) throw RocksDBError, a StatusError naming the operation, the column family and the
// directory: they run inside user functions, which report failures by exception (the task fails over). RocksDB's
// I/O errors - a full local disk (ENOSPC) among them - are kIOError naming the working directory, not a
// failure of the user function.
//
// Thread-safety: the store is used by its task thread. Snapshots (snapshot()) may be read on any other thread
// while the task thread writes; the store's destructor waits for a read in progress and makes later reads fail
// with kCancelled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/status.h"
#include "sluice/state/state_backend.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb
#include "sluice/state/incremental_snapshot.h"

namespace sluice {

class RocksDBError : public StatusError {
 public:
  // A failure of RocksDB itself, mapped by rocksdb_failure() (e.g. kIOError for a full disk), so the task keeps
  // its code through the operator and task boundaries (StatusError).
  explicit RocksDBError(Status status) : StatusError(std::move(status)) {}
  // A state-level failure (a value too large, bytes that do not decode): kUserFunction, as any failure inside a
  // user function.
  explicit RocksDBError(const std::string& message) : StatusError(Status::user_function(message)) {}
};

inline std::string_view as_bytes_view(const std::vector<uint8_t>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

// State TTL cleanup in RocksDB compaction (StateTtlConfig::RocksdbCompactFilterCleanup) for one column family:
// a compaction filter drops values whose 8-byte little-endian timestamp prefix (TtlValue) is expired, and
// expired elements of lists. Thread-safety: read by RocksDB's compaction threads; everything in it must be
// thread-safe (Clock is; list_element_size must be a pure function).
struct TtlCompactionFilterConfig {
  std::shared_ptr<const Clock> clock;  // never null
  int64_t ttl_ms = 0;
  // The clock is read again after this many values (Flink's queryTimeAfterNumEntries).
  int64_t query_time_after_num_entries = 1000;
  // ListState: the byte length of the serialized TtlValue element at the start of `bytes` (timestamp
  // included), or -1 if it does not parse (the value is then kept). Null for the other kinds, whose value is
  // one TtlValue.
  int64_t (*list_element_size)(std::string_view bytes) = nullptr;
};

class RocksDBStore {
 public:
  class Iterator;
  class WriteBatch;
  class Snapshot;
  struct Shared;  // the database and what snapshots share with the store (rocksdb_store.cc)

  // local_dir: parent of the working directory ("" = the system temp directory); instance_name: part of the
  // working directory's name (sanitized to [A-Za-z0-9._-]); the rest chooses the RocksDB options
  // (src/state/rocksdb/rocksdb_options.h), the shared memory (rocksdb_memory.h) and the native metrics.
  using Options = RocksDBStateBackendOptions;

  // Creates the working directory (and its parents) and opens a new database in it. kIOError naming the
  // directory if either fails; kInvalidArgument for bad memory settings or an options factory that breaks
  // managed memory (rocksdb_options_factory.h).
  static Result<std::unique_ptr<RocksDBStore>> open(const Options& options);
  // Releases live snapshots (their later reads fail with kCancelled), closes the database without flushing
  // and deletes the working directory.
  ~RocksDBStore();
  RocksDBStore(const RocksDBStore&) = delete;
  RocksDBStore& operator=(const RocksDBStore&) = delete;

  // The working directory.
  const std::string& path() const;

  // The column family called `name`, created on first use; returns its id (ids count from 0 in creation
  // order and never change). kIOError if RocksDB refuses. `ttl` (optional, used when the family is created)
  // installs the TTL compaction filter.
  Result<int32_t> column_family(const std::string& name, const TtlCompactionFilterConfig* ttl = nullptr);
  const std::string& column_family_name(int32_t cf) const;
  // Publishes the enabled native metrics of column family cf under `group` (the state's name) through
  // Options::native_metric_registrar; no-op when none is enabled or no registrar is set. Task thread.
  void publish_native_metrics(int32_t cf, const std::string& group);

  // Test-only: the database and a column family's handle, to read back the options RocksDB runs with
  // (GetDBOptions, GetOptions) and its properties. Callers include <rocksdb/db.h> themselves.
  rocksdb::DB* db_for_test() const;
  rocksdb::ColumnFamilyHandle* column_family_handle_for_test(int32_t cf) const;

  // Point operations on the current state. `*value` points into a buffer of the store, valid until the
  // next call on the store. Throw RocksDBError on failure (with the cache: also a failed write-back of an
  // evicted entry).
  bool get(int32_t cf, std::string_view key, std::string_view* value);
  void put(int32_t cf, std::string_view key, std::string_view value);
  void merge(int32_t cf, std::string_view key, std::string_view operand);
  void remove(int32_t cf, std::string_view key);
  void write(WriteBatch& batch);
  // write() returning the error instead of throwing (restore paths).
  Status try_write(WriteBatch& batch);

  // Iterates the current state of column family cf over keys in [lower, upper) in byte order, starting at
  // lower. An empty `upper` means no upper bound. With the cache, writes its changes back first (RocksDBError
  // if that fails).
  std::unique_ptr<Iterator> new_iterator(int32_t cf, std::string_view lower, std::string_view upper) const;
  // True when column family cf has a key in [lower, upper).
  bool has_key_in(int32_t cf, std::string_view lower, std::string_view upper) const;

  // A consistent view of the whole database as of now (RocksDB's GetSnapshot: O(1), copies nothing; RocksDB
  // keeps the versions it needs until release). Task thread.
  std::shared_ptr<Snapshot> snapshot();
  // Snapshots taken and not yet released.
  size_t live_snapshots() const;

  // Writes every change held only in the write-back cache to RocksDB (nothing without a cache). Throws
  // RocksDBError.
  void write_back();
  struct CacheStats {
    bool enabled = false;
    int64_t max_size_bytes = 0;
    int64_t size_bytes = 0;  // charged: keys + values + a fixed overhead per entry
    int64_t entries = 0;
    int64_t dirty_entries = 0;
    int64_t hits = 0, misses = 0, evictions = 0, dirty_evictions = 0;
  };
  CacheStats cache_stats() const;

  // RocksDB's estimates over all column families: "rocksdb.estimate-num-keys" (counts every put key once it
  // is flushed and compacted; overwrites and deletes still in memtables make it approximate), and
  // "rocksdb.total-sst-files-size" + "rocksdb.cur-size-all-mem-tables".
  int64_t estimate_num_keys() const;
  int64_t estimate_size_bytes() const;

  // Flushes column family cf and compacts all of it down to the last level (test and tool hook: makes the
  // TTL compaction filter see every value). kIOError if RocksDB fails.
  Status compact_all(int32_t cf);
  // ---- incremental checkpoints (incremental_snapshot.h) ----
  // Flushes every memtable and creates a native RocksDB checkpoint in `dir` (which must not exist; its parent
  // must): hard links of the SST files, copies of MANIFEST, CURRENT and OPTIONS. Returns the files in `dir`.
  // kIOError naming the directory. Task thread.
  Result<std::vector<LocalSnapshotFile>> create_native_checkpoint(const std::string& dir);
  // Like open(), but `populate` first puts the files of an existing database into the new working directory;
  // the database is then opened with every column family it has (ids in the database's order, "default"
  // excluded). Errors: populate's, or kIOError naming the directory.
  static Result<std::unique_ptr<RocksDBStore>> open_existing(const Options& options,
                                                             const std::function<Status(const std::string& dir)>& populate);
  // Names of the column families, by id.
  const std::vector<std::string>& column_family_names() const;
  // Gives a column family opened by open_existing the TTL compaction filter of its state (registered after the
  // restore); until then compactions keep every value. No effect on column families created by column_family().
  // Task thread.
  void configure_restored_ttl(int32_t cf, const TtlCompactionFilterConfig& ttl);

 private:
  struct Impl;
  explicit RocksDBStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A forward iterator over one column family within bounds; created positioned at the lower bound.
class RocksDBStore::Iterator {
 public:
  struct Impl;
  explicit Iterator(std::unique_ptr<Impl> impl);
  ~Iterator();
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;

  bool valid() const;
  // Valid until next() or the iterator's end.
  std::string_view key() const;
  std::string_view value() const;
  void next();
  // When !valid(): ok at the end of the range, else the error that stopped the iteration.
  Status status() const;

 private:
  std::unique_ptr<Impl> impl_;
};

// Writes applied atomically by RocksDBStore::write.
class RocksDBStore::WriteBatch {
 public:
  explicit WriteBatch(const RocksDBStore& store);
  ~WriteBatch();
  WriteBatch(const WriteBatch&) = delete;
  WriteBatch& operator=(const WriteBatch&) = delete;

  void put(int32_t cf, std::string_view key, std::string_view value);
  void merge(int32_t cf, std::string_view key, std::string_view operand);
  void remove(int32_t cf, std::string_view key);
  // Deletes every key in [begin, end).
  void delete_range(int32_t cf, std::string_view begin, std::string_view end);
  size_t count() const;
  void clear();

 private:
  friend class RocksDBStore;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A point-in-time view of the store, readable from any thread while the task thread keeps writing.
// Reads go through a read lease: acquire_reader() (false once the store is closed or the snapshot released),
// then new_iterator() as often as needed, then release_reader() after every iterator is destroyed.
// release() (idempotent, any thread) returns the view to RocksDB; the destructor releases.
class RocksDBStore::Snapshot {
 public:
  struct Impl;
  explicit Snapshot(std::unique_ptr<Impl> impl);
  ~Snapshot();
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  bool acquire_reader();
  void release_reader();
  // Requires a held lease; iterate as of the snapshot, as RocksDBStore::new_iterator.
  std::unique_ptr<Iterator> new_iterator(int32_t cf, std::string_view lower, std::string_view upper) const;
  void release();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
