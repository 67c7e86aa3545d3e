#include "fs/s3/s3_retry_policy.h"

#include <curl/curl.h>

#include <array>
#include <string_view>

namespace sluice::s3 {

bool is_retriable_curl_code(int curl_code) {
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_COULDNT_RESOLVE_HOST:  // DNS hiccup; a wrong name fails after the bounded retries
    case CURLE_COULDNT_CONNECT:       // refused, unreachable
    case CURLE_OPERATION_TIMEDOUT:    // connect or request timeout
    case CURLE_SEND_ERROR:            // connection reset while sending
    case CURLE_RECV_ERROR:            // ... while receiving
    case CURLE_GOT_NOTHING:           // the server closed the connection without answering
    case CURLE_PARTIAL_FILE:          // the body ended before its Content-Length
    case CURLE_SEND_FAIL_REWIND:      // curl could not send a body again by itself; a new attempt sends it whole
    case CURLE_SSL_CONNECT_ERROR:     // the TLS handshake broke off
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;  // URL, TLS certificate, memory, callback aborts, ...: retrying cannot help
  }
}

// 501 Not Implemented says the request uses a feature the store lacks: final.
bool is_retriable_http_status(long http_status) {
  return http_status == 429 || (http_status >= 500 && http_status != 501);
}

bool is_retriable_s3_error_code(std::string_view s3_error_code) {
  static constexpr std::array<std::string_view, 6> kRetriable = {
      "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling", "RequestLimitExceeded"};
  for (std::string_view code : kRetriable) {
    if (s3_error_code == code) return true;
  }
  return false;
}

AttemptVerdict classify_attempt(int curl_code, long http_status, std::string_view s3_error_code,
                                bool error_in_success_body) {
  if (curl_code != 0) return is_retriable_curl_code(curl_code) ? AttemptVerdict::kRetriable : AttemptVerdict::kFinal;
  bool success_status = http_status >= 200 && http_status < 300;
  if (success_status && !error_in_success_body) return AttemptVerdict::kSuccess;
  if (is_retriable_s3_error_code(s3_error_code)) return AttemptVerdict::kRetriable;
  if (!success_status && is_retriable_http_status(http_status)) return AttemptVerdict::kRetriable;
  return AttemptVerdict::kFinal;
}

int64_t backoff_ceiling_ms(int32_t retry_number, int64_t base_delay_ms, int64_t max_delay_ms) {
  if (retry_number < 1) retry_number = 1;
  if (base_delay_ms < 0) base_delay_ms = 0;
  int64_t ceiling = base_delay_ms;
  for (int32_t i = 1; i < retry_number && ceiling < max_delay_ms; ++i) {
    ceiling = ceiling > max_delay_ms / 2 ? max_delay_ms : ceiling * 2;
  }
  return ceiling < max_delay_ms ? ceiling : max_delay_ms;
}

int64_t full_jitter_delay_ms(int32_t retry_number, int64_t base_delay_ms, int64_t max_delay_ms, uint64_t random) {
  int64_t ceiling = backoff_ceiling_ms(retry_number, base_delay_ms, max_delay_ms);
  if (ceiling <= 0) return 0;
  return static_cast<int64_t>(random % (static_cast<uint64_t>(ceiling) + 1));
}

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace sluice::s3
