#include "working_dir_owner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <system_error>

#include <spdlog/spdlog.h>

namespace sluice::rocksdb_workdir {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSuffixDigits = 16;
constexpr std::string_view kSnapshotInfix = "-chk-";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

Status io_error(const std::string& what, const std::string& dir) {
  return Status::io_error("RocksDB working folder '" + dir + "': " + what + ": " + std::strerror(errno));
}

// A real directory (not a symlink to one: removing through it would delete someone else's files).
bool is_plain_directory(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::directory && !ec;
}

// Takes the owner lock of working folder `dir` when its owner is gone: the descriptor holding the lock, or -1
// when the folder has no lock file (not ours) or its owner lives.
int lock_if_abandoned(const fs::path& dir) {
  const std::string lock_path = (dir / kOwnerLockFileName).string();
  const int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Removes `dir` with the lock file last, so an interrupted removal leaves a folder the next sweep recognises.
bool remove_keeping_lock_last(const fs::path& dir) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename() == kOwnerLockFileName) continue;
    fs::remove_all(e.path(), ec);
    if (ec) return false;
  }
  if (ec) return false;
  fs::remove(dir / kOwnerLockFileName, ec);
  if (ec) return false;
  return fs::remove(dir, ec) && !ec;
}

}  // namespace

bool is_working_dir_name(std::string_view name) {
  if (!name.starts_with(kWorkingDirPrefix)) return false;
  if (name.size() < kWorkingDirPrefix.size() + 1 + kSuffixDigits) return false;
  const std::string_view suffix = name.substr(name.size() - kSuffixDigits);
  const std::string_view middle =
      name.substr(kWorkingDirPrefix.size(), name.size() - kWorkingDirPrefix.size() - kSuffixDigits);
  if (!middle.ends_with('-')) return false;
  for (char c : middle) {
    if (!is_name_char(c)) return false;
  }
  for (char c : suffix) {
    if (!is_lower_hex(c)) return false;
  }
  return true;
}

std::string snapshot_dir_owner(std::string_view name) {
  const size_t at = name.rfind(kSnapshotInfix);
  if (at == std::string_view::npos) return "";
  const std::string_view id = name.substr(at + kSnapshotInfix.size());
  if (id.empty()) return "";
  for (char c : id) {
    if (c < '0' || c > '9') return "";
  }
  const std::string_view owner = name.substr(0, at);
  return is_working_dir_name(owner) ? std::string(owner) : "";
}

Result<OwnerLock> OwnerLock::take(const std::string& dir) {
  const std::string temp = (fs::path(dir) / (std::string(kOwnerLockFileName) + ".tmp")).string();
  const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return io_error("cannot create the owner lock file", dir);
  OwnerLock lock(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return io_error("cannot lock the owner lock file", dir);
  const std::string content = "pid " + std::to_string(::getpid()) + "\n";
  if (::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
    return io_error("cannot write the owner lock file", dir);
  }
  const std::string final_path = (fs::path(dir) / kOwnerLockFileName).string();
  if (::rename(temp.c_str(), final_path.c_str()) != 0) return io_error("cannot put the owner lock file in place", dir);
  return lock;
}

OwnerLock::~OwnerLock() {
  if (fd_ >= 0) ::close(fd_);
}

OwnerLock::OwnerLock(OwnerLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

OwnerLock& OwnerLock::operator=(OwnerLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

std::vector<std::string> remove_abandoned_working_dirs(const std::string& local_dir) {
  std::vector<std::string> removed;
  // Working folders, and the local snapshot folders of each.
  std::map<std::string, std::vector<fs::path>> folders;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(local_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!is_plain_directory(e.path())) continue;
    if (is_working_dir_name(name)) {
      folders[name];
    } else if (std::string owner = snapshot_dir_owner(name); !owner.empty()) {
      folders[owner].push_back(e.path());
    }
  }
  for (const auto& [name, snapshots] : folders) {
    const fs::path dir = fs::path(local_dir) / name;
    if (!is_plain_directory(dir)) continue;  // only snapshot folders left: no owner to ask
    const int fd = lock_if_abandoned(dir);
    if (fd < 0) continue;
    for (const fs::path& s : snapshots) fs::remove_all(s, ec);
    if (remove_keeping_lock_last(dir)) removed.push_back(dir.string());
    ::close(fd);
  }
  return removed;
}

void remove_abandoned_working_dirs_once(const std::string& local_dir) {
  static std::mutex mu;
  static std::set<std::string> swept;
  std::error_code ec;
  const fs::path absolute = fs::absolute(local_dir, ec);
  const std::string key = (ec ? fs::path(local_dir) : absolute).lexically_normal().string();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!swept.insert(key).second) return;
  }
  for (const std::string& dir : remove_abandoned_working_dirs(key)) {
    spdlog::info("state.backend.rocksdb.localdir: removed the RocksDB working folder {}, left by a process that "
                 "ended without deleting it (its owner lock was free)",
                 dir);
  }
}

}  // namespace sluice::rocksdb_workdir
