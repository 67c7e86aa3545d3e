// S3Client: the object operations Sluice needs from Amazon S3 or an S3-compatible store (s3proxy, Ceph RGW,
// ...), over HTTP with AWS Signature Version 4.
//
// Protocols: the AWS S3 API Reference (PutObject, GetObject, HeadObject, ListObjectsV2, DeleteObject,
// DeleteObjects, CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload,
// ListMultipartUploads, ListParts) and the AWS General Reference on Signature Version 4. Options, retries and
// limits: s3_options.h; which failures are retried: s3_retry_policy.h; which Status each failure becomes:
// s3_errors.h. In short: kNotFound for a missing key or upload, kInvalidArgument for a missing bucket, refused
// credentials (HTTP 403, not retried) and other bad requests, kIOError (retriable) when retriable failures
// (5xx, 429, SlowDown, connection errors, timeouts) outlasted s3.retry.limit retries. Messages name the
// operation, the endpoint, the bucket and key, S3's error code and the attempts, never the secret key.
//
// Keys are S3 object keys ("chk-3/_metadata"), not paths: no leading '/', any UTF-8 that XML can carry.
// Sizes are bytes; offsets count from the start of the object.
//
// Multipart uploads across processes: create_multipart_upload, upload_part, complete_multipart_upload and
// abort_multipart_upload only need the bucket, key and upload id (and the parts' numbers and ETags), so one
// process can upload parts, persist the id and the ETags, and another can complete or abort the upload after a
// restart. Completing twice fails (S3 forgets an upload once it is completed): kNotFound. To tell "already
// completed" from "aborted", compare head_object's ETag with expected_multipart_etag() of the parts (s3_digest.h).
//
// Thread-safety: every method may be called from any number of threads at once. Each request uses its own curl
// easy handle, taken from a small pool that keeps connections alive. upload_file and download_to_file run their
// parts on threads of their own, up to s3.upload.parallelism / s3.download.parallelism per call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fs/s3/s3_options.h"
#include "fs/s3/s3_types.h"
#include "sluice/core/status.h"

namespace sluice::s3 {

// Counters since the client was created, for benchmarks (requests per checkpoint) and metrics.
struct S3ClientStats {
  uint64_t requests = 0;        // HTTP requests sent, retries included
  uint64_t retries = 0;         // requests that repeated a failed one
  uint64_t bytes_sent = 0;      // request bodies
  uint64_t bytes_received = 0;  // response bodies
  uint64_t peak_requests_in_flight = 0;  // most requests this client had open at once
  uint64_t requests_in_flight = 0;       // requests open when stats() was called
};

// Seams for tests: where backoff randomness comes from and how the client waits.
struct S3ClientHooks {
  // Uniform 64-bit numbers for the backoff jitter. Default: SplitMix64 seeded from std::random_device. Called
  // under the client's lock, so it need not be thread-safe.
  std::function<uint64_t()> random;
  // Waits `delay_ms` before a retry. Default: std::this_thread::sleep_for. Called without a lock, possibly from
  // several threads at once.
  std::function<void(int64_t delay_ms)> sleep;
};

// A seeded jitter source for S3ClientHooks::random: equal seeds give equal backoff delays.
std::function<uint64_t()> seeded_random(uint64_t seed);

class S3Client {
 public:
  // kInvalidArgument when `options` do not validate (S3Options::validate). No request is made.
  static Result<std::unique_ptr<S3Client>> create(S3Options options, S3ClientHooks hooks = {});
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  // ---- objects -------------------------------------------------------------------------------------------

  // Creates or replaces the object with `bytes` in one PUT (S3 allows up to 5 GiB; use upload_file above that).
  Status put_object(std::string_view bucket, std::string_view key, std::span<const uint8_t> bytes);

  // Uploads the local file `local_path` to the object: one PUT below s3.multipart.threshold, else a multipart
  // upload whose parts (s3.multipart.size each, larger when more than 10,000 parts would be needed) are sent
  // s3.upload.parallelism at a time; on any failure the upload is aborted. Returns the file's size in bytes.
  // Memory: one part buffer per part in flight (s3.upload.parallelism x s3.multipart.size, 32 MiB by default).
  // kNotFound naming `local_path` if it does not exist; kIOError naming it if it cannot be read.
  Result<uint64_t> upload_file(std::string_view bucket, std::string_view key, const std::string& local_path);

  // Creates or replaces the object with `bytes` as upload_file does a file's: one PUT below
  // s3.multipart.threshold, else a multipart upload in parallel parts (no copy: parts are slices of `bytes`),
  // aborted on any failure.
  Status upload_bytes(std::string_view bucket, std::string_view key, std::span<const uint8_t> bytes);

  // The whole object. kNotFound if there is no such key.
  Result<std::vector<uint8_t>> get_object(std::string_view bucket, std::string_view key);

