// Ownership of the RocksDB working folders under state.backend.rocksdb.localdir, so a later run can remove the
// folders of a process that died (SIGKILL, a crash, power loss) without touching anyone else's.
//
// Every working folder <local_dir>/sluice-rocksdb-<instance>-<16 hex digits> holds an owner lock file,
// `sluice-owner.lock` (its content: "pid <n>", for people), that the process keeps open with an exclusive
// flock(2) for the folder's life. The kernel drops the lock when the last descriptor closes, however the process
// ends, so a folder whose lock can be taken has no owner left. flock locks belong to the open file description,
// not to the process: a second store in the same process cannot take a live folder's lock either, so jobs
// sharing a local dir in one process are as safe as jobs in different processes.
//
// A folder is removed only when its name has the working-folder pattern AND its lock file exists AND the lock can
// be taken: a folder Sluice did not create, or a live one, is never touched. The lock file is put in place only
// once locked (created under a temporary name, locked, renamed), so no one sees a live folder's lock unlocked.
// Removal keeps the lock file to the end, so a sweep cut short leaves a folder that the next sweep recognises.
//
// Limits: a process killed between creating its folder and renaming the lock file in leaves a folder without
// the marker, which stays (it cannot be told from a foreign one). Forked children without exec inherit the
// descriptor and keep the folder alive while they run (the descriptor is close-on-exec). flock on network
// filesystems depends on the server; keep the local dir on a local disk (as RocksDB wants anyway).
//
// Thread-safety: free functions and OwnerLock are safe to use from any thread; an OwnerLock is not shared.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::rocksdb_workdir {

inline constexpr std::string_view kWorkingDirPrefix = "sluice-rocksdb-";
inline constexpr std::string_view kOwnerLockFileName = "sluice-owner.lock";

// True for the names RocksDBStore gives its working folders: kWorkingDirPrefix, then [A-Za-z0-9._-]*, then "-"
// and 16 lowercase hex digits. Pure.
bool is_working_dir_name(std::string_view name);

// The working folder that a local snapshot folder "<working folder>-chk-<n>" (rocksdb_incremental.cc) belongs
// to, or "" when `name` is not such a folder's name. Pure.
std::string snapshot_dir_owner(std::string_view name);

// The owner lock of one working folder, held from take() until destruction (or the process's end).
class OwnerLock {
 public:
  // Marks the new, empty folder `dir` as owned by this process. kIOError naming the folder if the lock file
  // cannot be created, locked or renamed.
  static Result<OwnerLock> take(const std::string& dir);

  OwnerLock() = default;
  ~OwnerLock();
  OwnerLock(OwnerLock&& other) noexcept;
  OwnerLock& operator=(OwnerLock&& other) noexcept;
  OwnerLock(const OwnerLock&) = delete;
  OwnerLock& operator=(const OwnerLock&) = delete;

 private:
  explicit OwnerLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Removes every working folder under `local_dir` whose owner is gone (see above), with its local snapshot
// folders. Returns the paths removed. Best effort: a folder that cannot be listed or removed now is left for the
// next sweep; `local_dir` not existing is no error.
std::vector<std::string> remove_abandoned_working_dirs(const std::string& local_dir);

// remove_abandoned_working_dirs, once per `local_dir` in this process (the first store a process opens under a
// local dir sweeps it; later ones would only find their own process's live folders and those of processes that
// died since, which the next run removes). Logs each removed folder.
void remove_abandoned_working_dirs_once(const std::string& local_dir);

}  // namespace sluice::rocksdb_workdir
