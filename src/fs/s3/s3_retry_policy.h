// When an S3 request is tried again, and how long the client waits first: pure functions.
//
// Retriable (the AWS SDKs' rules, narrowed to S3; AWS S3 API Reference, "Error responses"):
//   - transport errors: connection refused or reset, DNS failure, timeouts, a response cut short
//     (libcurl codes, see is_retriable_curl_code);
//   - HTTP 5xx but 501 (InternalError, ServiceUnavailable, SlowDown, ...), 429 Too Many Requests;
//   - S3 error codes that mean "try again" whatever the status: SlowDown, RequestTimeout (S3 answers 400 when
//     it gave up waiting for the request body), InternalError, ServiceUnavailable, Throttling,
//     RequestLimitExceeded.
// Everything else (4xx: credentials, missing keys, bad arguments, failed preconditions) is final.
//
// Backoff: retry n (1-based) waits a uniformly random time in [0, min(max_delay_ms, base_delay_ms x 2^(n-1))]:
// "full jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015), which spreads retries of many
// clients best. The random numbers come from the caller, so a seeded SplitMix64 replays the same delays.
//
// Thread-safety: pure functions; SplitMix64 is not synchronized.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::s3 {

// How one attempt ended, as far as retrying is concerned.
enum class AttemptVerdict : uint8_t {
  kSuccess,    // 2xx (and, where the operation checks it, a body that is not an <Error>)
  kRetriable,  // try again while retries are left
  kFinal,      // fail now
};

// `curl_code` is a CURLcode (0 = the transfer worked and `http_status` is the response's).
bool is_retriable_curl_code(int curl_code);
bool is_retriable_http_status(long http_status);
bool is_retriable_s3_error_code(std::string_view s3_error_code);

// The verdict on one attempt. A 2xx with an <Error> body (CompleteMultipartUpload can answer so) passes its
// code as `s3_error_code` with `error_in_success_body` true.
AttemptVerdict classify_attempt(int curl_code, long http_status, std::string_view s3_error_code,
                                bool error_in_success_body = false);

// min(max_delay_ms, base_delay_ms x 2^(retry_number - 1)) without overflow; retry_number >= 1.
int64_t backoff_ceiling_ms(int32_t retry_number, int64_t base_delay_ms, int64_t max_delay_ms);

// A delay in [0, backoff_ceiling_ms(...)] chosen by `random` (uniform when `random` is).
int64_t full_jitter_delay_ms(int32_t retry_number, int64_t base_delay_ms, int64_t max_delay_ms, uint64_t random);

// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", 2014): a small seedable
// generator, equal seeds give equal sequences.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();

 private:
  uint64_t state_;
};

}  // namespace sluice::s3
