// From a failed S3 request to the Status the client returns: pure functions.
//
// Every message names the operation (the S3 API action, e.g. PutObject), the object (s3://bucket/key), the
// endpoint, what S3 or the transport said (HTTP status, S3 error code and message, request id, or curl's error)
// and how many attempts were made. No message contains the secret key: it is never passed here.
//
//   HTTP 404 NoSuchKey / NotFound          kNotFound
//   HTTP 404 NoSuchUpload (or any 404 of an operation on an upload id)
//                                          kNotFound: the upload was completed, aborted or never created
//   NoSuchBucket                           kInvalidArgument naming the bucket and the endpoint
//   HTTP 403 (SignatureDoesNotMatch, InvalidAccessKeyId, AccessDenied, ...)
//                                          kInvalidArgument, not retriable: names the access key id and the keys
//                                          s3.access-key / s3.secret-key
//   HTTP 301 / 307, AuthorizationHeaderMalformed
//                                          kInvalidArgument: the bucket lives elsewhere (s3.region, s3.endpoint)
//   HTTP 412 PreconditionFailed, 409       kFailedPrecondition
//   other 4xx                              kInvalidArgument
//   other final failures (501, a TLS certificate error, ...)
//                                          kIOError, not retriable
//   retriable failures after the last retry
//                                          kIOError, retriable
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/s3/s3_types.h"
#include "sluice/core/status.h"

namespace sluice::s3 {

// What a request was about, for messages.
struct RequestContext {
  std::string_view operation;      // S3 API action: "PutObject", "ListObjectsV2", ...
  std::string_view endpoint;       // the endpoint URL
  std::string_view bucket;
  std::string_view key;            // "" for bucket-level operations
  std::string_view upload_id;      // "" unless the operation names a multipart upload
  std::string_view access_key_id;  // shown in messages about refused credentials
};

// How the last attempt of a request failed.
struct AttemptFailure {
  int curl_code = 0;       // a CURLcode; 0 when a response arrived
  std::string curl_error;  // curl's words for curl_code
  long http_status = 0;    // when curl_code is 0
  S3ErrorBody error;       // the <Error> body; code empty when there was none (HEAD responses have no body)
};

// "HTTP 503 SlowDown (Please reduce your request rate.), request id 4442587FB7D0A2F9" or
// "curl error 7 (Couldn't connect to server: Failed to connect to 127.0.0.1 port 1: Connection refused)".
std::string describe_failure(const AttemptFailure& failure);

// The Status of a request whose last attempt failed for good (classify_attempt said kFinal).
Status status_for_final_failure(const RequestContext& context, const AttemptFailure& failure, int32_t attempts);

// The Status of a request that failed with retriable errors `attempts` times: kIOError, retriable.
Status status_for_exhausted_retries(const RequestContext& context, const AttemptFailure& failure, int32_t attempts);

}  // namespace sluice::s3
