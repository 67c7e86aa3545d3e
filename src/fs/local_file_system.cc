#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/failure_markers.h"
#include "fs/errno_status.h"
#include "fs/file_system.h"
#include "fs/local_recoverable_writer.h"
#include "fs/path.h"

namespace sluice::fs {
namespace {

// Closes the descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Closes now and reports the error (close can report a deferred write error).
  int close_now() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

Status write_all(int fd, const uint8_t* data, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status("cannot write file", path, errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

// Streams `in` to `out` (both open), hashing what passes.
Result<FileDigest> copy_fd(int in, const std::string& in_path, int out, const std::string& out_path) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) return Status::internal("XXH3 state allocation failed");
  std::vector<uint8_t> buf(1 << 20);
  FileDigest d;
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status("cannot read file", in_path, errno);
    }
    if (n == 0) break;
    XXH3_64bits_update(state.get(), buf.data(), static_cast<size_t>(n));
    d.size_bytes += static_cast<uint64_t>(n);
    if (out >= 0) SLUICE_RETURN_IF_ERROR(write_all(out, buf.data(), static_cast<size_t>(n), out_path));
  }
  d.checksum = XXH3_64bits_digest(state.get());
  return d;
}

// A file is published atomically by writing a temporary sibling and renaming it over the final name. The
// temporary name is unique per process (pid) and call (counter), so concurrent writers never share one; it
// ends in ".inprogress", a suffix no checkpoint or savepoint ever references.
class TempSibling {
 public:
  explicit TempSibling(const std::string& path) {
    static std::atomic<uint64_t> counter{0};
    path_ = path + "." + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)) + ".inprogress";
  }
  ~TempSibling() {
    if (!published_) ::unlink(path_.c_str());
  }
  TempSibling(const TempSibling&) = delete;
  TempSibling& operator=(const TempSibling&) = delete;
  const std::string& path() const { return path_; }
  Status publish(const std::string& final_path) {
    if (::rename(path_.c_str(), final_path.c_str()) != 0) {
      return errno_status("cannot publish '" + final_path + "' from", path_, errno);
    }
    published_ = true;
    return Status::ok();
  }

 private:
  std::string path_;
  bool published_ = false;
};

Status finish_file(Fd& fd, const std::string& path, Durability durability) {
  if (durability == Durability::kSync && ::fsync(fd.get()) != 0) return errno_status("cannot fsync file", path, errno);
  if (fd.close_now() != 0) return errno_status("cannot close file", path, errno);
  return Status::ok();
}

class PosixFileSystem final : public FileSystem {
 public:
  std::string_view scheme() const override { return "file"; }

  Result<std::shared_ptr<RecoverableWriter>> create_recoverable_writer(const RecoverableWriterOptions& options) override {
    return make_local_recoverable_writer(LocalRecoverableWriterOptions{options.bytes_per_sync});
  }

