#include "sluice/connectors/file/transactional_file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace sluice::file {
namespace fs = std::filesystem;

namespace {
[[noreturn]] void io_fail(const std::string& what, const std::string& path) {
  throw std::runtime_error("file sink: " + what + " '" + path + "': " + std::strerror(errno));
}
void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}
// A hidden part file ".part-<job>-<subtask>-<checkpoint>-<counter>.<ext>": its subtask and checkpoint, or
// subtask -1 for any other name.
struct HiddenPart {
  int32_t subtask = -1;
  int64_t checkpoint = -1;
  bool pending = false;
};
HiddenPart parse_hidden(const std::string& name) {
  HiddenPart h;
  if (name.rfind(".part-", 0) != 0) return h;
  size_t a = name.find('-', 6);  // after the job id
  if (a == std::string::npos) return h;
  size_t b = name.find('-', a + 1);
  if (b == std::string::npos) return h;
  size_t c = name.find('-', b + 1);
  if (c == std::string::npos) return h;
  try {
    h.checkpoint = std::stoll(name.substr(b + 1, c - b - 1));
    h.subtask = std::stoi(name.substr(a + 1, b - a - 1));
  } catch (...) {
    return HiddenPart{};
  }
  const std::string_view kPending = ".pending";
  h.pending = name.size() > kPending.size() && name.compare(name.size() - kPending.size(), kPending.size(), kPending) == 0;
  return h;
}
}  // namespace

void commit_part_files(const std::vector<FileCommittable>& committables) {
  std::set<std::string> dirs;
  for (const auto& c : committables) {
    if (::rename(c.pending_path.c_str(), c.final_path.c_str()) == 0) {
      dirs.insert(fs::path(c.final_path).parent_path().string());
      continue;
    }
    if (errno == ENOENT && fs::exists(c.final_path)) continue;  // committed before: idempotent
    io_fail("cannot commit pending file (neither it nor the final file exists)", c.pending_path);
  }
  for (const auto& d : dirs) fsync_dir(d);
}

void commit_part_files_in(const std::string& dir, const std::vector<FileCommittable>& committables) {
  std::vector<FileCommittable> here;
  here.reserve(committables.size());
  for (const auto& c : committables) {
    here.push_back(FileCommittable{(fs::path(dir) / fs::path(c.pending_path).filename()).string(),
                                   (fs::path(dir) / fs::path(c.final_path).filename()).string()});
  }
  commit_part_files(here);
}

TransactionalPartWriter::TransactionalPartWriter(std::string dir, std::string job_id, int32_t subtask,
                                                 std::function<int64_t()> next_checkpoint_id, int64_t part_size_bytes,
                                                 bool recover, const std::vector<FileCommittable>& keep,
                                                 int64_t bytes_per_sync, int32_t parallelism)
    : dir_(std::move(dir)), job_id_(std::move(job_id)), subtask_(subtask),
      next_checkpoint_id_(std::move(next_checkpoint_id)),
      part_size_bytes_(part_size_bytes), bytes_per_sync_(bytes_per_sync) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("file sink: cannot create directory '" + dir_ + "': " + ec.message());
  // Abort lingering transactions: this subtask's hidden files the restored state does not own. Without a
  // restored checkpoint only this run's own (an earlier attempt that failed before its first checkpoint):
  // another run's may still belong to a checkpoint someone restores later.
  // After a restore, a pending file not after the restored checkpoint may be owned by another subtask: the
  // committables are split-distributed state, so after a rescale (or with subtasks holding different numbers
  // of committables) a file can be handed to a subtask other than the one whose index it carries, which
  // commits it concurrently. Only files pre-committed after the restored checkpoint are certainly leftovers.
  // After a scale-down nobody has the indexes >= the new parallelism: restored subtask 0 aborts their leftovers
  // by the same rules (their pending files of the restored checkpoint may have been handed to any subtask).
  const std::string own_prefix = ".part-" + job_id_ + "-";
  const bool sweeps_vanished = recover && subtask_ == 0 && parallelism > 0;
  const int64_t first_after_restore = recover ? next_checkpoint_id_() : 0;
  std::set<std::string> owned;
  for (const auto& c : keep) owned.insert(fs::path(c.pending_path).filename().string());
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    const HiddenPart h = parse_hidden(name);
    const bool mine = h.subtask == subtask_ || (sweeps_vanished && h.subtask >= parallelism);
    if (!mine || owned.count(name) > 0) continue;
    if (recover && h.pending && h.checkpoint < first_after_restore) continue;
    if (recover || name.rfind(own_prefix, 0) == 0) fs::remove(e.path(), ec);
  }
}

TransactionalPartWriter::~TransactionalPartWriter() { close(); }

void TransactionalPartWriter::open_new() {
  base_ = "part-" + job_id_ + "-" + std::to_string(subtask_) + "-" + std::to_string(next_checkpoint_id_()) + "-" +
          std::to_string(counter_++);
  std::string path = dir_ + "/." + base_ + ".inprogress";
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) io_fail("cannot create", path);
  part_bytes_ = 0;
  written_bytes_ = 0;
  writeback_started_bytes_ = 0;
}

void TransactionalPartWriter::write_out() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("cannot write", dir_ + "/." + base_ + ".inprogress");
    }
    done += static_cast<size_t>(n);
  }
  written_bytes_ += static_cast<int64_t>(buffer_.size());
  buffer_.clear();
  start_writeback();
}

void TransactionalPartWriter::start_writeback() {
  // RocksDB's bytes_per_sync: hand written pages to the kernel's writeback as they accumulate (does not wait),
  // so the fsync at the barrier finds little dirty data and the checkpoint's synchronous part stays short.
  // Durability still comes from that fsync alone.
  if (bytes_per_sync_ <= 0 || written_bytes_ - writeback_started_bytes_ < bytes_per_sync_) return;
#ifdef __linux__
  (void)::sync_file_range(fd_, writeback_started_bytes_, written_bytes_ - writeback_started_bytes_,
                          SYNC_FILE_RANGE_WRITE);  // a hint: an error here shows again at the fsync
#endif
  writeback_started_bytes_ = written_bytes_;
}

void TransactionalPartWriter::finish_current() {
  if (fd_ < 0) return;
  write_out();
  std::string in_progress = dir_ + "/." + base_ + ".inprogress";
  if (::fsync(fd_) != 0) io_fail("cannot fsync", in_progress);
  ::close(fd_);
  fd_ = -1;
  std::string pending = dir_ + "/." + base_ + ".pending";
  if (::rename(in_progress.c_str(), pending.c_str()) != 0) io_fail("cannot rename to pending", in_progress);
  fsync_dir(dir_);
  ready_.push_back(FileCommittable{pending, dir_ + "/" + base_});
}

void TransactionalPartWriter::append_line(const std::string& line) {
  if (fd_ >= 0 && part_bytes_ >= part_size_bytes_) finish_current();
  if (fd_ < 0) open_new();
  buffer_ += line;
  buffer_ += '\n';
  part_bytes_ += static_cast<int64_t>(line.size() + 1);
  if (buffer_.size() >= 64 * 1024) write_out();
}

void TransactionalPartWriter::flush() {
  if (fd_ >= 0) write_out();
}

std::vector<FileCommittable> TransactionalPartWriter::prepare_commit() {
  finish_current();  // roll on checkpoint
  std::vector<FileCommittable> out = std::move(ready_);
  ready_.clear();
  return out;
}

void TransactionalPartWriter::close() noexcept {
  // An open in-progress file holds uncommitted data: it stays hidden and is cleaned up on recovery.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace sluice::file
