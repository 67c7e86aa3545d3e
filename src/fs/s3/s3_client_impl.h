// The inside of S3Client, shared by s3_client.cc (single requests) and s3_transfer.cc (parallel file upload and
// download): the transport, the retry loop and the counters.
// Thread-safety: as S3Client.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "fs/s3/s3_client.h"
#include "fs/s3/s3_errors.h"
#include "fs/s3/s3_http.h"
#include "fs/s3/s3_request.h"

namespace sluice::s3 {

// A request's outcome: the successful response, or the Status of its failure; and the attempts either way.
struct Execution {
  Result<HttpResponse> result;
  int32_t attempts = 0;
};

struct S3Client::Impl {
  Impl(S3Options o, S3ClientHooks h);

  // Sends `request` until it succeeds, fails for good, or retries run out (s3_retry_policy.h), sleeping the
  // jittered backoff between attempts. `error_body_in_2xx`: a 2xx whose body is an <Error> is a failure
  // (CompleteMultipartUpload).
  Execution execute(const RequestContext& context, const HttpRequest& request, bool error_body_in_2xx = false);

  // The context of a request for messages.
  RequestContext context(std::string_view operation, std::string_view bucket, std::string_view key,
                         std::string_view upload_id = {}) const {
    return RequestContext{operation, endpoint_url, bucket, key, upload_id, options.access_key};
  }

  std::string url(std::string_view bucket, std::string_view key, QueryParams params = {}) const {
    return object_url(endpoint, addressing, bucket, key, std::move(params));
  }

  int64_t next_delay_ms(int32_t retry_number);

  const S3Options options;
  const ParsedEndpoint endpoint;
  const std::string endpoint_url;
  const Addressing addressing;
  S3ClientHooks hooks;
  HttpTransport transport;

  std::mutex random_mu;  // guards hooks.random

  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> retries{0};
  std::atomic<uint64_t> bytes_sent{0};
  std::atomic<uint64_t> bytes_received{0};
  std::atomic<uint64_t> in_flight{0};
  std::atomic<uint64_t> peak_in_flight{0};
};

}  // namespace sluice::s3
