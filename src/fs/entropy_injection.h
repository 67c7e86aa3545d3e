// Entropy injection: random characters in the object keys of checkpoint data files, so that an object store that
// partitions its key space by prefix (Amazon S3) spreads a job's many small uploads over many partitions instead of
// throttling one. After Flink's EntropyInjector / EntropyInjectingFileSystem and its docs ("Amazon S3", section
// "Entropy injection for S3 file systems"):
//
//   s3.entropy.key     a marker in the checkpoint directory, e.g. `_entropy_` in `s3://bucket/_entropy_/checkpoints`
//   s3.entropy.length  how many random characters replace it in the path of a data file (default 4, > 0)
//
// A state data file of a checkpoint is written at the directory with the marker's first occurrence replaced by
// `length` random alphanumeric characters (`s3://bucket/x7k2/checkpoints/<job>/chk-3/...`); everything else -
// `_metadata`, the job folder, savepoints - uses the directory with the marker removed
// (`s3://bucket/checkpoints/...`). Only a filesystem that reports an EntropyInjection (FileSystem::entropy_injection:
// S3 with s3.entropy.key set) does this; on any other the marker is an ordinary folder name, as in Flink.
//
// Thread-safety: a value type and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::fs {

class FileSystem;  // file_system.h

struct EntropyInjection {
  std::string key;     // the marker; non-empty, no '/'
  int32_t length = 4;  // random characters per data file path, > 0

  // kInvalidArgument naming the key: "s3.entropy.length: expected > 0, got 0", "s3.entropy.key: '_a/b_' contains
  // '/' (the marker stands for part of one path segment)". `key_option` / `length_option` are the keys' names.
  Status validate(std::string_view key_option, std::string_view length_option) const;
};

// Whether `path` contains `key` (an empty key never matches).
bool has_entropy_key(std::string_view path, std::string_view key);
// `path` with the first occurrence of `key` removed; a segment it leaves empty is dropped with its separator
// ("s3://b/_e_/ck" -> "s3://b/ck", "s3://b/ck_e_" -> "s3://b/ck"). Unchanged when `key` does not occur.
std::string remove_entropy_key(std::string_view path, std::string_view key);
// `path` with the first occurrence of `key` replaced by `entropy` (non-empty). Unchanged when `key` does not occur.
std::string inject_entropy(std::string_view path, std::string_view key, std::string_view entropy);
// `path` without `fs`'s entropy marker when `fs` injects entropy (FileSystem::entropy_injection), else unchanged:
// the spelling of every path but a data file's (a checkpoint's job folder, `_metadata`, a savepoint folder, the
// folder "latest" searches).
std::string remove_entropy_key_of(const FileSystem& fs, std::string_view path);

}  // namespace sluice::fs
