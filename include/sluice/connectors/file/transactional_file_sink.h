// The exactly-once file sink (two-phase commit; Flink's FileSink over its RecoverableWriter). Each subtask writes
// lines to a part file through the recoverable writer of its directory's filesystem (src/fs/recoverable_writer.h):
// on the local disk a hidden in-progress file, renamed to a hidden pending file when it rolls and to its final,
// visible name when the checkpoint after the roll completes; on S3 (`s3://bucket/prefix`) a multipart upload,
// completed when that checkpoint completes. The committable, kept in the checkpoint, is the writer's
// CommitRecoverable. Readers take only finished files (names starting with "part-").
//
// The directory is any path the job's filesystems serve (SinkInitContext::file_systems: a plain path or file://,
// and s3:// configured from the job's s3.* keys; docs/storage.md). Outside a job (no registry) only the local disk;
// an s3:// directory then fails the task naming the scheme.
//
// Rolling (rolling_policy.h; Flink's FileSink "Rolling Policy"). The sink's default is RollingPolicy::
// on_checkpoint(): a part file rolls at every checkpoint and at 128 MiB, so every retained checkpoint stays
// restorable against the same output (Flink's row-format default differs, see below and docs/storage.md). With
// RollingPolicy::defaults() (Flink's DefaultRollingPolicy) a part file rolls at 128 MiB, after 60 s open, or after
// 60 s without a write, and stays open across checkpoints: at a barrier the open file is persisted (RecoverableOutputStream::persist: local fsync;
// S3 the parts uploaded and the rest as a small hidden object) and its ResumeRecoverable, with the file's creation
// time, is the sink's writer state in that checkpoint (TwoPhaseCommittingSink::has_writer_state; an InProgressPart
// per open file). Its data becomes visible only after it rolled and the next checkpoint completed - choose the
// intervals by how stale readers may be; a checkpoint older than the latest may then no longer restore (a file it
// kept open was committed since, as in Flink). RollingPolicy::on_checkpoint() rolls at every checkpoint (and by
// size): output visible one checkpoint after it was written, empty writer state. The end of the input rolls the open file,
// and the final checkpoint commits it.
//
// Restore from checkpoint n: the committables of n are committed by whichever subtask received them, and each
// open file of n's writer state is reopened with RecoverableWriter::recover exactly at the persisted position
// (bytes written after it by the failed run are dropped) by whichever subtask received it (writer state is
// split-distributed: after a scale-down one subtask may receive several, after a scale-up some none). A subtask
// keeps writing one restored file carrying its own index and closes the others for commit; they are committed with
// the next checkpoint. A restored file that can no longer be reopened (it was committed after a later checkpoint
// and the restore is from an older one, or its data was deleted) fails the task naming it: its bytes cannot be
// kept exactly once.
//
// Names are deterministic, so committing twice is harmless and no run mistakes another run's files for its
// own: part-<job id>-<subtask>-<checkpoint>-<counter>, <checkpoint> the first checkpoint that can pre-commit or
// persist the file; the hidden artifacts are named from them. Lingering files (one job per output directory). On
// restore each subtask aborts the unpublished files carrying its own index that the restored state cannot own:
// those of the restored snapshot's lineage (the run that took it and the runs it was restored from:
// TwoPhaseCommitContext::lineage_job_ids) or of its own run, started after the restored checkpoint
// (<checkpoint> >= the next id), that neither its committables nor its writer state hold. Files of any other
// run stay, whatever their names say: they belong to a job this one does not descend from. Unpublished files of the restored checkpoint or earlier stay: committables and writer
// state are split-distributed, so another subtask may be committing or continuing them. Restored subtask 0
// applies the same rule to the indexes >= the new parallelism (a scale-down leaves nobody else to). Without a
// restore a subtask aborts only its own run's unpublished files of its index (an earlier attempt that failed
// before its first checkpoint).
// When the task ends (the job finishes, is cancelled, or fails over), the writer aborts the files it opened that
// no checkpoint it took references (the open file if no barrier persisted it, files rolled since the last
// barrier): no checkpoint can need them. What a checkpoint it took references stays, whether or not that
// checkpoint completed (the sink cannot always know: its completion notice may not have arrived): a later restore
// commits or continues it, or aborts it as above. On a finished job with checkpointing the final checkpoint
// committed everything, so nothing is left; after a cancellation the uploads of the last checkpoint remain until
// the job is restored from it (or a bucket lifecycle rule aborts incomplete uploads).
// Errors: I/O failures throw (the task fails and recovers); a committable whose data is gone (pending file and
// final file both missing; an S3 upload aborted and no object with its ETag) fails loudly naming the file (committed
// data would be lost). Thread-safety: the task thread only (as every sink writer).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/connectors/file/output_folder_claim.h"
#include "sluice/connectors/file/rolling_policy.h"
#include "sluice/core/clock.h"
#include "sluice/core/serializer.h"
#include "sluice/sink/two_phase_commit_sink.h"
#include "sluice/state/operator_state_store.h"

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