  Result<FileDigest> copy_local_file(const std::string& local_path, const std::string& uri,
                                     Durability durability) override {
    const std::string path = strip_file_scheme(uri);
    Fd in(::open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0) return errno_status("cannot open file", local_path, errno);
    TempSibling tmp(path);
    Fd out(::open(tmp.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (out.get() < 0) return errno_status("cannot create file", path, errno);
    SLUICE_ASSIGN_OR_RETURN(FileDigest d, copy_fd(in.get(), local_path, out.get(), path));
    SLUICE_RETURN_IF_ERROR(finish_file(out, path, durability));
    SLUICE_RETURN_IF_ERROR(tmp.publish(path));
    return d;
  }

  Result<FileDigest> copy_to_local_file(const std::string& uri, const std::string& local_path,
                                        LocalCopyMode mode) override {
    const std::string path = strip_file_scheme(uri);
    ::unlink(local_path.c_str());
    if (mode == LocalCopyMode::kLinkIfPossible) {
      // A hard link is a copy that costs nothing; the caller promised never to write to it.
      if (::link(path.c_str(), local_path.c_str()) == 0) return digest_file(local_path);
      if (errno == ENOENT) return errno_status("cannot open file", path, ENOENT);
    }
    Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0) return errno_status("cannot open file", path, errno);
    Fd out(::open(local_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (out.get() < 0) return errno_status("cannot create file", local_path, errno);
    SLUICE_ASSIGN_OR_RETURN(FileDigest d, copy_fd(in.get(), path, out.get(), local_path));
    SLUICE_RETURN_IF_ERROR(finish_file(out, local_path, Durability::kNone));
    return d;
  }

  Status create_dir(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    if (::mkdir(path.c_str(), 0777) == 0) return Status::ok();
    int err = errno;
    if (err == EEXIST) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::ok();
      return path_refused("cannot create directory '" + path + "': a file of that name exists");
    }
    return errno_status("cannot create directory", path, err);
  }

  Status write_file(const std::string& uri, const std::vector<uint8_t>& bytes, Durability durability) override {
    const std::string path = strip_file_scheme(uri);
    TempSibling tmp(path);
    Fd fd(::open(tmp.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (fd.get() < 0) return errno_status("cannot create file", path, errno);
    SLUICE_RETURN_IF_ERROR(write_all(fd.get(), bytes.data(), bytes.size(), path));
    SLUICE_RETURN_IF_ERROR(finish_file(fd, path, durability));
    return tmp.publish(path);
  }

  Status sync_dir(const std::string& uri) override {
    const std::string dir = strip_file_scheme(uri);
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) return errno_status("cannot open directory", dir, errno);
    if (::fsync(fd.get()) != 0) return errno_status("cannot fsync directory", dir, errno);
    return Status::ok();
  }

  Result<std::vector<uint8_t>> read_file(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return errno_status("cannot open file", path, errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return errno_status("cannot stat file", path, errno);
    if (!S_ISREG(st.st_mode)) return Status::io_error("'" + path + "' is not a regular file");
    std::vector<uint8_t> out(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::read(fd.get(), out.data() + done, out.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno_status("cannot read file", path, errno);
      }
      if (n == 0) break;  // shrank while reading
      done += static_cast<size_t>(n);
    }
    out.resize(done);
    return out;
  }

  Result<FileDigest> digest_file(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return errno_status("cannot open file", path, errno);
    return copy_fd(fd.get(), path, -1, "");
  }

  Result<PathKind> stat(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return PathKind::kMissing;
      return errno_status("cannot stat", path, errno);
    }
    if (S_ISREG(st.st_mode)) return PathKind::kFile;
    if (S_ISDIR(st.st_mode)) return PathKind::kDirectory;
    return PathKind::kOther;
  }

  Result<uint64_t> file_size(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno_status("cannot stat", path, errno);
    if (!S_ISREG(st.st_mode)) return Status::io_error("'" + path + "' is not a regular file");
    return static_cast<uint64_t>(st.st_size);
  }

  Result<std::vector<DirEntry>> list_dir(const std::string& uri) override {
    const std::string dir = strip_file_scheme(uri);
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) return errno_status("cannot list directory", dir, ec.value());
    std::vector<DirEntry> out;
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      DirEntry e;
      e.name = it->path().filename().string();
      std::error_code sec;
      auto st = it->status(sec);
      e.kind = sec ? PathKind::kOther
               : std::filesystem::is_regular_file(st) ? PathKind::kFile
               : std::filesystem::is_directory(st)    ? PathKind::kDirectory
                                                      : PathKind::kOther;
      out.push_back(std::move(e));
    }
    if (ec) return errno_status("cannot list directory", dir, ec.value());
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return out;
  }

  Status remove_file(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status("cannot remove file", path, errno);
    return Status::ok();
  }

  Status remove_empty_dir(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return Status::ok();
    int err = errno;
    if (err == ENOTEMPTY || err == EEXIST) return Status::failed_precondition("directory '" + path + "' is not empty");
    return errno_status("cannot remove directory", path, err);
  }

  Status remove_all(const std::string& uri) override {
    const std::string path = strip_file_scheme(uri);
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (ec && ec.value() != ENOENT) return errno_status("cannot remove", path, ec.value());
    return Status::ok();
  }
};

}  // namespace

Result<FileDigest> FileSystem::copy_local_file(const std::string& local_path, const std::string& path,
                                               Durability durability) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, local_file_system()->read_file(local_path));
  SLUICE_RETURN_IF_ERROR(write_file(path, bytes, durability));
  return FileDigest{bytes.size(), XXH3_64bits(bytes.data(), bytes.size())};
}

Result<FileDigest> FileSystem::copy_to_local_file(const std::string& path, const std::string& local_path,
                                                  LocalCopyMode /*mode*/) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file(path));
  SLUICE_RETURN_IF_ERROR(local_file_system()->write_file(local_path, bytes, Durability::kNone));
  return FileDigest{bytes.size(), XXH3_64bits(bytes.data(), bytes.size())};
}

Result<std::shared_ptr<RecoverableWriter>> FileSystem::create_recoverable_writer(const RecoverableWriterOptions&) {
  return Status::failed_precondition("the '" + std::string(scheme()) +
                                     "' filesystem has no recoverable writer (exactly-once file output)");
}

Result<uint64_t> FileSystem::file_size(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(FileDigest d, digest_file(path));
  return d.size_bytes;
}

std::shared_ptr<FileSystem> local_file_system() {
  static const std::shared_ptr<FileSystem> fs = std::make_shared<PosixFileSystem>();
  return fs;
}

Status create_directories_durable(FileSystem& fs, const std::string& path) {
  // Walk up to the first existing ancestor, then create downwards, syncing each parent.
  std::vector<std::string> missing;
  std::string p = normalize_path(path);
  if (p == ".") return Status::ok();
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(PathKind kind, fs.stat(p));
    if (kind == PathKind::kDirectory) break;
    if (kind != PathKind::kMissing) return path_refused("cannot create directory '" + p + "': not a directory");
    missing.push_back(p);
    std::string parent = path_parent(p);
    if (parent.empty() || parent == p) break;  // relative path whose first level is missing, or a URI's root
    p = std::move(parent);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    SLUICE_RETURN_IF_ERROR(fs.create_dir(*it));
    std::string parent = path_parent(*it);
    SLUICE_RETURN_IF_ERROR(fs.sync_dir(parent.empty() ? "." : parent));
  }
  return Status::ok();
}

}  // namespace sluice::fs
