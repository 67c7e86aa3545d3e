#include "sluice/connectors/file/transactional_file_sink.h"

#include <set>
#include <span>
#include <stdexcept>

#include "fs/file_system.h"
#include "fs/file_system_registry.h"
#include "fs/path.h"
#include "fs/recoverable_writer.h"

namespace sluice::file {
namespace {

[[noreturn]] void fail(const Status& s) { throw std::runtime_error("file sink: " + s.to_string()); }

template <class T>
T value_or_fail(Result<T> r) {
  if (!r.is_ok()) fail(r.status());
  return std::move(r).value();
}

std::shared_ptr<fs::FileSystem> file_system_for(const fs::FileSystemRegistry& registry, const std::string& path) {
  return value_or_fail(registry.for_path(path));
}

std::shared_ptr<fs::RecoverableWriter> writer_for(const fs::FileSystemRegistry& registry, const std::string& path,
                                                  int64_t bytes_per_sync) {
  return value_or_fail(file_system_for(registry, path)->create_recoverable_writer(
      fs::RecoverableWriterOptions{bytes_per_sync}));
}

// A part file "part-<job>-<subtask>-<checkpoint>-<counter>": its job, subtask and checkpoint, or subtask -1 for
// any other name.
struct PartName {
  std::string job;
  int32_t subtask = -1;
  int64_t checkpoint = -1;
};
PartName parse_part_name(const std::string& name) {
  PartName p;
  if (name.rfind("part-", 0) != 0) return p;
  size_t a = name.find('-', 5);  // after the job id
  if (a == std::string::npos) return p;
  size_t b = name.find('-', a + 1);
  if (b == std::string::npos) return p;
  size_t c = name.find('-', b + 1);
  if (c == std::string::npos) return p;
  try {
    p.checkpoint = std::stoll(name.substr(b + 1, c - b - 1));
    p.subtask = std::stoi(name.substr(a + 1, b - a - 1));
  } catch (...) {
    return PartName{};
  }
  p.job = name.substr(5, a - 5);
  return p;
}

const fs::FileSystemRegistry& local_only() {
  static const fs::FileSystemRegistry registry;
  return registry;
}

}  // namespace

void commit_part_files(const fs::FileSystemRegistry& file_systems, const std::vector<FileCommittable>& committables) {
  for (const auto& c : committables) {
    auto writer = writer_for(file_systems, c.final_path, TransactionalPartWriter::kDefaultBytesPerSync);
    Status s = writer->commit(fs::CommitRecoverable{c.final_path, c.size_bytes, c.state});
    if (!s.is_ok()) {
      const PartName p = parse_part_name(fs::path_file_name(c.final_path));
      fail(s.with_context("committing part file '" + c.final_path + "' (pre-committed at checkpoint " +
                          std::to_string(p.checkpoint) + " or the next one the sink saw)"));
    }
  }
}

void commit_part_files(const std::vector<FileCommittable>& committables) {
  commit_part_files(local_only(), committables);
}

void commit_part_files_in(const fs::FileSystemRegistry& file_systems, const std::string& dir,
                          const std::vector<FileCommittable>& committables) {
  std::vector<FileCommittable> here;
  here.reserve(committables.size());
  for (const auto& c : committables) {
    here.push_back(FileCommittable{fs::join_path(dir, fs::path_file_name(c.final_path)), c.size_bytes, c.state});
  }
  commit_part_files(file_systems, here);
}

void commit_part_files_in(const std::string& dir, const std::vector<FileCommittable>& committables) {
  commit_part_files_in(local_only(), dir, committables);
}

TransactionalPartWriter::TransactionalPartWriter(std::string dir, std::string job_id, int32_t subtask,
                                                 std::function<int64_t()> next_checkpoint_id, int64_t part_size_bytes,
                                                 bool recover, const std::vector<FileCommittable>& keep,
                                                 int64_t bytes_per_sync, int32_t parallelism,
                                                 std::shared_ptr<const fs::FileSystemRegistry> file_systems)
    : dir_(std::move(dir)), job_id_(std::move(job_id)), subtask_(subtask),
      next_checkpoint_id_(std::move(next_checkpoint_id)), part_size_bytes_(part_size_bytes) {
  const fs::FileSystemRegistry& registry = file_systems ? *file_systems : local_only();
  auto fsys = file_system_for(registry, dir_);
  if (Status s = fs::create_directories_durable(*fsys, dir_); !s.is_ok()) {
    fail(s.with_context("cannot create directory '" + dir_ + "'"));
  }
  writer_ = value_or_fail(fsys->create_recoverable_writer(fs::RecoverableWriterOptions{bytes_per_sync}));
  abort_lingering(recover, keep, parallelism);
}

// Aborts lingering transactions: this subtask's unpublished files the restored state does not own. Without a
// restored checkpoint only this run's own (an earlier attempt that failed before its first checkpoint): another
// run's may still belong to a checkpoint someone restores later.
// After a restore, a pending file not after the restored checkpoint may be owned by another subtask: the
// committables are split-distributed state, so after a rescale (or with subtasks holding different numbers of
// committables) a file can be handed to a subtask other than the one whose index it carries, which commits it
// concurrently. Only files started after the restored checkpoint are certainly leftovers. An S3 upload does not
// say whether it was closed for commit, so it counts as pending. After a scale-down nobody has the indexes >= the
// new parallelism: restored subtask 0 aborts their leftovers by the same rules.
void TransactionalPartWriter::abort_lingering(bool recover, const std::vector<FileCommittable>& keep,
                                              int32_t parallelism) {
  const bool sweeps_vanished = recover && subtask_ == 0 && parallelism > 0;
  const int64_t first_after_restore = recover ? next_checkpoint_id_() : 0;
  std::set<std::string> owned;
  for (const auto& c : keep) owned.insert(fs::path_file_name(c.final_path));
  for (const fs::InProgressFile& f : value_or_fail(writer_->list_in_progress(dir_))) {
    const std::string name = fs::path_file_name(f.target_path);
    const PartName p = parse_part_name(name);
    const bool mine = p.subtask == subtask_ || (sweeps_vanished && p.subtask >= parallelism);
    if (p.subtask < 0 || !mine || owned.count(name) > 0) continue;
    if (recover && f.stage != fs::InProgressFile::Stage::kInProgress && p.checkpoint < first_after_restore) continue;
    if (!recover && p.job != job_id_) continue;
    if (Status s = writer_->abort(f); !s.is_ok()) fail(s);
  }
}

TransactionalPartWriter::~TransactionalPartWriter() { close(); }

void TransactionalPartWriter::open_new() {
  base_ = "part-" + job_id_ + "-" + std::to_string(subtask_) + "-" + std::to_string(next_checkpoint_id_()) + "-" +
          std::to_string(counter_++);
  out_ = value_or_fail(writer_->open(fs::join_path(dir_, base_)));
  part_bytes_ = 0;
}

void TransactionalPartWriter::write_out() {
  if (buffer_.empty()) return;
  const auto* data = reinterpret_cast<const uint8_t*>(buffer_.data());
  if (Status s = out_->write(std::span<const uint8_t>(data, buffer_.size())); !s.is_ok()) fail(s);
  buffer_.clear();
}

void TransactionalPartWriter::finish_current() {
  if (!out_) return;
  write_out();
  fs::CommitRecoverable c = value_or_fail(out_->close_for_commit());
  out_.reset();
  ready_.push_back(FileCommittable{std::move(c.target_path), c.size_bytes, std::move(c.state)});
}

void TransactionalPartWriter::append_line(const std::string& line) {
  if (out_ && part_bytes_ >= part_size_bytes_) finish_current();
  if (!out_) open_new();
  buffer_ += line;
  buffer_ += '\n';
  part_bytes_ += static_cast<int64_t>(line.size() + 1);
  if (buffer_.size() >= 64 * 1024) write_out();
}

void TransactionalPartWriter::flush() {
  if (out_) write_out();
}

std::vector<FileCommittable> TransactionalPartWriter::prepare_commit() {
  finish_current();  // roll on checkpoint
  std::vector<FileCommittable> out = std::move(ready_);
  ready_.clear();
  return out;
}

void TransactionalPartWriter::close() noexcept {
  // An open file holds uncommitted data: it stays unpublished and is aborted on recovery.
  if (out_) out_->close();
  out_.reset();
}

}  // namespace sluice::file