// Whether `name` (a file name, no folder) is a finished part file of this sink: exactly
// part-<job id, 32 lowercase hex digits>-<subtask>-<checkpoint>-<counter>, the three numbers decimal. A tool that
// resets an output folder (the demo) removes only such files, never a user's own "part-notes.txt".
bool is_part_file_name(std::string_view name);

// An open part file kept across a checkpoint: the file sink's writer state (Flink's FileWriterBucketState). The
// recoverable is fs::ResumeRecoverable of the directory's filesystem.
struct InProgressPart {
  std::string final_path;
  uint64_t position_bytes = 0;  // bytes persisted; a restore keeps exactly these
  std::vector<uint8_t> state;   // the filesystem's encoding (recoverable_writer.h)
  int64_t creation_time_ms = 0;  // processing time the file was opened (rollover_interval_ms counts from it)
  bool operator==(const InProgressPart&) const = default;
  SLUICE_FIELDS(InProgressPart, final_path, position_bytes, state, creation_time_ms)
};

// What a TransactionalPartWriter is given.
struct PartWriterConfig {
  std::string dir;
  std::string job_id;
  int32_t subtask = 0;
  // The id of the next checkpoint whose barrier the sink will see (TwoPhaseCommitContext::next_checkpoint_id);
  // read when a part file is opened, so a file's <checkpoint> is the first checkpoint that can pre-commit or
  // persist it, also after checkpoints that never reached the sink.
  std::function<int64_t()> next_checkpoint_id;
  RollingPolicy rolling = RollingPolicy::on_checkpoint();
  // Restored from a checkpoint: abort lingering files by the restore rules (see the file comment).
  bool recover = false;
  // With `recover`: the job ids (32 hex digits) of the restored snapshot's lineage; only their files and this
  // run's are aborted.
  std::vector<std::string> lineage_job_ids;
  std::vector<FileCommittable> keep;   // committables the restored checkpoint still owns (any subtask's)
  std::vector<InProgressPart> resume;  // this subtask's share of the restored writer state
  // On the local disk, every time this many bytes were written to the part file since the last time, the writer
  // asks the kernel to start writing them back (sync_file_range, no wait; RocksDB's bytes_per_sync), so the fsync
  // at the barrier, on the task thread, waits for at most about this much dirty data. 0 turns it off.
  int64_t bytes_per_sync = 1 << 20;
  // The sink's parallelism; with `recover`, subtask 0 also aborts leftovers of indexes >= it (0: unknown, only
  // this subtask's index).
  int32_t parallelism = 0;
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;  // serves `dir`; null: the local disk only
  const Clock* clock = nullptr;  // processing time for the rolling policy; null: the system clock
};

// The non-template part of the writer: part files of one subtask. Throws std::runtime_error on I/O failures
// (the task fails and recovers) and on an invalid rolling policy.
class TransactionalPartWriter {
 public:
  explicit TransactionalPartWriter(PartWriterConfig config);
  // Rolls at every checkpoint and at part_size_bytes (RollingPolicy::on_checkpoint), without writer state.
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
  // The input ended: the next prepare_commit() rolls the open file whatever the policy says.
  void end_input();
  // At a barrier: rolls the open file if the policy says so (or the input ended) and returns every file rolled
  // since the last call.
  std::vector<FileCommittable> prepare_commit();
  // At a barrier, after prepare_commit(): persists the open file (if any) and returns it.
  std::vector<InProgressPart> snapshot_state();
  // Releases the open file and aborts the files no checkpoint taken by this writer references (file comment).
  // Best effort: errors are ignored (a restore aborts what is left).
  void close() noexcept;

 private:
  void abort_lingering(const PartWriterConfig& config);
  void resume_restored(const std::vector<InProgressPart>& parts);
  void open_new();
  void finish_current();  // close for commit
  void write_out();
  void abort_unreferenced() noexcept;
  int64_t now_ms() const;
  PartFileInfo current_info() const { return PartFileInfo{created_ms_, last_write_ms_, part_bytes_}; }

