#include "fs/local_recoverable_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "core/failure_markers.h"
#include "fs/errno_status.h"
#include "fs/path.h"

namespace sluice::fs {
namespace {

constexpr std::string_view kInProgressSuffix = ".inprogress";
constexpr std::string_view kPendingSuffix = ".pending";

Status sync_directory(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status("cannot open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return errno_status("cannot fsync directory", dir, err);
  return Status::ok();
}

// The local path of a target and of its hidden siblings.
struct Names {
  std::string dir;     // local, no file:// prefix
  std::string name;    // the target's file name
  std::string target;  // local path of the target
  std::string hidden(std::string_view suffix) const { return "." + name + std::string(suffix); }
  std::string hidden_path(std::string_view suffix) const { return join_path(dir, hidden(suffix)); }
};

Result<Names> names_of(const std::string& target_path) {
  Names n;
  n.target = strip_file_scheme(target_path);
  n.name = path_file_name(n.target);
  n.dir = path_parent(n.target);
  if (n.name.empty()) return Status::invalid_argument("not a file path: '" + target_path + "'");
  return n;
}

Result<std::string> hidden_name_of(const std::vector<uint8_t>& state, const std::string& target) {
  auto name = deserialize_bytes<std::string>(state.data(), state.size(), "local recoverable");
  if (!name.is_ok() || name->empty() || name->front() != '.') {
    return Status::invalid_argument("not a recoverable of the local filesystem for '" + target + "'");
  }
  return std::move(name).value();
}

class LocalRecoverableStream final : public RecoverableOutputStream {
 public:
  LocalRecoverableStream(std::string target_path, Names names, int fd, uint64_t position, int64_t bytes_per_sync)
      : target_path_(std::move(target_path)), names_(std::move(names)), fd_(fd), position_(position),
        writeback_started_(position), bytes_per_sync_(bytes_per_sync) {}
  ~LocalRecoverableStream() override { close(); }

  Status write(std::span<const uint8_t> bytes) override {
    if (fd_ < 0) return Status::failed_precondition("file '" + target_path_ + "' is closed");
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno_status("cannot write", in_progress_path(), errno);
      }
      done += static_cast<size_t>(n);
    }
    position_ += bytes.size();
    start_writeback();
    return Status::ok();
  }

  uint64_t position_bytes() const override { return position_; }

  Result<ResumeRecoverable> persist() override {
    if (fd_ < 0) return Status::failed_precondition("file '" + target_path_ + "' is closed");
    if (::fsync(fd_) != 0) return errno_status("cannot fsync", in_progress_path(), errno);
    return ResumeRecoverable{target_path_, position_, serialize_bytes(names_.hidden(kInProgressSuffix))};
  }

  Result<CommitRecoverable> close_for_commit() override {
    if (fd_ < 0) return Status::failed_precondition("file '" + target_path_ + "' is closed");
    if (::fsync(fd_) != 0) return errno_status("cannot fsync", in_progress_path(), errno);
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return errno_status("cannot close", in_progress_path(), errno);
    const std::string pending = names_.hidden_path(kPendingSuffix);
    if (::rename(in_progress_path().c_str(), pending.c_str()) != 0) {
      return errno_status("cannot rename to pending", in_progress_path(), errno);
    }
    SLUICE_RETURN_IF_ERROR(sync_directory(names_.dir));
    return CommitRecoverable{target_path_, position_, serialize_bytes(names_.hidden(kPendingSuffix))};
  }

  void close() noexcept override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  std::string in_progress_path() const { return names_.hidden_path(kInProgressSuffix); }
  void start_writeback() {
    if (bytes_per_sync_ <= 0 || position_ - writeback_started_ < static_cast<uint64_t>(bytes_per_sync_)) return;
#ifdef __linux__
    // A hint: an error here shows again at the fsync.
    (void)::sync_file_range(fd_, static_cast<off_t>(writeback_started_), static_cast<off_t>(position_ - writeback_started_),
                            SYNC_FILE_RANGE_WRITE);
#endif
    writeback_started_ = position_;
  }

  std::string target_path_;
  Names names_;
  int fd_;
  uint64_t position_;
  uint64_t writeback_started_;
  int64_t bytes_per_sync_;
};

class LocalRecoverableWriter final : public RecoverableWriter {
 public:
  explicit LocalRecoverableWriter(LocalRecoverableWriterOptions options) : options_(options) {}

  Result<std::unique_ptr<RecoverableOutputStream>> open(const std::string& target_path) override {
    SLUICE_ASSIGN_OR_RETURN(Names n, names_of(target_path));
    const std::string path = n.hidden_path(kInProgressSuffix);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status("cannot create", path, errno);
    return std::unique_ptr<RecoverableOutputStream>(
        std::make_unique<LocalRecoverableStream>(target_path, std::move(n), fd, 0, options_.bytes_per_sync));
  }

