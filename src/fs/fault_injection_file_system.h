// FaultInjectionFileSystem: a FileSystem wrapper for crash-consistency and failure tests (after RocksDB's
// fault-injection filesystem). It runs every operation on the wrapped filesystem and remembers what is not yet
// durable, so a test can "pull the plug" and see only what a real machine would keep:
//   - bytes written without Durability::kSync are lost (the file is deleted),
//   - a name created or replaced (a file published by write_file, a directory) in a directory that has not
//     been synced since is undone (in reverse order; the bytes a replaced file held come back).
// Removals are treated as durable at once (a simplification: tests check that data survives, not that garbage
// stays deleted). Paths must be spelled consistently (as the storage code does with join_path).
//
// It also fails chosen operations with kIOError, which is how a test "kills the process" between two steps:
// fail the step, then call drop_unsynced().
//
// A hook, called before every operation (on the caller's thread, no lock held), lets a test hold one thread at an
// exact step, e.g. a checkpoint writer between its "is this checkpoint discarded?" check and its mkdir.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fs/file_system.h"

namespace sluice::fs {

enum class FileOp : uint8_t {
  kCreateDir,
  kWriteFile,
  kSyncDir,
  kRead,  // read_file, digest_file and copy_to_local_file
  kRemove,  // remove_file, remove_empty_dir, remove_all
};

class FaultInjectionFileSystem final : public FileSystem {
 public:
  explicit FaultInjectionFileSystem(std::shared_ptr<FileSystem> base = local_file_system());

  // After `skip` matching operations have run normally, the next `count` operations of kind `op` on a path
  // containing `path_substring` fail with kIOError without touching the
  // filesystem. count < 0: every such operation, until cleared.
  void inject_failure(FileOp op, std::string path_substring, int count = 1, int skip = 0);
  void clear_failures();
  // Simulates a power loss (see the file comment), then forgets all pending state.
  Status drop_unsynced();
  // Operations of a kind attempted so far (including failed ones).
  int64_t count(FileOp op) const;
  // Called with the operation and its path before every operation that can fail (not stat, list_dir or
  // file_size); may block. Empty: no hook. Set it before the threads that use this filesystem start.
  using Hook = std::function<void(FileOp op, const std::string& path)>;
  void set_hook(Hook hook);

  std::string_view scheme() const override { return base_->scheme(); }
  // The base's entropy injection (S3's, when configured): a wrapped S3 keeps its checkpoint layout.
  const EntropyInjection* entropy_injection() const override { return base_->entropy_injection(); }
  Status create_dir(const std::string& path) override;
  Status write_file(const std::string& path, const std::vector<uint8_t>& bytes, Durability durability) override;
  Status sync_dir(const std::string& dir) override;
  Result<std::vector<uint8_t>> read_file(const std::string& path) override;
  Result<FileDigest> digest_file(const std::string& path) override;
  Result<PathKind> stat(const std::string& path) override;
  Result<uint64_t> file_size(const std::string& path) override;
  Result<std::vector<DirEntry>> list_dir(const std::string& dir) override;
  Status remove_file(const std::string& path) override;
  Status remove_empty_dir(const std::string& path) override;
  Status remove_all(const std::string& path) override;

 private:
  struct Fault {
    FileOp op;
    std::string path_substring;
    int remaining;  // < 0: unlimited
    int skip;       // matching operations still to let through
  };
  // A directory entry change not yet made durable by sync_dir(dir).
  struct PendingEntry {
    std::string dir;
    std::string path;                               // created or replaced
    std::optional<std::vector<uint8_t>> displaced;  // the bytes a replaced file held
  };

  Status check_fault(FileOp op, const std::string& path);
  bool exists(const std::string& path);

  std::shared_ptr<FileSystem> base_;
  mutable std::mutex mu_;
  std::vector<Fault> faults_;
  Hook hook_;
  std::set<std::string> unsynced_data_;
  std::vector<PendingEntry> pending_;
  int64_t counts_[5] = {};
};

}  // namespace sluice::fs
