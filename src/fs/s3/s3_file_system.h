// S3FileSystem: the `s3://bucket/key` scheme of fs::FileSystem over the S3 client (s3_client.h), after Flink's
// S3 filesystems (flink-s3-fs-presto / -hadoop), keeping the semantics of fs/file_system.h:
//   - a path is `s3://<bucket>/<key>`; "directories" are key prefixes ending in '/', implied by the objects in
//     them: create_dir, sync_dir and remove_empty_dir of an empty prefix do nothing, stat of a prefix with no
//     object below it is kMissing, and list_dir of it is empty (an empty and a missing directory are one);
//   - write_file is one PutObject (S3 makes the object visible whole or not at all, and durable when it
//     answers); write_file and copy_local_file upload in parallel parts from s3.multipart.threshold on (the
//     object appears on CompleteMultipartUpload, again whole or not at all; one PUT of a large state file
//     is slow and may exhaust a small server); Durability has no meaning here;
//   - digest_file and copy_to_local_file stream the object (ranged GETs), never holding a large object in
//     memory;
//   - remove_all deletes every object below the prefix with DeleteObjects (1,000 keys per request).
// Errors are the client's (kNotFound for a missing key; kInvalidArgument for a missing bucket or refused
// credentials, naming the endpoint and bucket and never the secret; kIOError, retriable, once the client's
// bounded retries are spent), with the s3:// path as context.
//
// Thread-safety: every method may be called from any thread concurrently (the client is thread-safe).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fs/file_system.h"
#include "fs/s3/s3_client.h"
#include "sluice/core/name_source.h"

namespace sluice::s3 {

// Bucket and key of an s3:// path: "s3://b/a/b/" -> {"b", "a/b"}; repeated '/' folded, no leading or trailing
// '/' in the key. kInvalidArgument naming the path when it is not s3:// or has no bucket.
struct S3Location {
  std::string bucket;
  std::string key;
};
Result<S3Location> parse_s3_path(std::string_view path);

class S3FileSystem final : public fs::FileSystem {
 public:
  // `entropy`: s3.entropy.key / s3.entropy.length (validated), or nullopt (off). `names`: where the recoverable
  // writer's leftover object names come from; null: a random source.
  explicit S3FileSystem(std::shared_ptr<S3Client> client, std::optional<fs::EntropyInjection> entropy = std::nullopt,
                        std::shared_ptr<NameSource> names = nullptr);

  std::string_view scheme() const override { return "s3"; }
  Status create_dir(const std::string& path) override;
  Status write_file(const std::string& path, const std::vector<uint8_t>& bytes, fs::Durability durability) override;
  Status sync_dir(const std::string& dir) override;
  Result<std::vector<uint8_t>> read_file(const std::string& path) override;
  Result<fs::FileDigest> digest_file(const std::string& path) override;
  Result<fs::PathKind> stat(const std::string& path) override;
  Result<uint64_t> file_size(const std::string& path) override;
  Result<std::vector<fs::DirEntry>> list_dir(const std::string& dir) override;
  Status remove_file(const std::string& path) override;
  Status remove_empty_dir(const std::string& path) override;
  Status remove_all(const std::string& path) override;
  Result<fs::FileDigest> copy_local_file(const std::string& local_path, const std::string& path,
                                         fs::Durability durability) override;
  Result<fs::FileDigest> copy_to_local_file(const std::string& path, const std::string& local_path,
                                            fs::LocalCopyMode mode) override;

  // s3_recoverable_writer.h: one multipart upload per file.
  Result<std::shared_ptr<fs::RecoverableWriter>> create_recoverable_writer(
      const fs::RecoverableWriterOptions& options) override;

  // Entropy injection into checkpoint data paths (fs/entropy_injection.h), when s3.entropy.key is set.
  const fs::EntropyInjection* entropy_injection() const override { return entropy_ ? &*entropy_ : nullptr; }

  S3Client& client() { return *client_; }

 private:
  std::shared_ptr<S3Client> client_;
  std::optional<fs::EntropyInjection> entropy_;
  std::shared_ptr<NameSource> names_;
};

}  // namespace sluice::s3
