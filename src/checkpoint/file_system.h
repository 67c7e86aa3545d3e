// FileSystem: the few file operations checkpoint storage needs, behind one small interface so tests can inject
// failures and crashes (FaultInjectionFileSystem; STYLE.md habit 6: a filesystem that forgets unsynced writes).
//
// Paths are plain strings ('/'-separated). Every error names the path and is kIOError (retriable) or
// kNotFound (the path does not exist). Writes are not durable until synced: `write_file(..., kSync)` makes
// the bytes durable, `sync_dir(dir)` makes the names created, renamed or removed in `dir` durable
// (POSIX: fsync of the file, fsync of the directory).
//
// Thread-safety: implementations may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::checkpoint {

enum class Durability : uint8_t {
  kNone,  // leave the bytes in the page cache
  kSync,  // fsync the file before returning
};

enum class PathKind : uint8_t { kMissing, kFile, kDirectory, kOther };

struct DirEntry {
  std::string name;  // not a path
  PathKind kind = PathKind::kOther;
  bool operator==(const DirEntry&) const = default;
};

// Size and XXH3-64 of a file's bytes, computed while streaming (no whole-file buffer).
struct FileDigest {
  uint64_t size_bytes = 0;
  uint64_t checksum = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // Creates one directory level; ok if it already exists as a directory. The parent must exist.
  virtual Status create_dir(const std::string& path) = 0;
  // Creates or truncates `path` and writes `bytes`.
  virtual Status write_file(const std::string& path, const std::vector<uint8_t>& bytes, Durability durability) = 0;
  // Makes the directory entries of `dir` durable.
  virtual Status sync_dir(const std::string& dir) = 0;
  // Atomically renames a file; replaces `to` if it exists.
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  // kNotFound naming the path if it does not exist.
  virtual Result<std::vector<uint8_t>> read_file(const std::string& path) = 0;
  virtual Result<FileDigest> digest_file(const std::string& path) = 0;
  virtual Result<PathKind> stat(const std::string& path) = 0;
  // The size of a file without reading it (one stat). kNotFound naming the path if it does not exist. The
  // default streams the file through digest_file (correct, slow); the POSIX filesystem stats it.
  virtual Result<uint64_t> file_size(const std::string& path);
  // Entries of a directory (no "." or ".."), sorted by name.
  virtual Result<std::vector<DirEntry>> list_dir(const std::string& dir) = 0;
  // Removes one file; ok if it does not exist.
  virtual Status remove_file(const std::string& path) = 0;
  // Removes an empty directory; ok if it does not exist; kFailedPrecondition if it is not empty.
  virtual Status remove_empty_dir(const std::string& path) = 0;
  // Removes a directory and everything below it; ok if it does not exist.
  virtual Status remove_all(const std::string& path) = 0;
  // Copies the local file `local_path` (a path on this machine's disk, e.g. a RocksDB checkpoint's SST) to
  // `path` (created or truncated) and returns the size and XXH3-64 of the bytes written. kNotFound naming
  // `local_path` if it is missing. The default reads the whole file and calls write_file (so a test filesystem
  // sees and can fail the write); the POSIX filesystem streams it.
  virtual Result<FileDigest> copy_local_file(const std::string& local_path, const std::string& path,
                                             Durability durability);
};

// The local POSIX filesystem (open/write/fsync/rename, std::filesystem for listing and removal).
std::shared_ptr<FileSystem> local_file_system();

// `a/b` without doubling separators.
std::string join_path(std::string_view a, std::string_view b);
// The last path component ("chk-3" of "/ck/job/chk-3/"), ignoring trailing slashes.
std::string path_file_name(std::string_view path);
// Everything before the last component ("/ck/job" of "/ck/job/chk-3"); "" for a single component, "/" for "/x".
std::string path_parent(std::string_view path);

// mkdir -p that survives a crash: creates each missing level and syncs its parent directory, so a created
// directory is durable once this returns.
Status create_directories_durable(FileSystem& fs, const std::string& path);

}  // namespace sluice::checkpoint
