// Incremental snapshots of the RocksDB keyed state backend (DESIGN.md section 3 "Incremental (RocksDB)"; the idea of
// Flink's RocksIncrementalSnapshotStrategy and RocksDBIncrementalRestoreOperation). The state layer only deals with
// local files; the runtime uploads them to checkpoint storage and tells the snapshot where they went.
//
// Snapshot: the synchronous part (task thread) flushes the memtables and takes a native RocksDB checkpoint (hard
// links of the immutable SST files plus copies of MANIFEST, CURRENT, OPTIONS) into a per-checkpoint local folder.
// It then splits the SST files into those a *completed* checkpoint of this backend already uploaded (reused:
// the snapshot carries where they are) and the rest (to upload). The asynchronous part uploads and calls
// set_uploaded(); when the checkpoint completes (notify_checkpoint_complete on the backend), that mapping
// becomes what the next snapshot reuses. Until then, files are uploaded again: a backend never refers to an
// upload of a checkpoint that may still be aborted (whose files the storage then deletes).
//
// Restore: the files are copied from checkpoint storage through its FileSystem (on a local disk SST files are
// hard-linked; from S3 they are downloaded, several at a time) into the new working directory, and their size
// and XXH3-64 checksum are checked, and the database is opened. Rescaling: a
// handle whose key-group range covers this backend's is opened directly and trimmed with delete-range; other
// handles are opened aside and the intersecting key groups copied in.
//
// Thread-safety: see each type.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/state/key_group.h"
#include "sluice/state/key_group_snapshot.h"

namespace sluice::fs {
class FileSystem;  // src/fs/file_system.h
}  // namespace sluice::fs

namespace sluice {

// Whether a snapshot may refer to SST files that completed checkpoints uploaded (an incremental checkpoint), or
// lists every SST file to upload (a native savepoint: self-contained, it never refers to a checkpoint's shared/
// files; its uploads are not remembered for reuse either, as they live in the savepoint's folder).
enum class SnapshotFileReuse : uint8_t { kReuseCompletedUploads, kUploadEverything };

// A file of the local native checkpoint.
struct LocalSnapshotFile {
  std::string name;  // "000012.sst", "MANIFEST-000005", "CURRENT", "OPTIONS-000007"
  std::string path;  // absolute local path
  uint64_t size_bytes = 0;
};

// Where an uploaded shared file lives in checkpoint storage (path relative to the job's checkpoint directory).
struct SharedFileRef {
  std::string relative_path;
  uint64_t size_bytes = 0;
  uint64_t checksum = 0;  // XXH3-64
  bool operator==(const SharedFileRef&) const = default;
};

// What an incremental handle records about the states (canonical encoding, key_group_snapshot.h's conventions):
//   "SLSM", varint version (1), varint max_parallelism, snapshot key_serializer, varint n,
//   n x (string name, u8 kind, snapshot namespace_serializer, varint m, m x snapshot value serializer).
struct IncrementalStateMeta {
  int32_t max_parallelism = 0;
  TypeSerializerSnapshot key_serializer;
  std::vector<StateMetaInfo> states;  // sorted by name
  bool operator==(const IncrementalStateMeta&) const = default;
};
std::vector<uint8_t> encode_incremental_state_meta(const IncrementalStateMeta& meta);
// kCorruption naming `what` when the bytes do not decode.
Result<IncrementalStateMeta> decode_incremental_state_meta(const std::vector<uint8_t>& bytes, std::string_view what);

// The synchronous part's result. Lifetime: release() (or the destructor) deletes the local checkpoint folder;
// it may outlive the backend. Thread-safety: the fields are immutable after creation; set_uploaded and release
// may be called from any thread.
class IncrementalKeyedSnapshot {
 public:
  virtual ~IncrementalKeyedSnapshot() = default;
  IncrementalKeyedSnapshot(const IncrementalKeyedSnapshot&) = delete;
  IncrementalKeyedSnapshot& operator=(const IncrementalKeyedSnapshot&) = delete;

  KeyGroupRange range;
  std::string backend_id;  // 32 hex digits, one per backend instance
  CheckpointId checkpoint_id{0};
  std::vector<uint8_t> state_meta;               // encode_incremental_state_meta
  std::vector<LocalSnapshotFile> shared_to_upload;       // SST files no completed checkpoint uploaded
  std::map<std::string, SharedFileRef> shared_reused;    // SST local name -> its upload by a completed checkpoint
  std::vector<LocalSnapshotFile> private_files;          // MANIFEST, CURRENT, OPTIONS, ...

  // Every SST of this snapshot -> where it is now (the reused ones and the new uploads). The backend reuses
  // them after this checkpoint completes.
  virtual void set_uploaded(std::map<std::string, SharedFileRef> shared) = 0;
  virtual void release() = 0;

 protected:
  IncrementalKeyedSnapshot() = default;
};

// One file of a handle to restore.
struct IncrementalRestoreFile {
  std::string local_name;
  std::string path;         // where to read it: a path or URI of `file_system`
  uint64_t size_bytes = 0;
  uint64_t checksum = 0;    // XXH3-64
  // For shared files: the path relative to the restoring job's checkpoint directory, if the restoring job may
  // refer to the file in its own checkpoints (same job, or a claimed checkpoint beside it); empty otherwise.
  std::string reusable_path;
  // Serves `path` (the checkpoint storage's filesystem: local disk or S3); null means the local disk.
  std::shared_ptr<fs::FileSystem> file_system;
};

// An incremental handle as the runtime resolved it for restore.
struct IncrementalRestoreHandle {
  KeyGroupRange range;
  std::string backend_id;
  CheckpointId checkpoint_id{0};
  std::vector<uint8_t> state_meta;
  std::vector<IncrementalRestoreFile> shared_files;
  std::vector<IncrementalRestoreFile> private_files;
  std::string what;  // names the handle in errors: "checkpoint 7 operator 'x' subtask 1"
};

}  // namespace sluice
