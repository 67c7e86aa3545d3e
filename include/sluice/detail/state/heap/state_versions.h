// StateVersions: the copy-on-write bookkeeping of one heap keyed state backend, shared by all its StateMaps
// and by its live snapshots. Implementation header of HashMapStateBackend; users do not include it.
//
// Versions (the idea of Flink's CopyOnWriteStateMap, kept per backend instead of per map):
// - current(): the version every new entry and bucket array is stamped with. begin_snapshot() increments it
//   and returns the new value s; snapshot s sees exactly the objects stamped with a version < s that are live
//   in the maps at that moment. Objects created afterwards carry a version >= s and are invisible to it.
// - highest_required(): the highest live snapshot version (0 if none). An object stamped with a version below it
//   may be read by a live snapshot, so the task thread never writes it: it copies it first (copy-on-write) and
//   retires the original. Everything stamped at or above it belongs to the task thread alone.
// - retire(): an object that left the live maps stays allocated while a live snapshot s with
//   created < s <= (version at retirement) exists; release(s) frees what no live snapshot needs any more.
//
// Thread model: one task thread calls current(), begin_snapshot() and retire(); snapshots call release(),
// acquire_reader()/release_reader() from any thread. highest_required() only drops asynchronously (a release),
// so a stale read on the task thread is too high, which costs a needless copy, never a lost one; the acquire
// load orders a snapshot thread's reads before the task thread's in-place writes that follow a release.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace sluice {

class StateVersions {
 public:
  using Destroy = void (*)(void*);

  StateVersions() = default;
  ~StateVersions();
  StateVersions(const StateVersions&) = delete;
  StateVersions& operator=(const StateVersions&) = delete;

  // Versions of maps that never snapshot (staging maps, standalone tests): highest_required() is always 0.
  static StateVersions& unversioned();

  // Task thread.
  uint64_t current() const { return current_; }
  // Any thread.
  uint64_t highest_required() const { return highest_required_.load(std::memory_order_acquire); }

  // Task thread: registers a new live snapshot and returns its version s (= the new current()).
  uint64_t begin_snapshot();
  // Any thread, once per version from begin_snapshot: the snapshot ended; frees every retired object that no
  // remaining live snapshot can read. Unknown versions (e.g. after close()) are ignored.
  void release(uint64_t version);

  // Task thread: obj, stamped with created_version, is no longer reachable from the live maps. Kept until no
  // live snapshot can read it, destroyed now if none can. size_bytes is for accounting only.
  void retire(void* obj, Destroy destroy, uint64_t created_version, size_t size_bytes);

  // Snapshot readers bracket each read of the frozen maps: acquire_reader() returns false once the backend is
  // closed (then nothing may be read); release_reader() must follow every successful acquire_reader().
  bool acquire_reader();
  void release_reader();
  // The backend is being destroyed: waits for readers inside acquire/release_reader, frees all retired
  // objects, forgets the live snapshots (their later release() is a no-op) and drops highest_required() to 0.
  void close();

  // Accounting (any thread): objects and bytes kept for live snapshots, and how many snapshots are live.
  size_t retained_objects() const;
  size_t retained_bytes() const;
  size_t live_snapshots() const;

 private:
  struct Retired {
    void* obj;
    Destroy destroy;
    uint64_t created;     // version stamped on obj
    uint64_t retired_at;  // current() when it left the live maps
    size_t size_bytes;
  };
  // Whether a snapshot in live_ may read r. Caller holds mu_.
  bool needed(uint64_t created, uint64_t retired_at) const;
  void set_highest_required();  // from live_; caller holds mu_

  uint64_t current_ = 0;  // task thread only
  std::atomic<uint64_t> highest_required_{0};

  mutable std::mutex mu_;
  std::vector<uint64_t> live_;     // guarded by mu_; few entries (max concurrent checkpoints)
  std::vector<Retired> retired_;   // guarded by mu_
  size_t retained_bytes_ = 0;      // guarded by mu_

  std::shared_mutex readers_;  // readers shared, close() exclusive
  bool closed_ = false;        // guarded by readers_
};

}  // namespace sluice
