// FileSystemRegistry: which FileSystem serves a path, by its URI scheme (Flink's FileSystem.get(URI) and its
// scheme factories, as an object passed to whoever resolves paths instead of a process-wide singleton).
//
// Plain paths and `file://` go to the local filesystem, which every registry has. Other schemes are registered
// with a factory that runs on the first path of that scheme (so a job that never touches s3:// needs no S3
// settings), and its filesystem is kept for later paths. A path whose scheme has no registration is refused,
// naming the path, its scheme and the supported schemes: a path is never taken for a local folder named
// "s3:".
//
// Thread-safety: register_scheme before sharing; for_path may be called from any thread concurrently. Copies
// share the filesystems already created.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "sluice/core/status.h"

namespace sluice::fs {

class FileSystemRegistry {
 public:
  using Factory = std::function<Result<std::shared_ptr<FileSystem>>()>;

  // A registry with the local filesystem ("file" and plain paths).
  FileSystemRegistry();

  // Serves `scheme` (lower case, e.g. "s3") with what `factory` creates on first use; replaces an earlier
  // registration of the same scheme.
  void register_scheme(const std::string& scheme, Factory factory);
  // Serves `scheme` with `fs` (tests: a FaultInjectionFileSystem over the local disk or S3).
  void register_file_system(const std::string& scheme, std::shared_ptr<FileSystem> fs);

  // The filesystem of `path`. kInvalidArgument for an unsupported scheme ("unsupported URI scheme 'hdfs' in
  // 'hdfs:///ck' (supported: file, s3)") or an empty path; the factory's error (e.g. a missing S3 endpoint)
  // with the path as context.
  Result<std::shared_ptr<FileSystem>> for_path(const std::string& path) const;
  // Ok when `path`'s scheme is supported (without creating its filesystem); the same error as for_path else.
  // `what` names the input in the error ("execution.checkpointing.dir").
  Status check_supported(const std::string& path, const std::string& what) const;
  // The registered schemes, sorted ("file", "s3").
  std::vector<std::string> schemes() const;

 private:
  struct Entry {
    Factory factory;
    std::shared_ptr<FileSystem> fs;  // created on first use
  };
  struct State {
    std::mutex mu;
    std::map<std::string, Entry> entries;
  };
  std::shared_ptr<State> state_;
};

}  // namespace sluice::fs
