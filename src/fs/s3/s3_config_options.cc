#include "fs/s3/s3_config_options.h"

#include "fs/s3/s3_options.h"

namespace sluice::s3::options {

using std::chrono::milliseconds;

namespace {
Constraint<milliseconds> at_least_1ms() {
  return {[](const milliseconds& v) { return v.count() >= 1; }, ">= 1ms"};
}
Constraint<int32_t> in_range(int32_t lo, int32_t hi) {
  return {[lo, hi](const int32_t& v) { return v >= lo && v <= hi; },
          "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"};
}
}  // namespace

const ConfigOption<std::string> kEndpoint{
    "s3.endpoint", "",
    "URL of the S3 API, e.g. http://127.0.0.1:9000 (no scheme means https). Empty: AWS's regional endpoint "
    "https://s3.<s3.region>.amazonaws.com.",
    {}, {}};

const ConfigOption<std::string> kRegion{
    "s3.region", "us-east-1", "Region requests are signed for (AWS Signature Version 4).", {"s3.endpoint.region"},
    {[](const std::string& v) { return !v.empty(); }, "not empty"}};

const ConfigOption<std::string> kAccessKey{
    "s3.access-key", "", "Access key id. Empty: the environment variable AWS_ACCESS_KEY_ID.", {"s3.access.key"}, {}};

const ConfigOption<std::string> kSecretKey{
    "s3.secret-key", "",
    "Secret access key; never printed or logged. Empty: the environment variable AWS_SECRET_ACCESS_KEY.",
    {"s3.secret.key"}, {}};

const ConfigOption<bool> kPathStyleAccess{
    "s3.path.style.access", false,
    "Address buckets as <endpoint>/<bucket>/<key> instead of <bucket>.<endpoint host>/<key>; most S3-compatible "
    "stores need true.",
    {"s3.path-style-access"}, {}};

const ConfigOption<milliseconds> kConnectTimeout{
    "s3.connection.establish.timeout", std::chrono::seconds(10),
    "Longest wait for a TCP (and TLS) connection to the endpoint; a timeout is retried.", {}, at_least_1ms()};

const ConfigOption<milliseconds> kRequestTimeout{
    "s3.connection.request.timeout", std::chrono::seconds(60),
    "Longest time one HTTP request may take, body included; a timeout is retried.", {}, at_least_1ms()};

const ConfigOption<int32_t> kRetryLimit{
    "s3.retry.limit", 5,
    "Retries of a request that failed with a retriable error (HTTP 5xx, 429, SlowDown, connection errors, "
    "timeouts) after its first attempt.",
    {}, in_range(0, kMaxRetriesLimit)};

const ConfigOption<milliseconds> kRetryInterval{
    "s3.retry.interval", milliseconds(100),
    "Base delay of the exponential backoff: retry n waits a random time in [0, min(max-interval, interval x "
    "2^(n-1))].",
    {}, at_least_1ms()};

const ConfigOption<milliseconds> kRetryMaxInterval{
    "s3.retry.max-interval", std::chrono::seconds(5), "Cap of one backoff delay between retries.", {},
    at_least_1ms()};

const ConfigOption<MemorySize> kMultipartSize{
    "s3.multipart.size", MemorySize::of_mebibytes(8),
    "Size of each part of a multipart upload but the last (S3 requires at least 5mb), and of each ranged GET of a "
    "parallel download.",
    {},
    {[](const MemorySize& v) { return v.bytes >= kMinPartSizeBytes && v.bytes <= kMaxPartSizeBytes; },
     "in [5mb, 5gb]"}};

const ConfigOption<MemorySize> kMultipartThreshold{
    "s3.multipart.threshold", MemorySize::of_mebibytes(8),
    "Files of at least this size are uploaded as a multipart upload with parts in parallel; smaller ones with one "
    "PUT.",
    {}, {[](const MemorySize& v) { return v.bytes >= kMinPartSizeBytes; }, ">= 5mb"}};

const ConfigOption<int32_t> kUploadParallelism{
    "s3.upload.parallelism", 4, "Parts of one multipart upload in flight at once.", {}, in_range(1, kMaxParallelism)};

const ConfigOption<int32_t> kDownloadParallelism{
    "s3.download.parallelism", 4, "Ranged GETs of one large download in flight at once.", {},
    in_range(1, kMaxParallelism)};

const std::vector<const ConfigOptionBase*>& all_s3_options() {
  static const std::vector<const ConfigOptionBase*> kAll = {
      &kEndpoint,          &kRegion,         &kAccessKey,          &kSecretKey,         &kPathStyleAccess,
      &kConnectTimeout,    &kRequestTimeout, &kRetryLimit,         &kRetryInterval,     &kRetryMaxInterval,
      &kMultipartSize,     &kMultipartThreshold, &kUploadParallelism, &kDownloadParallelism,
  };
  return kAll;
}

}  // namespace sluice::s3::options
