// A running job's lock on a local folder it writes (an output folder, a checkpoint folder), so a second job
// given the same folder is refused instead of cleaning up, truncating or aborting the first one's files.
//
// The lock is `<folder>/.sluice-job.lock`, held with an exclusive flock(2) for the job's life. The kernel drops
// the lock when the last descriptor closes, however the process ends (SIGKILL, a crash), so a killed job leaves
// no stale lock: the file stays, unlocked, and the next job takes it. The holder writes who it is into the file
// (one line, for people and for the message of the job it refuses). flock locks belong to the open file
// description, not to the process: a second job in the same process is refused like one in another process.
// The holder removes the file when it lets go, while it still holds the lock, so a folder is left as the job
// found it; a killed holder's file stays, unlocked, and the next holder reuses it. Since a contender may have
// opened the file just before it was removed, a holder checks after locking that the file it locked is still the
// one in the folder (same inode), and starts over when it is not. A lock file left by another user, which this
// user may not write, is locked read-only (its holder is still seen) and, when free, replaced with one of our own.
//
// Limits: flock on network filesystems depends on the server (NFS v4 emulates it with fcntl locks); object
// storage (s3://) has no lock at all, so callers take none there (docs/safety.md).
//
// Thread-safety: take() from any thread; a FolderLock is not shared.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sluice/core/exclusive_claim.h"
#include "sluice/core/status.h"

namespace sluice::fs {

inline constexpr std::string_view kFolderLockFileName = ".sluice-job.lock";

class FolderLock {
 public:
  // Locks the local folder `dir` (a plain path or file:// URI; created with its parents when missing) for the
  // holder `holder` (one line: who locks it). `what` names the folder in errors, e.g. "output folder 'out'".
  // Errors: kFailedPrecondition "<what> is in use by <the holder's line>" when another holder has it;
  // errno_status codes (fs/errno_status.h) when the folder or the lock file cannot be created, opened or written
  // (a symbolic link as the lock file is refused: ELOOP).
  static Result<FolderLock> take(const std::string& dir, const std::string& what, const std::string& holder);

  FolderLock() = default;
  ~FolderLock();
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  bool held() const { return fd_ >= 0; }

 private:
  FolderLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void release();
  int fd_ = -1;
  std::string path_;
};

// The claim (sluice/core/exclusive_claim.h) of local folder `dir`, a FolderLock held for the job; `what` names it in
// messages ("output folder 'out'"). None (nullopt) for a path on another filesystem (s3://): object storage has
// no lock. kInvalidArgument is not raised here: an unsupported scheme is refused where the path is used.
std::optional<ExclusiveClaim> local_folder_claim(const std::string& dir, const std::string& what);

}  // namespace sluice::fs
