// KeyedStateSnapshot: an asynchronous snapshot of a keyed state backend (DESIGN.md section 3, "Snapshots";
// Flink's SnapshotStrategy split into a synchronous and an asynchronous part).
//
// Synchronous part: KeyedStateBackend::snapshot() on the task thread at the barrier. It only fixes a version
// (the heap backend: O(key groups x states), no entry is copied), so the task resumes processing at once.
// Asynchronous part: write_key_group on another thread, concurrently with the task thread's mutations of the
// backend. It writes the canonical bytes of key_group_snapshot.h, equal to the state at the synchronous part.
// release() ends the snapshot; the backend then frees what it kept for it (the heap backend's copy-on-write
// originals), so memory returns to its level without the snapshot. Several snapshots may be live at once
// (max concurrent checkpoints), each equal to the state at its own synchronous part.
//
// Lifetime: a snapshot must be released (or destroyed) before its backend is destroyed; if the backend goes
// first (a cancelled task), write_key_group returns kCancelled and release() does nothing.
// Thread-safety: write_key_group from any one thread at a time; release() from any thread, also while
// write_key_group runs elsewhere (it waits for that call to end, and later calls fail).
#pragma once

#include <cstdint>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/status.h"
#include "sluice/state/key_group.h"

namespace sluice {

class KeyedStateSnapshot {
 public:
  // Derived classes release() in their destructor.
  virtual ~KeyedStateSnapshot();
  KeyedStateSnapshot(const KeyedStateSnapshot&) = delete;
  KeyedStateSnapshot& operator=(const KeyedStateSnapshot&) = delete;

  // The backend's key-group range.
  KeyGroupRange range() const { return range_; }

  // Appends the canonical snapshot of key group kg (key_group_snapshot.h) as of the synchronous part to *out;
  // appends nothing when the key group held no state then (KeyGroupsStateHandle: an empty key group has equal
  // offsets). kInvalidArgument if kg is outside range(); kFailedPrecondition after release(); kCancelled if
  // the backend was destroyed.
  virtual Status write_key_group(KeyGroup kg, std::vector<uint8_t>* out) = 0;

  // Ends the snapshot (idempotent). Any thread.
  virtual void release() = 0;

 protected:
  explicit KeyedStateSnapshot(KeyGroupRange range) : range_(range) {}

 private:
  KeyGroupRange range_;
};

// Appends the snapshots of every key group of s.range() in key-group order to *out and sets *offsets to
// num_key_groups() + 1 positions relative to out->size() at the call: offsets[i] is where key group
// range().start() + i begins, the last is the total length appended (KeyGroupsStateHandle's layout, with
// *out as the stream). The first error is returned; *out then holds a partial stream to discard.
Status write_all_key_groups(KeyedStateSnapshot& s, std::vector<uint8_t>* out, std::vector<uint64_t>* offsets);

}  // namespace sluice
