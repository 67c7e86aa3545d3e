#include "fs/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

#include "fs/errno_status.h"
#include "fs/path.h"

namespace sluice::fs {
namespace {

// The holder's line, as far as it was written (a holder between its lock and its write shows an empty file).
std::string read_holder(int fd) {
  std::string text(512, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (const size_t nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  return text.empty() ? "another job (it has not recorded its name yet)" : text;
}

class HeldFolderLock final : public HeldClaim {
 public:
  explicit HeldFolderLock(FolderLock lock) : lock_(std::move(lock)) {}

 private:
  FolderLock lock_;
};

}  // namespace

Result<FolderLock> FolderLock::take(const std::string& dir, const std::string& what, const std::string& holder) {
  const std::string local = strip_file_scheme(dir);
  std::error_code ec;
  std::filesystem::create_directories(local, ec);
  if (ec) return errno_status("cannot create", local, ec.value()).with_context(what);
  const std::string lock_path = join_path(local, kFolderLockFileName);
  // A few rounds at most: each one that loses found a file its holder removed in between.
  for (int round = 0; round < 100; ++round) {
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    const int open_errno = errno;
    // Another user's lock file (a killed holder's, or a running one's): flock(2) works on a read-only descriptor,
    // so its holder is still seen; a free one is replaced with a file of our own below. No file at all: the
    // folder itself refuses us, and that is the error to report.
    const bool writable = fd >= 0;
    if (fd < 0 && open_errno == EACCES) fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno_status("cannot open the lock file", lock_path, open_errno).with_context(what);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string by = err == EWOULDBLOCK ? read_holder(fd) : "";
      ::close(fd);
      if (err != EWOULDBLOCK) return errno_status("cannot lock", lock_path, err).with_context(what);
      return Status::failed_precondition(what + " is in use by " + by + ": give each running job its own (the lock, " +
                                         lock_path + ", frees itself when that job ends or its process dies)");
    }
    struct stat locked {};
    struct stat named {};
    if (::fstat(fd, &locked) != 0 || ::lstat(lock_path.c_str(), &named) != 0 || locked.st_ino != named.st_ino ||
        locked.st_dev != named.st_dev) {
      ::close(fd);  // its holder removed it after we opened it: take the one in the folder now
      continue;
    }
    if (!writable) {
      // Free, but it cannot record us: removed while locked (as release() does), then created anew.
      const int err = ::unlink(lock_path.c_str()) == 0 ? 0 : errno;
      ::close(fd);
      if (err != 0) {
        // A sticky folder (like /tmp) lets only the file's owner remove it; the lock is free, its file is not ours.
        return errno_status("cannot replace another user's free lock file", lock_path, err)
            .with_context(what + " (its owner or root can remove the file)");
      }
      continue;
    }
    FolderLock lock(fd, lock_path);
    const std::string line = holder + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
      return errno_status("cannot write the lock file", lock_path, errno).with_context(what);
    }
    return lock;
  }
  return Status::io_error("cannot lock " + what + ": its lock file " + lock_path + " kept being replaced");
}

// Removed while still locked: whoever opens it later finds it gone from the folder and starts over.
void FolderLock::release() {
  if (fd_ < 0) return;
  (void)::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

FolderLock::~FolderLock() { release(); }

FolderLock::FolderLock(FolderLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

std::optional<ExclusiveClaim> local_folder_claim(const std::string& dir, const std::string& what) {
  const std::string scheme = uri_scheme(dir);
  if (!scheme.empty() && scheme != "file") return std::nullopt;
  // Refused by the registry where the path is used; a lock would create the folder it refuses.
  const std::string host = file_uri_host(dir);
  if (!mistyped_uri_scheme(dir).empty() || (!host.empty() && host != "localhost") || strip_file_scheme(dir).empty()) {
    return std::nullopt;
  }
  ExclusiveClaim claim;
  claim.what = what;
  claim.key = "local folder " + canonical_path(dir);
  claim.take = [dir, what](const ClaimingJob& job) -> Result<std::unique_ptr<HeldClaim>> {
    SLUICE_ASSIGN_OR_RETURN(FolderLock lock, FolderLock::take(dir, what, job.description));
    return std::unique_ptr<HeldClaim>(std::make_unique<HeldFolderLock>(std::move(lock)));
  };
  return claim;
}

}  // namespace sluice::fs
