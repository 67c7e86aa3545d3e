// The exactly-once file sink (two-phase commit; Flink's FileSink over its RecoverableWriter). Each subtask writes
// lines to a part file through the recoverable writer of its directory's filesystem (src/fs/recoverable_writer.h):
// on the local disk a hidden in-progress file, renamed to a hidden pending file at the checkpoint barrier and to
// its final, visible name when the checkpoint completes; on S3 (`s3://bucket/prefix`) a multipart upload, completed
// when the checkpoint completes. The committable, kept in the checkpoint, is the writer's CommitRecoverable.
// Readers take only finished files (names starting with "part-").
//
// The directory is any path the job's filesystems serve (SinkInitContext::file_systems: a plain path or file://,
// and s3:// configured from the job's s3.* keys; docs/storage.md). Outside a job (no registry) only the local disk;
// an s3:// directory then fails the task naming the scheme.
//
// Names are deterministic, so committing twice is harmless and no run mistakes another run's files for its
// own: part-<job id>-<subtask>-<checkpoint>-<counter>; the hidden artifacts are named from them.
// Lingering files (one job per output directory). On restore, the committables of the restored checkpoint are
// committed by whichever subtask received them (committables are split-distributed operator state, so after a
// rescale or with uneven counts a subtask may commit files carrying another index). Each restored subtask
// aborts the unpublished files carrying its own index that its restored state does not hold: every in-progress
// file, and pending files (S3: every upload) started after the restored checkpoint (<checkpoint> >= the next
// id); pending files of the restored checkpoint stay, another subtask may be committing them. Restored subtask
// 0 applies the same rule to the indexes >= the new parallelism (a scale-down leaves nobody else to). Without a
// restore a subtask aborts only its own run's unpublished files of its index (an earlier attempt that failed
// before its first checkpoint).
// Rolling: a new part file per checkpoint, and when a file reaches part_size_bytes.
// Errors: I/O failures throw (the task fails and recovers); a committable whose data is gone (pending file and
// final file both missing; an S3 upload aborted and no object with its ETag) fails loudly naming the file (committed
// data would be lost).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/sink/two_phase_commit_sink.h"

namespace sluice::fs {
class FileSystemRegistry;
class RecoverableWriter;
class RecoverableOutputStream;
}  // namespace sluice::fs

namespace sluice::file {

// A part file closed for commit: fs::CommitRecoverable of the directory's filesystem.
struct FileCommittable {
  std::string final_path;
  uint64_t size_bytes = 0;
  std::vector<uint8_t> state;  // the filesystem's encoding (recoverable_writer.h)
  bool operator==(const FileCommittable&) const = default;
  SLUICE_FIELDS(FileCommittable, final_path, size_bytes, state)
};

// Publishes the files, each through the filesystem `file_systems` (default: local only) serves its path.
// Idempotent.
void commit_part_files(const std::vector<FileCommittable>& committables);
void commit_part_files(const fs::FileSystemRegistry& file_systems, const std::vector<FileCommittable>& committables);
// The same inside `dir`: each committable's file is taken by name in `dir`, whatever directory the path
// recorded in it names. Committables outlive the process (they are kept in checkpoints): a path recorded
// relative to the working directory of the run that wrote it, or an output directory copied or moved since,
// must not make a restore commit into another directory (or fail) - the sink commits in its own directory. (An
// S3 upload cannot move: committing it in another directory fails naming both.)
void commit_part_files_in(const std::string& dir, const std::vector<FileCommittable>& committables);
void commit_part_files_in(const fs::FileSystemRegistry& file_systems, const std::string& dir,
                          const std::vector<FileCommittable>& committables);

// The non-template part of the writer: part files of one subtask.
class TransactionalPartWriter {
 public:
  // next_checkpoint_id: the id of the next checkpoint whose barrier the sink will see (the sink operator's
  // TwoPhaseCommitContext::next_checkpoint_id); read when a part file is opened, so a file's <checkpoint> is
  // the first checkpoint that can pre-commit it, also after checkpoints that never reached the sink.
  // bytes_per_sync: on the local disk, every time this many bytes were written to the part file since the last
  // time, the writer asks the kernel to start writing them back (sync_file_range, no wait; RocksDB's
  // bytes_per_sync), so the fsync at the barrier, on the task thread, waits for at most about this much dirty
  // data. 0 turns it off.
  // parallelism: the sink's parallelism; with `recover`, subtask 0 also aborts leftovers of indexes >= it
  // (0: unknown, only this subtask's index).
  // file_systems: serves `dir` (null: the local disk only).
  TransactionalPartWriter(std::string dir, std::string job_id, int32_t subtask,
                          std::function<int64_t()> next_checkpoint_id, int64_t part_size_bytes, bool recover,
                          const std::vector<FileCommittable>& keep,
                          int64_t bytes_per_sync = kDefaultBytesPerSync, int32_t parallelism = 0,
                          std::shared_ptr<const fs::FileSystemRegistry> file_systems = nullptr);
  static constexpr int64_t kDefaultBytesPerSync = 1 << 20;
  ~TransactionalPartWriter();
  TransactionalPartWriter(const TransactionalPartWriter&) = delete;
  TransactionalPartWriter& operator=(const TransactionalPartWriter&) = delete;
  void append_line(const std::string& line);
  void flush();
  std::vector<FileCommittable> prepare_commit();
  void close() noexcept;

