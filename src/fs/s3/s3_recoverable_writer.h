// The recoverable writer of `s3://bucket/key` (fs/recoverable_writer.h), after the idea of Flink's
// S3RecoverableWriter: one multipart upload per file, so nothing is visible under the key before commit.
//
//   - write() buffers; every full part (s3.multipart.size, at least S3's 5 MiB minimum) is sent in the
//     background, up to s3.upload.parallelism parts of a file at once (s3_part_pipeline.h), while write() returns
//     to take the next bytes. A part that fails (after the client's retries) fails the next write(), persist()
//     or close_for_commit().
//   - persist() waits for the parts in flight, uploads the buffered bytes below a part's size as a small object
//     of their own, the leftover `<dir>/.<name>.leftover-<position>-<nonce>`, and returns a ResumeRecoverable
//     naming the bucket, key, upload id, the number, ETag and size of every part so far, and the leftover object
//     and its size.
//   - recover() checks that the upload still exists (ListParts), downloads the leftover into the buffer and
//     continues the same upload with the next part number; parts a failed run uploaded after the persist are
//     replaced or left out of the completion.
//   - close_for_commit() uploads the buffer as the last part (S3 allows it to be small) and waits for every part.
//   - close() (giving the file up) waits for the parts in flight and drops them, so an abort() after it is never
//     overtaken by a part of the same upload.
//   - commit() is CompleteMultipartUpload with the recorded parts. When S3 no longer knows the upload, the object
//     is taken as committed before when it exists with the ETag those parts give (expected_multipart_etag,
//     s3_digest.h); else kNotFound naming the s3:// path and the upload. Leftover objects of the file are deleted
//     after it is published.
//   - list_in_progress(dir) lists the multipart uploads of keys directly below `dir` (ListMultipartUploads; the
//     stage is kUnknown: S3 cannot tell an open file from one closed for commit); abort() aborts one and deletes
//     the file's leftover objects.
// Memory: per open file, one part buffer (s3.multipart.size) and up to s3.upload.parallelism parts in flight
// (32 MiB more by default). Opening a target twice starts a second upload; the
// first stays until it is aborted.
//
// Thread-safety: as recoverable_writer.h (the client is thread-safe).
#pragma once

#include <memory>

#include "fs/recoverable_writer.h"
#include "fs/s3/s3_client.h"
#include "sluice/core/name_source.h"

namespace sluice::s3 {

// `names`: leftover objects' nonces come from its stream "s3-leftover" (null: a random source).
std::shared_ptr<fs::RecoverableWriter> make_s3_recoverable_writer(std::shared_ptr<S3Client> client,
                                                                  std::shared_ptr<NameSource> names = nullptr);

}  // namespace sluice::s3
