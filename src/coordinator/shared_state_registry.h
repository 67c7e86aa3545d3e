// SharedStateRegistry: reference counts of the shared files of incremental checkpoints (Flink's
// SharedStateRegistry; DESIGN.md section 3 "Incremental (RocksDB)"). A shared file (an SST in <job>/shared/)
// is referred to by every checkpoint whose handles list it - uploaded by it or reused from an earlier one. The
// registry says when a file may be deleted:
//
// - Pending checkpoints register the files of each acknowledgement; a completed checkpoint keeps its
//   registrations until it is released (subsumed, or deleted at job end); an aborted one releases them.
// - A file no registered checkpoint refers to any more is deleted - unless this job does not own it (the files
//   of a checkpoint restored in NO_CLAIM mode: never deleted), and not before every checkpoint that was pending
//   when it lost its last reference has ended: such a checkpoint may still acknowledge with a placeholder for it
//   (its backend reused the file of a checkpoint that completed before), and would then register it again.
//
// Files are named by their path relative to the job's checkpoint directory. The decisions are pure: every
// method returns the files to delete now; the caller deletes them (CheckpointStorage::discard_shared_files).
// Thread-safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/status.h"

namespace sluice::coordinator {

class SharedStateRegistry {
 public:
  // Ownership of the files a checkpoint registers.
  enum class Ownership : uint8_t { kOwned, kNotOwned };

  // Checkpoint `id` was triggered: files released from now on wait for it to end.
  void checkpoint_pending(CheckpointId id);
  // Checkpoint `id` refers to `files` (more calls add more). A file registered as kNotOwned once is never
  // deleted by this job.
  void register_files(CheckpointId id, const std::vector<std::string>& files, Ownership ownership = Ownership::kOwned);
  // A pending checkpoint ended: completed (it keeps its registrations) or aborted (they are released).
  std::vector<std::string> checkpoint_ended(CheckpointId id, bool completed);
  // A completed checkpoint no longer exists for this job (subsumed, or deleted at job end). Idempotent.
  std::vector<std::string> release(CheckpointId id);

  // For tests and inspection.
  size_t num_files() const;
  int32_t reference_count(const std::string& file) const;
  std::vector<std::string> files_of(CheckpointId id) const;
  size_t num_deferred() const;

 private:
  struct Entry {
    std::set<int64_t> referrers;
    bool owned = true;
  };
  std::vector<std::string> release_locked(int64_t id);
  std::vector<std::string> collect_deferred_locked();

  mutable std::mutex mu_;
  std::map<std::string, Entry> files_;
  std::map<int64_t, std::set<std::string>> by_checkpoint_;
  std::set<int64_t> pending_;
  // Unreferenced owned files waiting for the checkpoints pending when they were released (up to that id).
  std::map<std::string, int64_t> deferred_;
};

}  // namespace sluice::coordinator
