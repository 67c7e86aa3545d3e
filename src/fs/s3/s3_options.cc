#include "fs/s3/s3_options.h"

#include <cstdlib>

#include "fs/s3/s3_config_options.h"
#include "fs/s3/s3_request.h"
#include "sluice/config/option_type.h"
#include "sluice/core/duration.h"

namespace sluice::s3 {

namespace {

std::string size_text(uint64_t bytes) { return format_memory_size(MemorySize::of_bytes(bytes)); }
std::string ms_text(int64_t ms) { return format_duration(std::chrono::milliseconds(ms)); }

Status bad(const ConfigOptionBase& option, const std::string& value, const std::string& expected) {
  return Status::invalid_argument(option.key + ": " + value + " (expected " + expected + ")");
}

}  // namespace

Status S3Options::validate() const {
  if (!endpoint.empty()) {
    Result<ParsedEndpoint> parsed = parse_endpoint(endpoint);
    if (!parsed.is_ok()) return parsed.status().with_context(options::kEndpoint.key);
  }
  if (region.empty()) return bad(options::kRegion, "empty", "a region such as us-east-1");
  if (region.find_first_of(":/ ") != std::string::npos) {
    return bad(options::kRegion, "'" + region + "' contains ':', '/' or a space", "a region such as us-east-1");
  }
  if (access_key.empty()) {
    return bad(options::kAccessKey, "not set and AWS_ACCESS_KEY_ID is not set either",
               "an access key id in s3.access-key or in AWS_ACCESS_KEY_ID");
  }
  if (secret_key.empty()) {
    return bad(options::kSecretKey, "not set and AWS_SECRET_ACCESS_KEY is not set either",
               "a secret key in s3.secret-key or in AWS_SECRET_ACCESS_KEY");
  }
  if (connect_timeout_ms < 1) return bad(options::kConnectTimeout, ms_text(connect_timeout_ms), ">= 1ms");
  if (request_timeout_ms < 1) return bad(options::kRequestTimeout, ms_text(request_timeout_ms), ">= 1ms");
  if (max_retries < 0 || max_retries > kMaxRetriesLimit) {
    return bad(options::kRetryLimit, std::to_string(max_retries), "in [0, " + std::to_string(kMaxRetriesLimit) + "]");
  }
  if (retry_base_delay_ms < 1) return bad(options::kRetryInterval, ms_text(retry_base_delay_ms), ">= 1ms");
  if (retry_max_delay_ms < retry_base_delay_ms) {
    return bad(options::kRetryMaxInterval, ms_text(retry_max_delay_ms),
               ">= s3.retry.interval, which is " + ms_text(retry_base_delay_ms));
  }
  if (part_size_bytes < kMinPartSizeBytes) {
    return bad(options::kMultipartSize, size_text(part_size_bytes) + " is below S3's minimum part size",
               "in [5mb, 5gb]");
  }
  if (part_size_bytes > kMaxPartSizeBytes) {
    return bad(options::kMultipartSize, size_text(part_size_bytes) + " is above S3's maximum part size",
               "in [5mb, 5gb]");
  }
  if (multipart_threshold_bytes < kMinPartSizeBytes) {
    return bad(options::kMultipartThreshold, size_text(multipart_threshold_bytes), ">= 5mb");
  }
  auto parallelism_ok = [](int32_t p) { return p >= 1 && p <= kMaxParallelism; };
  const std::string parallelism_range = "in [1, " + std::to_string(kMaxParallelism) + "]";
  if (!parallelism_ok(upload_parallelism)) {
    return bad(options::kUploadParallelism, std::to_string(upload_parallelism), parallelism_range);
  }
  if (!parallelism_ok(download_parallelism)) {
    return bad(options::kDownloadParallelism, std::to_string(download_parallelism), parallelism_range);
  }
  return Status::ok();
}

std::string S3Options::effective_endpoint() const {
  if (endpoint.empty()) return "https://s3." + region + ".amazonaws.com";
  Result<ParsedEndpoint> parsed = parse_endpoint(endpoint);
  return parsed.is_ok() ? parsed->url() : endpoint;
}

std::string S3Options::describe() const {
  std::string out;
  out += "endpoint=" + effective_endpoint();
  out += " region=" + region;
  out += " access_key=" + (access_key.empty() ? std::string("<unset>") : access_key);
  out += " secret_key=" + std::string(secret_key.empty() ? "<unset>" : "<redacted>");
  out += std::string(" path_style_access=") + (path_style_access ? "true" : "false");
  out += " connect_timeout=" + ms_text(connect_timeout_ms);
  out += " request_timeout=" + ms_text(request_timeout_ms);
  out += " max_retries=" + std::to_string(max_retries);
  out += " retry_delay=" + ms_text(retry_base_delay_ms) + ".." + ms_text(retry_max_delay_ms);
  out += " part_size=" + size_text(part_size_bytes);
  out += " multipart_threshold=" + size_text(multipart_threshold_bytes);
  out += " upload_parallelism=" + std::to_string(upload_parallelism);
  out += " download_parallelism=" + std::to_string(download_parallelism);
  return out;
}

EnvLookup process_env() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());  // NOLINT(concurrency-mt-unsafe): read-only use
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<S3Options> s3_options_from_config(const Configuration& config, const EnvLookup& env) {
  S3Options o;
  o.endpoint = config.get(options::kEndpoint);
  o.region = config.get(options::kRegion);
  o.access_key = config.get(options::kAccessKey);
  o.secret_key = config.get(options::kSecretKey);
  if (o.access_key.empty()) o.access_key = env("AWS_ACCESS_KEY_ID").value_or("");
  if (o.secret_key.empty()) o.secret_key = env("AWS_SECRET_ACCESS_KEY").value_or("");
  o.path_style_access = config.get(options::kPathStyleAccess);
  o.connect_timeout_ms = config.get(options::kConnectTimeout).count();
  o.request_timeout_ms = config.get(options::kRequestTimeout).count();
  o.max_retries = config.get(options::kRetryLimit);
  o.retry_base_delay_ms = config.get(options::kRetryInterval).count();
  o.retry_max_delay_ms = config.get(options::kRetryMaxInterval).count();
  o.part_size_bytes = config.get(options::kMultipartSize).bytes;
  o.multipart_threshold_bytes = config.get(options::kMultipartThreshold).bytes;
  o.upload_parallelism = config.get(options::kUploadParallelism);
  o.download_parallelism = config.get(options::kDownloadParallelism);
  SLUICE_RETURN_IF_ERROR(o.validate());
  return o;
}

}  // namespace sluice::s3
