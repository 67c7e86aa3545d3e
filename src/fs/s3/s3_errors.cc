#include "fs/s3/s3_errors.h"

#include "fs/s3/s3_request.h"

namespace sluice::s3 {

namespace {

// "S3 GetObject of s3://b/k at http://127.0.0.1:9000"
std::string subject(const RequestContext& c) {
  std::string out = "S3 " + std::string(c.operation);
  out += c.key.empty() ? " on bucket '" + std::string(c.bucket) + "'" : " of " + s3_uri(c.bucket, c.key);
  if (!c.upload_id.empty()) out += " (upload id '" + std::string(c.upload_id) + "')";
  out += " at " + std::string(c.endpoint);
  return out;
}

std::string attempts_text(int32_t attempts) {
  return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

// The S3 error code, or one derived from the status when the response had no body.
std::string code_of(const AttemptFailure& f) {
  if (!f.error.code.empty()) return f.error.code;
  switch (f.http_status) {
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 412: return "PreconditionFailed";
    default: return "";
  }
}

}  // namespace

std::string describe_failure(const AttemptFailure& f) {
  if (f.curl_code != 0) return "curl error " + std::to_string(f.curl_code) + " (" + f.curl_error + ")";
  std::string out = "HTTP " + std::to_string(f.http_status);
  if (!f.error.code.empty()) out += " " + f.error.code;
  if (!f.error.message.empty()) out += " (" + f.error.message + ")";
  if (!f.error.request_id.empty()) out += ", request id " + f.error.request_id;
  return out;
}

Status status_for_final_failure(const RequestContext& c, const AttemptFailure& f, int32_t attempts) {
  const std::string what = describe_failure(f) + "; " + attempts_text(attempts);
  if (f.curl_code != 0) {
    return Status(StatusCode::kIOError, subject(c) + " failed: " + what, /*retriable=*/false);
  }
  const std::string code = code_of(f);
  const long status = f.http_status;
  if (code == "NoSuchBucket") {
    return Status::invalid_argument("bucket '" + std::string(c.bucket) + "' does not exist at " +
                                    std::string(c.endpoint) + ": " + subject(c) + " failed: " + what);
  }
  if (status == 404 && f.error.code.empty() && !f.error.message.empty()) {
    // S3 explains every 404 that has a body (NoSuchKey, NoSuchBucket, NoSuchUpload): this answer came from
    // something else, e.g. a web server or a proxy at s3.endpoint.
    return Status::invalid_argument(subject(c) + " failed: " + what +
                                    ". The answer is not an S3 error: check that s3.endpoint is an S3-compatible "
                                    "server");
  }
  if (status == 404 || code == "NoSuchKey" || code == "NoSuchUpload") {
    if (!c.upload_id.empty()) {
      return Status::not_found(subject(c) + ": the upload is unknown (completed, aborted or never created): " + what);
    }
    return Status::not_found(subject(c) + ": no such object: " + what);
  }
  if (status == 403) {
    return Status::invalid_argument(subject(c) + " was refused: " + what + ". Check s3.access-key (access key id '" +
                                    std::string(c.access_key_id) +
                                    "') and s3.secret-key, and that they may access the bucket");
  }
  if (status == 301 || status == 307 || code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed") {
    return Status::invalid_argument(subject(c) + " failed: " + what +
                                    ". The bucket is served by another region or endpoint: check s3.region and "
                                    "s3.endpoint");
  }
  if (status == 412 || status == 409) return Status::failed_precondition(subject(c) + " failed: " + what);
  if (status >= 400 && status < 500) return Status::invalid_argument(subject(c) + " failed: " + what);
  return Status(StatusCode::kIOError, subject(c) + " failed: " + what, /*retriable=*/false);
}

Status status_for_exhausted_retries(const RequestContext& c, const AttemptFailure& f, int32_t attempts) {
  return Status::io_error(subject(c) + " failed after " + attempts_text(attempts) + " (s3.retry.limit " +
                          std::to_string(attempts - 1) + "); last error: " + describe_failure(f));
}

}  // namespace sluice::s3
