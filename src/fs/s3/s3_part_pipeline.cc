#include "fs/s3/s3_part_pipeline.h"

#include <system_error>

namespace sluice::s3 {

PartPipeline::PartPipeline(std::shared_ptr<S3Client> client, std::string bucket, std::string key,
                           std::string upload_id, int32_t max_in_flight)
    : client_(std::move(client)), bucket_(std::move(bucket)), key_(std::move(key)), upload_id_(std::move(upload_id)),
      max_in_flight_(static_cast<size_t>(max_in_flight < 1 ? 1 : max_in_flight)) {}

PartPipeline::~PartPipeline() {
  for (InFlight& f : in_flight_) f.etag.wait();
}

Status PartPipeline::submit(int32_t part_number, std::vector<uint8_t> bytes) {
  while (failure_.is_ok() && in_flight_.size() >= max_in_flight_) (void)wait_oldest();
  if (!failure_.is_ok()) return failure_;
  const uint64_t size = bytes.size();
  try {
    // The lambda owns the part's bytes and a reference to the client until the request ends.
    auto etag = std::async(std::launch::async, [client = client_, bucket = bucket_, key = key_, id = upload_id_,
                                                part_number, bytes = std::move(bytes)] {
      return client->upload_part(bucket, key, id, part_number, bytes);
    });
    in_flight_.push_back(InFlight{part_number, size, std::move(etag)});
  } catch (const std::system_error& e) {
    failure_ = Status::io_error("cannot start a thread to upload part " + std::to_string(part_number) + ": " +
                                e.what());
  }
  return failure_;
}

Result<std::vector<UploadedPart>> PartPipeline::drain() {
  while (!in_flight_.empty()) (void)wait_oldest();
  if (!failure_.is_ok()) return failure_;
  std::vector<UploadedPart> out;
  out.swap(finished_);
  return out;
}

void PartPipeline::cancel() noexcept {
  for (InFlight& f : in_flight_) f.etag.wait();
  in_flight_.clear();
  finished_.clear();
}

Status PartPipeline::wait_oldest() {
  InFlight f = std::move(in_flight_.front());
  in_flight_.pop_front();
  Result<std::string> etag = f.etag.get();
  if (!etag.is_ok()) {
    if (failure_.is_ok()) failure_ = etag.status();
  } else if (failure_.is_ok()) {
    finished_.push_back(UploadedPart{f.part_number, std::move(etag).value(), f.size_bytes});
  }
  return failure_;
}

}  // namespace sluice::s3
