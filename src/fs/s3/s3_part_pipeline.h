// PartPipeline: the parts of one multipart upload sent in the background, so that a writer keeps filling its next
// part while earlier ones are on the wire. Flink's S3 recoverable writer uploads its parts asynchronously in the
// same way (RecoverableMultiPartUploadImpl); without it a writer waits for every part, and its throughput is one
// request stream's.
//
// At most `max_in_flight` parts travel at once (s3.upload.parallelism); submit() waits for the oldest when that
// many are out. Memory: up to max_in_flight part buffers (s3.multipart.size each) besides the writer's own.
// Failures: the first failed part's Status (the client already retried it, s3_retry_policy.h) is returned by
// the submit() or drain() that sees it, and by every call after: a failed pipeline stays failed, so no part
// after a lost one is ever recorded.
//
// Thread-safety: one thread calls submit() and drain() (the writer's); uploads run on threads of their own, one
// per part in flight. The destructor waits for the parts in flight (their results are dropped).
#pragma once

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "fs/s3/s3_client.h"
#include "sluice/core/status.h"

namespace sluice::s3 {

// A part S3 has acknowledged: its number, the ETag UploadPart answered and its size.
struct UploadedPart {
  int32_t part_number = 0;
  std::string etag;
  uint64_t size_bytes = 0;
};

class PartPipeline {
 public:
  // `max_in_flight` in [1, 64] (S3Options::upload_parallelism); values below 1 are taken as 1.
  PartPipeline(std::shared_ptr<S3Client> client, std::string bucket, std::string key, std::string upload_id,
               int32_t max_in_flight);
  ~PartPipeline();
  PartPipeline(const PartPipeline&) = delete;
  PartPipeline& operator=(const PartPipeline&) = delete;

  // Starts uploading `bytes` as part `part_number` (the caller numbers parts in ascending order). First waits for
  // the oldest part in flight when max_in_flight are. Returns the failure of an earlier part, if any (then
  // `bytes` are not sent).
  [[nodiscard]] Status submit(int32_t part_number, std::vector<uint8_t> bytes);

  // Waits for every part in flight and returns the parts finished since the last drain(), in submission order;
  // or the first failure.
  [[nodiscard]] Result<std::vector<UploadedPart>> drain();

  // Waits for every part in flight and forgets all parts not yet drained (the file is being given up). After it
  // no request of this pipeline is on the wire, so an abort of the upload that follows cannot be overtaken by a
  // part of it (S3 may keep storing such a part; some S3-compatible stores list the upload again).
  void cancel() noexcept;

  // Parts submitted and not yet returned by drain() (in flight or finished).
  size_t pending() const { return in_flight_.size() + finished_.size(); }

 private:
  struct InFlight {
    int32_t part_number;
    uint64_t size_bytes;
    std::future<Result<std::string>> etag;
  };
  Status wait_oldest();

  std::shared_ptr<S3Client> client_;
  std::string bucket_;
  std::string key_;
  std::string upload_id_;
  size_t max_in_flight_;
  std::deque<InFlight> in_flight_;
  std::vector<UploadedPart> finished_;
  Status failure_;
};

}  // namespace sluice::s3