  Result<std::unique_ptr<RecoverableOutputStream>> recover(const ResumeRecoverable& r) override {
    SLUICE_ASSIGN_OR_RETURN(Names n, names_of(r.target_path));
    SLUICE_ASSIGN_OR_RETURN(std::string hidden, hidden_name_of(r.state, r.target_path));
    if (hidden != n.hidden(kInProgressSuffix)) {
      return Status::invalid_argument("recoverable of '" + r.target_path + "' names another file: '" + hidden + "'");
    }
    const std::string path = join_path(n.dir, hidden);
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      // Closed for commit after the persist (by a run that then failed before its commit): not published, so the
      // persisted bytes are still there under the pending name. Back to in-progress, and on from the persist point.
      const std::string pending = n.hidden_path(kPendingSuffix);
      if (::rename(pending.c_str(), path.c_str()) == 0) {
        SLUICE_RETURN_IF_ERROR(sync_directory(n.dir));
        fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      } else {
        errno = ENOENT;
      }
    }
    if (fd < 0) {
      return errno_status("cannot resume '" + r.target_path + "': its in-progress file is gone", path, errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < r.position_bytes) {
      ::close(fd);
      return Status::corruption("cannot resume '" + r.target_path + "': its in-progress file '" + path + "' has " +
                                std::to_string(st.st_size) + " bytes, fewer than the " +
                                std::to_string(r.position_bytes) + " persisted");
    }
    // Drop what a failed run wrote after the persist point, then make the cut durable before writing on.
    if (::ftruncate(fd, static_cast<off_t>(r.position_bytes)) != 0 || ::fsync(fd) != 0 ||
        ::lseek(fd, 0, SEEK_END) < 0) {
      int err = errno;
      ::close(fd);
      return errno_status("cannot truncate", path, err);
    }
    return std::unique_ptr<RecoverableOutputStream>(std::make_unique<LocalRecoverableStream>(
        r.target_path, std::move(n), fd, r.position_bytes, options_.bytes_per_sync));
  }

  Status commit(const CommitRecoverable& c) override {
    SLUICE_ASSIGN_OR_RETURN(Names n, names_of(c.target_path));
    SLUICE_ASSIGN_OR_RETURN(std::string hidden, hidden_name_of(c.state, c.target_path));
    const std::string pending = join_path(n.dir, hidden);
    if (::rename(pending.c_str(), n.target.c_str()) == 0) return sync_directory(n.dir);
    const int err = errno;
    std::error_code ec;
    if (err == ENOENT && std::filesystem::exists(n.target, ec)) return Status::ok();  // committed before
    if (err == ENOENT) {
      return committable_data_gone("cannot commit '" + c.target_path + "': neither its pending file '" + pending +
                                   "' nor the file exists");
    }
    return errno_status("cannot commit", pending, err);
  }

  Result<std::vector<InProgressFile>> list_in_progress(const std::string& dir) override {
    const std::string local = strip_file_scheme(dir);
    std::vector<InProgressFile> out;
    std::error_code ec;
    std::filesystem::directory_iterator it(local, ec);
    if (ec == std::errc::no_such_file_or_directory) return out;
    if (ec) return errno_status("cannot list", local, ec.value());
    for (const auto& e : it) {
      const std::string name = e.path().filename().string();
      if (name.size() < 2 || name.front() != '.') continue;
      for (auto [suffix, stage] : {std::pair{kInProgressSuffix, InProgressFile::Stage::kInProgress},
                                   std::pair{kPendingSuffix, InProgressFile::Stage::kPending}}) {
        if (name.size() > suffix.size() + 1 && name.ends_with(suffix)) {
          out.push_back(InProgressFile{join_path(dir, name.substr(1, name.size() - 1 - suffix.size())), stage,
                                       join_path(local, name)});
        }
      }
    }
    std::sort(out.begin(), out.end(), [](const InProgressFile& a, const InProgressFile& b) {
      return a.target_path < b.target_path || (a.target_path == b.target_path && a.handle < b.handle);
    });
    return out;
  }

  Status abort(const InProgressFile& file) override {
    if (::unlink(file.handle.c_str()) != 0 && errno != ENOENT) return errno_status("cannot remove", file.handle, errno);
    return Status::ok();
  }

 private:
  LocalRecoverableWriterOptions options_;
};

}  // namespace

std::shared_ptr<RecoverableWriter> make_local_recoverable_writer(LocalRecoverableWriterOptions options) {
  return std::make_shared<LocalRecoverableWriter>(options);
}

}  // namespace sluice::fs