  // Bytes [offset_bytes, offset_bytes + length_bytes) of the object; fewer when the object ends before, none
  // when length_bytes is 0. kInvalidArgument (S3's InvalidRange) when offset_bytes is at or past the end of a
  // non-empty object; kNotFound if there is no such key.
  Result<std::vector<uint8_t>> get_object_range(std::string_view bucket, std::string_view key,
                                                uint64_t offset_bytes, uint64_t length_bytes);

  // Writes the object to the local file `local_path` (created or truncated; not fsynced). Objects larger than
  // s3.multipart.size are fetched as ranged GETs of that size, s3.download.parallelism at a time, each
  // conditional on the ETag the first HEAD saw (kFailedPrecondition if the object changes meanwhile). On
  // failure the partly written file is removed. Returns the object's size in bytes. Memory: one range per range
  // in flight (s3.download.parallelism x s3.multipart.size).
  // kNotFound if there is no such key; kIOError naming `local_path` if it cannot be written.
  Result<uint64_t> download_to_file(std::string_view bucket, std::string_view key, const std::string& local_path);

  // Size and ETag. kNotFound if there is no such key (S3 answers HEAD without a body, so a missing bucket is
  // reported as kNotFound too).
  Result<ObjectHead> head_object(std::string_view bucket, std::string_view key);

  // One ListObjectsV2 page: keys starting with `prefix`, those containing `delimiter` after the prefix rolled up
  // into common prefixes ("" = no delimiter), starting at `continuation_token` ("" = the first page), at most
  // `max_keys` entries (1..1000, else kInvalidArgument; S3 may return fewer).
  Result<ListObjectsPage> list_objects_page(std::string_view bucket, std::string_view prefix,
                                            std::string_view delimiter, std::string_view continuation_token,
                                            int32_t max_keys = 1000);

  // Every page of the listing above, following continuation tokens. kCorruption if the store repeats a
  // continuation token (it would never end).
  Result<ListObjectsResult> list_objects(std::string_view bucket, std::string_view prefix,
                                         std::string_view delimiter = "", int32_t max_keys_per_page = 1000);

  // Deletes the object; ok whether or not it existed (S3's semantics).
  Status delete_object(std::string_view bucket, std::string_view key);

  // Deletes `keys` with DeleteObjects, up to 1,000 keys per request. Returns the keys S3 could not delete with
  // S3's error for each (empty: all deleted; keys that did not exist count as deleted). A Status error means a
  // whole request failed; batches before it were deleted.
  Result<std::vector<DeleteObjectError>> delete_objects(std::string_view bucket, const std::vector<std::string>& keys);

  // ---- multipart uploads ---------------------------------------------------------------------------------

  // Starts a multipart upload of `key`; returns its upload id. Nothing is visible under `key` until completion.
  Result<std::string> create_multipart_upload(std::string_view bucket, std::string_view key);

  // Uploads part `part_number` (1..10,000) of the upload; returns the part's ETag (quoted, as S3 returns it).
  // Every part but the last must be at least 5 MiB (S3 checks at completion). Uploading a part number again
  // replaces that part. kNotFound if the upload is unknown; kInvalidArgument for a part number out of range.
  Result<std::string> upload_part(std::string_view bucket, std::string_view key, std::string_view upload_id,
                                  int32_t part_number, std::span<const uint8_t> bytes);

  // Completes the upload from `parts` (ascending part numbers, each with the ETag upload_part returned): the
  // object appears atomically. Returns the object's ETag. kInvalidArgument for no parts or unordered part
  // numbers, or when S3 rejects the parts (InvalidPart, EntityTooSmall); kNotFound if the upload is unknown
  // (completed before, aborted, or never created). If a retried attempt finds the upload gone, the object's
  // ETag is compared with expected_multipart_etag(parts): equal means an earlier attempt completed it, and
  // the call succeeds.
  Result<std::string> complete_multipart_upload(std::string_view bucket, std::string_view key,
                                                std::string_view upload_id, const std::vector<CompletedPart>& parts);

  // Aborts the upload and frees its parts. kNotFound if the upload is unknown.
  Status abort_multipart_upload(std::string_view bucket, std::string_view key, std::string_view upload_id);

  // Uploads created and neither completed nor aborted, of keys starting with `prefix`, in key order.
  Result<std::vector<MultipartUploadInfo>> list_multipart_uploads(std::string_view bucket, std::string_view prefix);

  // The parts uploaded so far, ascending. kNotFound if the upload is unknown.
  Result<std::vector<PartInfo>> list_parts(std::string_view bucket, std::string_view key, std::string_view upload_id);

  // ---- introspection -------------------------------------------------------------------------------------

  S3ClientStats stats() const;
  const S3Options& options() const;

 private:
  struct Impl;
  explicit S3Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::s3
