// RecoverableWriter: files written over a long time that survive a failure of the writing process, for
// exactly-once sinks (after Flink's RecoverableWriter / RecoverableFsDataOutputStream and its S3 and local
// implementations; the ideas, not the code).
//
// Lifecycle of one file:
//   open(target) -> stream; stream.write(...)*; at a checkpoint either
//     stream.persist()          -> ResumeRecoverable (the file stays open; recover() continues it exactly there)
//   or
//     stream.close_for_commit() -> CommitRecoverable (no more bytes; commit() publishes the file);
//   commit(committable) makes the file visible under `target`, whole, with exactly the bytes written.
// Until commit nothing is visible under `target` (local: a hidden sibling file; S3: a multipart upload).
//
// Guarantees:
//   - persist() returns only once every byte written so far is durable (local: fsync; S3: uploaded);
//   - recover(r) reopens the file at r.position_bytes: every byte before it is kept, every byte written after
//     that persist (by a run that then failed) is dropped (local: truncate; S3: the parts recorded, the bytes
//     held as a leftover object, and nothing else); this holds also after the file was closed for commit by that
//     run, as long as it was not committed (a restore from the checkpoint before the roll);
//   - commit() is idempotent: committing a committable whose file was published before (a repeated
//     notification, a second restore from the same checkpoint) succeeds and changes nothing; a commit that
//     cannot be done (the hidden data is gone and the file is not there) is kNotFound naming the target;
//   - the hidden artifacts (in-progress files, uploads, leftover objects) of a target live next to it and are
//     named from the target's file name, which callers make unique per job (the file sink puts the job id in
//     it); list_in_progress / abort let a caller clean up only what its job created.
//
// Recoverables are plain values, serializable (SLUICE_FIELDS) into a checkpoint and valid in another process:
// `state` is the scheme's own encoding, read only by a writer of the same scheme.
//
// Errors: Status codes as fs/file_system.h (kIOError retriable; kNotFound for data that is gone; kCorruption
// for a hidden file shorter than a recoverable says; kInvalidArgument for a recoverable of another scheme).
// Thread-safety: a writer may be used from several threads; one stream from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/core/status.h"

namespace sluice::fs {

// Where an open file can be continued after a failure.
struct ResumeRecoverable {
  std::string target_path;     // the file's final path
  uint64_t position_bytes = 0;  // bytes written and kept
  std::vector<uint8_t> state;  // the scheme's encoding
  bool operator==(const ResumeRecoverable&) const = default;
  SLUICE_FIELDS(ResumeRecoverable, target_path, position_bytes, state)
};

// A closed file ready to be published.
struct CommitRecoverable {
  std::string target_path;
  uint64_t size_bytes = 0;
  std::vector<uint8_t> state;
  bool operator==(const CommitRecoverable&) const = default;
  SLUICE_FIELDS(CommitRecoverable, target_path, size_bytes, state)
};

// How a filesystem's recoverable writer writes (FileSystem::create_recoverable_writer).
struct RecoverableWriterOptions {
  // Local disk: every this many bytes written, start the kernel's writeback of them without waiting
  // (local_recoverable_writer.h). 0 turns it off. Object stores upload as they go and ignore it.
  int64_t bytes_per_sync = 1 << 20;
};

// A hidden artifact of a file not yet published, as list_in_progress finds it.
struct InProgressFile {
  enum class Stage : uint8_t {
    kInProgress,  // still being written (local: .inprogress file)
    kPending,     // closed for commit (local: .pending file)
    kUnknown,     // the store cannot tell (S3: a multipart upload either way)
  };
  std::string target_path;
  Stage stage = Stage::kUnknown;
  std::string handle;  // what abort() removes (a path, an upload id)
  bool operator==(const InProgressFile&) const = default;
};

class RecoverableOutputStream {
 public:
  virtual ~RecoverableOutputStream() = default;
  virtual Status write(std::span<const uint8_t> bytes) = 0;
  // Bytes written since the file was opened (including those a recovery kept).
  virtual uint64_t position_bytes() const = 0;
  // Makes every byte written durable and returns where to continue from (see the file comment).
  virtual Result<ResumeRecoverable> persist() = 0;
  // Makes every byte durable and ends the file; the stream accepts nothing more.
  virtual Result<CommitRecoverable> close_for_commit() = 0;
  // Releases the stream without ending the file: its hidden data stays for a recovery or abort(). When it
  // returns, no write of the stream is still under way (an abort() after it sees everything it wrote).
  virtual void close() noexcept = 0;
};

class RecoverableWriter {
 public:
  virtual ~RecoverableWriter() = default;
  // Starts a new file that commit() will publish as `target_path`. Replaces hidden data of an earlier open of
  // the same target.
  virtual Result<std::unique_ptr<RecoverableOutputStream>> open(const std::string& target_path) = 0;
  // Continues a file from a persist() (possibly of another process). kNotFound naming the target when its
  // hidden data is gone (committed, aborted, deleted).
  virtual Result<std::unique_ptr<RecoverableOutputStream>> recover(const ResumeRecoverable& resumable) = 0;
  // Publishes the file (idempotent, see the file comment).
  virtual Status commit(const CommitRecoverable& committable) = 0;
  // Hidden artifacts of unpublished files directly in `dir` (not below it), in target order.
  virtual Result<std::vector<InProgressFile>> list_in_progress(const std::string& dir) = 0;
  // Removes one artifact list_in_progress returned (and whatever else the file holds, e.g. S3 leftover
  // objects); ok if it is gone already.
  virtual Status abort(const InProgressFile& file) = 0;
};

}  // namespace sluice::fs
