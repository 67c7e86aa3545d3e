#include "checkpoint/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <system_error>

namespace sluice::checkpoint {
namespace {

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

Status errno_status(std::string_view what, const std::string& path, int err) {
  std::string m = std::string(what) + " '" + path + "': " + errno_text(err);
  if (err == ENOENT) return Status::not_found(std::move(m));
  return Status::io_error(std::move(m));
}

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

class PosixFileSystem final : public FileSystem {
 public:
  Result<FileDigest> copy_local_file(const std::string& local_path, const std::string& path,
                                     Durability durability) override {
    Fd in(::open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0) return errno_status("cannot open file", local_path, errno);
    Fd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (out.get() < 0) return errno_status("cannot create file", path, errno);
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
    XXH3_64bits_reset(state.get());
    std::vector<uint8_t> buf(1 << 20);
    FileDigest d;
    while (true) {
      ssize_t n = ::read(in.get(), buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno_status("cannot read file", local_path, errno);
      }
      if (n == 0) break;
      XXH3_64bits_update(state.get(), buf.data(), static_cast<size_t>(n));
      d.size_bytes += static_cast<uint64_t>(n);
      size_t done = 0;
      while (done < static_cast<size_t>(n)) {
        ssize_t w = ::write(out.get(), buf.data() + done, static_cast<size_t>(n) - done);
        if (w < 0) {
          if (errno == EINTR) continue;
          return errno_status("cannot write file", path, errno);
        }
        done += static_cast<size_t>(w);
      }
    }
    d.checksum = XXH3_64bits_digest(state.get());
    if (durability == Durability::kSync && ::fsync(out.get()) != 0) return errno_status("cannot fsync file", path, errno);
    if (out.close_now() != 0) return errno_status("cannot close file", path, errno);
    return d;
  }

  Status create_dir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0777) == 0) return Status::ok();
    int err = errno;
    if (err == EEXIST) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::ok();
      return Status::io_error("cannot create directory '" + path + "': a file of that name exists");
    }
    return errno_status("cannot create directory", path, err);
  }

  Status write_file(const std::string& path, const std::vector<uint8_t>& bytes, Durability durability) override {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (fd.get() < 0) return errno_status("cannot create file", path, errno);
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno_status("cannot write file", path, errno);
      }
      done += static_cast<size_t>(n);
    }
    if (durability == Durability::kSync && ::fsync(fd.get()) != 0) {
      return errno_status("cannot fsync file", path, errno);
    }
    if (fd.close_now() != 0) return errno_status("cannot close file", path, errno);
    return Status::ok();
  }

  Status sync_dir(const std::string& dir) override {
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) return errno_status("cannot open directory", dir, errno);
    if (::fsync(fd.get()) != 0) return errno_status("cannot fsync directory", dir, errno);
    return Status::ok();
  }

  Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return errno_status("cannot rename to '" + to + "' from", from, errno);
    return Status::ok();
  }

  Result<std::vector<uint8_t>> read_file(const std::string& path) override {
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

  Result<FileDigest> digest_file(const std::string& path) override {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return errno_status("cannot open file", path, errno);
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
    if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) return Status::internal("XXH3 state allocation failed");
    std::vector<uint8_t> buf(1 << 20);
    FileDigest d;
    for (;;) {
      ssize_t n = ::read(fd.get(), buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno_status("cannot read file", path, errno);
      }
      if (n == 0) break;
      XXH3_64bits_update(state.get(), buf.data(), static_cast<size_t>(n));
      d.size_bytes += static_cast<uint64_t>(n);
    }
    d.checksum = XXH3_64bits_digest(state.get());
    return d;
  }

  Result<PathKind> stat(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return PathKind::kMissing;
      return errno_status("cannot stat", path, errno);
    }
    if (S_ISREG(st.st_mode)) return PathKind::kFile;
    if (S_ISDIR(st.st_mode)) return PathKind::kDirectory;
    return PathKind::kOther;
  }

  Result<uint64_t> file_size(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno_status("cannot stat", path, errno);
    if (!S_ISREG(st.st_mode)) return Status::io_error("'" + path + "' is not a regular file");
    return static_cast<uint64_t>(st.st_size);
  }

  Result<std::vector<DirEntry>> list_dir(const std::string& dir) override {
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

  Status remove_file(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status("cannot remove file", path, errno);
    return Status::ok();
  }

  Status remove_empty_dir(const std::string& path) override {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return Status::ok();
    int err = errno;
    if (err == ENOTEMPTY || err == EEXIST) return Status::failed_precondition("directory '" + path + "' is not empty");
    return errno_status("cannot remove directory", path, err);
  }

  Status remove_all(const std::string& path) override {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (ec && ec.value() != ENOENT) return errno_status("cannot remove", path, ec.value());
    return Status::ok();
  }
};

std::string_view strip_trailing_slashes(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  return p;
}

}  // namespace

Result<FileDigest> FileSystem::copy_local_file(const std::string& local_path, const std::string& path,
                                               Durability durability) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, local_file_system()->read_file(local_path));
  SLUICE_RETURN_IF_ERROR(write_file(path, bytes, durability));
  return FileDigest{bytes.size(), XXH3_64bits(bytes.data(), bytes.size())};
}

Result<uint64_t> FileSystem::file_size(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(FileDigest d, digest_file(path));
  return d.size_bytes;
}

std::shared_ptr<FileSystem> local_file_system() {
  static const std::shared_ptr<FileSystem> fs = std::make_shared<PosixFileSystem>();
  return fs;
}

std::string join_path(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  std::string out(strip_trailing_slashes(a));
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  if (out.back() != '/') out += '/';
  out += b;
  return out;
}

std::string path_file_name(std::string_view path) {
  path = strip_trailing_slashes(path);
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string path_parent(std::string_view path) {
  path = strip_trailing_slashes(path);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  if (slash == 0) return "/";
  return std::string(strip_trailing_slashes(path.substr(0, slash)));
}

Status create_directories_durable(FileSystem& fs, const std::string& path) {
  // Walk up to the first existing ancestor, then create downwards, syncing each parent.
  std::vector<std::string> missing;
  std::string p(strip_trailing_slashes(path));
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(PathKind kind, fs.stat(p));
    if (kind == PathKind::kDirectory) break;
    if (kind != PathKind::kMissing) return Status::io_error("cannot create directory '" + p + "': not a directory");
    missing.push_back(p);
    std::string parent = path_parent(p);
    if (parent.empty() || parent == p) break;  // relative path whose first level is missing
    p = std::move(parent);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    SLUICE_RETURN_IF_ERROR(fs.create_dir(*it));
    std::string parent = path_parent(*it);
    SLUICE_RETURN_IF_ERROR(fs.sync_dir(parent.empty() ? "." : parent));
  }
  return Status::ok();
}

}  // namespace sluice::checkpoint