 private:
  void abort_lingering(bool recover, const std::vector<FileCommittable>& keep, int32_t parallelism);
  void open_new();
  void finish_current();  // close for commit
  void write_out();

  std::string dir_, job_id_;
  int32_t subtask_;
  std::function<int64_t()> next_checkpoint_id_;
  int64_t part_size_bytes_;
  std::shared_ptr<fs::RecoverableWriter> writer_;
  int64_t counter_ = 0;  // never reset: unique names even if two files start before the same checkpoint
  std::unique_ptr<fs::RecoverableOutputStream> out_;
  int64_t part_bytes_ = 0;
  std::string base_;  // part-<job>-<subtask>-<checkpoint>-<counter>
  std::string buffer_;
  std::vector<FileCommittable> ready_;  // closed files since the last prepare_commit
};

template <class T>
class TransactionalFileSink final : public TwoPhaseCommittingSink<T, FileCommittable> {
 public:
  using Encoder = std::function<void(const T&, std::string& out)>;
  // `dir`: a local path, file:// or s3:// URI, served by the job's filesystems.
  TransactionalFileSink(std::string dir, Encoder encoder, int64_t part_size_bytes = 128ll << 20)
      : dir_(std::move(dir)), encoder_(std::move(encoder)), part_size_bytes_(part_size_bytes) {}

  std::unique_ptr<PrecommittingSinkWriter<T, FileCommittable>> create_writer(TwoPhaseCommitContext& ctx) const override {
    std::vector<FileCommittable> keep;
    for (const auto& b : ctx.restored_committables_bytes()) {
      auto c = deserialize_bytes<FileCommittable>(b.data(), b.size(), "file sink committable");
      if (!c.is_ok()) throw std::runtime_error(c.status().to_string());
      keep.push_back(std::move(c).value());
    }
    return std::make_unique<Writer>(
        std::make_unique<TransactionalPartWriter>(dir_, ctx.job_id(), ctx.subtask_index(),
                                                  [&ctx] { return ctx.next_checkpoint_id(); }, part_size_bytes_, ctx.is_restored(), keep,
                                                  TransactionalPartWriter::kDefaultBytesPerSync, ctx.parallelism(),
                                                  ctx.file_systems()),
        encoder_);
  }
  // Outside a job: commits on the local disk only.
  std::unique_ptr<Committer<FileCommittable>> create_committer() const override {
    return std::make_unique<FileCommitter>(dir_, nullptr);
  }
  std::unique_ptr<Committer<FileCommittable>> create_subtask_committer(TwoPhaseCommitContext& ctx) const override {
    return std::make_unique<FileCommitter>(dir_, ctx.file_systems());
  }

 private:
  class Writer final : public PrecommittingSinkWriter<T, FileCommittable> {
   public:
    Writer(std::unique_ptr<TransactionalPartWriter> files, Encoder enc) : files_(std::move(files)), encoder_(std::move(enc)) {}
    void write(T&& record) override {
      line_.clear();
      encoder_(record, line_);
      files_->append_line(line_);
    }
    void flush(bool) override { files_->flush(); }
    std::vector<FileCommittable> prepare_commit() override { return files_->prepare_commit(); }
    void close() override { files_->close(); }

   private:
    std::unique_ptr<TransactionalPartWriter> files_;
    Encoder encoder_;
    std::string line_;
  };
  class FileCommitter final : public Committer<FileCommittable> {
   public:
    FileCommitter(std::string dir, std::shared_ptr<const fs::FileSystemRegistry> file_systems)
        : dir_(std::move(dir)), file_systems_(std::move(file_systems)) {}
    void commit(const std::vector<FileCommittable>& c) override {
      if (file_systems_) {
        commit_part_files_in(*file_systems_, dir_, c);
      } else {
        commit_part_files_in(dir_, c);
      }
    }

   private:
    std::string dir_;
    std::shared_ptr<const fs::FileSystemRegistry> file_systems_;
  };

  std::string dir_;
  Encoder encoder_;
  int64_t part_size_bytes_;
};

}  // namespace sluice::file
