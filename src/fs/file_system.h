// FileSystem: the file operations that checkpoint storage, savepoints, restore and the file connectors need,
// behind one small interface with one implementation per URI scheme (registry: file_system_registry.h), so the
// same code writes to a local disk or to an object store, and tests can inject failures and crashes
// (FaultInjectionFileSystem; STYLE.md habit 6). After Flink's org.apache.flink.core.fs.FileSystem.
//
// Paths are strings: a plain path or `file:///abs/path` on the local disk, `s3://bucket/key` on S3; '/'
// separates levels in both (path.h joins and splits them without crossing a URI's authority).
//
// The semantics are the ones that hold on an object store, so code written against this interface is correct
// on every scheme:
//   - no rename, no append: a file is written once, whole. write_file and copy_local_file publish atomically:
//     a reader sees the complete new bytes or nothing (no half-written file under the final name). Callers
//     write each file under a unique name; the one commit point of a checkpoint is its `_metadata`, written last.
//   - directories are implied by the files in them on an object store: create_dir and sync_dir succeed there
//     without doing anything, and a directory with no file in it may not exist (stat says kMissing).
//   - durability: on an object store a file is durable once write_file returned ok. On a local disk bytes
//     become durable with Durability::kSync (fsync before they are published), and names created or removed
//     in a directory become durable with sync_dir(dir) (POSIX: fsync of the directory).
//
// Every error names the path: kNotFound (the path does not exist), kIOError (retriable: the disk or the
// server failed), kPermissionDenied-like failures as kFailedPrecondition (not retriable: a retry cannot help).
//
// Thread-safety: implementations may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fs/entropy_injection.h"
#include "sluice/core/status.h"

namespace sluice::fs {

class RecoverableWriter;  // recoverable_writer.h
struct RecoverableWriterOptions;

enum class Durability : uint8_t {
  kNone,  // local disk: leave the bytes in the page cache (lost in a power loss)
  kSync,  // local disk: fsync the bytes before the file is published
};

enum class PathKind : uint8_t { kMissing, kFile, kDirectory, kOther };

struct DirEntry {
  std::string name;  // not a path
  PathKind kind = PathKind::kOther;
  bool operator==(const DirEntry&) const = default;
};

// Size and XXH3-64 of a file's bytes, computed while streaming (no whole-file buffer).
// How copy_to_local_file may make the local copy.
enum class LocalCopyMode : uint8_t {
  kIndependent,      // a copy of the bytes the caller may modify
  kLinkIfPossible,   // a hard link where the scheme allows it (local disk): the caller never modifies the file
};

struct FileDigest {
  uint64_t size_bytes = 0;
  uint64_t checksum = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // The URI scheme this filesystem serves ("file", "s3"), for messages and scheme checks.
  virtual std::string_view scheme() const = 0;
  // Creates one directory level; ok if it already exists as a directory. The parent must exist. A no-op on
  // an object store.
  virtual Status create_dir(const std::string& path) = 0;
  // Publishes `bytes` as `path` atomically (see the file comment), replacing a file of that name.
  virtual Status write_file(const std::string& path, const std::vector<uint8_t>& bytes, Durability durability) = 0;
  // Makes the directory entries of `dir` durable. A no-op on an object store.
  virtual Status sync_dir(const std::string& dir) = 0;
  // kNotFound naming the path if it does not exist.
  virtual Result<std::vector<uint8_t>> read_file(const std::string& path) = 0;
  virtual Result<FileDigest> digest_file(const std::string& path) = 0;
  virtual Result<PathKind> stat(const std::string& path) = 0;
  // The size of a file without reading it (one stat or HEAD). kNotFound naming the path if it does not exist.
  // The default streams the file through digest_file (correct, slow).
  virtual Result<uint64_t> file_size(const std::string& path);
  // Entries of a directory (no "." or ".."), sorted by name. An object store lists the common prefixes below
  // `dir` as directories.
  virtual Result<std::vector<DirEntry>> list_dir(const std::string& dir) = 0;
  // Removes one file; ok if it does not exist.
  virtual Status remove_file(const std::string& path) = 0;
  // Removes an empty directory; ok if it does not exist; kFailedPrecondition if it is not empty. On an object
  // store: ok when nothing is below it, else kFailedPrecondition.
  virtual Status remove_empty_dir(const std::string& path) = 0;
  // Removes a directory and everything below it; ok if it does not exist.
  virtual Status remove_all(const std::string& path) = 0;
  // Publishes the local file `local_path` (a path on this machine's disk, e.g. a RocksDB checkpoint's SST) as
  // `path`, atomically as write_file does, and returns the size and XXH3-64 of the bytes written. kNotFound
  // naming `local_path` if it is missing. The default reads the whole file and calls write_file (so a test
  // filesystem sees and can fail the write); the local filesystem streams it, S3 uploads it in parts.
  virtual Result<FileDigest> copy_local_file(const std::string& local_path, const std::string& path,
                                             Durability durability);
  // Copies `path` to the local file `local_path` (created or replaced; not synced: a restore's working copy) and
  // returns the size and XXH3-64 of its bytes. kNotFound naming `path` if it is missing. The default reads the
  // whole file; the local filesystem hard-links for kLinkIfPossible, S3 downloads ranges in parallel.
  virtual Result<FileDigest> copy_to_local_file(const std::string& path, const std::string& local_path,
                                                LocalCopyMode mode = LocalCopyMode::kIndependent);
  // The writer of files that survive a failure of the writing process (recoverable_writer.h), for
  // exactly-once sinks. kFailedPrecondition naming the scheme where there is none (the default).
  virtual Result<std::shared_ptr<RecoverableWriter>> create_recoverable_writer(const RecoverableWriterOptions& options);
  // Entropy injection for checkpoint data files (entropy_injection.h; Flink's EntropyInjectingFileSystem): the
  // marker and length this filesystem was configured with; nullptr where it does none (the default, the local
  // disk: there the marker is an ordinary folder name). Fixed for the filesystem's life.
  virtual const EntropyInjection* entropy_injection() const { return nullptr; }
};

// The local POSIX filesystem (open/write/fsync/rename, std::filesystem for listing and removal); accepts plain
// paths and `file://` URIs. One shared instance.
std::shared_ptr<FileSystem> local_file_system();

// mkdir -p that survives a crash: creates each missing level and syncs its parent directory, so a created
// directory is durable once this returns. On an object store it does nothing (directories are implied).
Status create_directories_durable(FileSystem& fs, const std::string& path);

}  // namespace sluice::fs