  std::string dir_, job_id_;
  int32_t subtask_;
  std::function<int64_t()> next_checkpoint_id_;
  RollingPolicy rolling_;
  const Clock* clock_;
  std::shared_ptr<fs::RecoverableWriter> writer_;
  int64_t counter_ = 0;  // never reset: unique names even if two files start before the same checkpoint
  std::unique_ptr<fs::RecoverableOutputStream> out_;
  std::string current_;  // the open file's final path
  int64_t part_bytes_ = 0;
  int64_t created_ms_ = 0, last_write_ms_ = 0;
  bool end_of_input_ = false;
  std::string buffer_;
  std::vector<FileCommittable> ready_;  // closed files since the last prepare_commit
  std::set<std::string> referenced_;    // file names a checkpoint taken or restored by this writer references
};

// The committer of TransactionalFileSink: commits part files in `dir` (commit_part_files_in), through
// `file_systems` (null: the local disk only).
class FileCommitter final : public Committer<FileCommittable> {
 public:
  FileCommitter(std::string dir, std::shared_ptr<const fs::FileSystemRegistry> file_systems)
      : dir_(std::move(dir)), file_systems_(std::move(file_systems)) {}
  void commit(const std::vector<FileCommittable>& committables) override;

 private:
  std::string dir_;
  std::shared_ptr<const fs::FileSystemRegistry> file_systems_;
};

// The part writer of TransactionalFileSink's subtask: configured from the sink's context (job id, subtask, what a
// restore keeps and resumes). Throws std::runtime_error on a corrupt restored committable or writer state entry.
std::unique_ptr<TransactionalPartWriter> open_part_writer(const std::string& dir, const RollingPolicy& rolling,
                                                          TwoPhaseCommitContext& ctx);
// The writer state entries of the file sink: one serialized InProgressPart each.
std::vector<std::vector<uint8_t>> encode_in_progress_parts(const std::vector<InProgressPart>& parts);

template <class T>
class TransactionalFileSink final : public TwoPhaseCommittingSink<T, FileCommittable> {
 public:
  using Encoder = std::function<void(const T&, std::string& out)>;
  // `dir`: a local path, file:// or s3:// URI, served by the job's filesystems. `rolling`: when part files roll
  // (rolling_policy.h; default: at every checkpoint and at 128 MiB; RollingPolicy::defaults() keeps files open).
  TransactionalFileSink(std::string dir, Encoder encoder, RollingPolicy rolling = RollingPolicy::on_checkpoint())
      : dir_(std::move(dir)), encoder_(std::move(encoder)), rolling_(rolling) {}

  // Whatever the policy: a job that switched to on_checkpoint() must still resume the files a checkpoint taken
  // with another policy kept open (with on_checkpoint() the state is empty: every barrier rolls).
  bool has_writer_state() const override { return true; }

  std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext&) const override {
    return output_folder_claims(dir_);
  }

  std::unique_ptr<PrecommittingSinkWriter<T, FileCommittable>> create_writer(TwoPhaseCommitContext& ctx) const override {
    return std::make_unique<Writer>(open_part_writer(dir_, rolling_, ctx), encoder_);
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
    void flush(bool end_of_input) override {
      files_->flush();
      if (end_of_input) files_->end_input();
    }
    std::vector<FileCommittable> prepare_commit() override { return files_->prepare_commit(); }
    std::vector<std::vector<uint8_t>> snapshot_writer_state(int64_t) override {
      return encode_in_progress_parts(files_->snapshot_state());
    }
    void close() override { files_->close(); }

   private:
    std::unique_ptr<TransactionalPartWriter> files_;
    Encoder encoder_;
    std::string line_;
  };
  std::string dir_;
  Encoder encoder_;
  RollingPolicy rolling_;
};

}  // namespace sluice::file

// The sink's own state types, compiled once in the file connector's library instead of in every program that writes
// files (docs/benchmarks.md "Build time").
namespace sluice {
extern template class detail::CommittableCollector<file::FileCommittable>;
extern template class detail::OperatorListState<std::pair<int64_t, file::FileCommittable>>;
extern template ListState<std::pair<int64_t, file::FileCommittable>>&
OperatorStateStore::get_list<std::pair<int64_t, file::FileCommittable>>(const std::string&, OperatorStateMode);
extern template std::vector<uint8_t> serialize_bytes<file::FileCommittable>(const file::FileCommittable&);
extern template Result<file::FileCommittable> deserialize_bytes<file::FileCommittable>(const uint8_t*, size_t,
                                                                                        std::string_view);
}  // namespace sluice
