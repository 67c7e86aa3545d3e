// One signed HTTP exchange with an S3 endpoint, over libcurl (Debian libcurl4-openssl-dev).
//
// Signing: libcurl's CURLOPT_AWS_SIGV4 ("aws:amz:<region>:s3") with the access key and secret as user name and
// password. libcurl signs the Host header, x-amz-date and every header the caller adds, and takes the payload
// hash from the x-amz-content-sha256 header, which this transport always sends (computed with sha256_hex):
// S3 requires the header, and libcurl 7.88 does not add it. Headers without a value must not be added (libcurl
// would sign them but not send them). URLs must be canonical already (s3_request.h).
//
// Connections: a small pool of curl easy handles; a handle keeps its connections alive between requests.
// Signals: none are installed (CURLOPT_NOSIGNAL); SIGPIPE is blocked in the calling thread while a transfer runs.
// No retries here: one call is one attempt (s3_client.cc retries).
// Thread-safety: perform() may be called from any number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::s3 {

struct S3Options;

enum class HttpMethod : uint8_t { kGet, kHead, kPut, kPost, kDelete };

struct HttpRequest {
  HttpMethod method = HttpMethod::kGet;
  std::string url;                                           // canonical (s3_request.h)
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. {"Range", "bytes=0-99"}; values not empty
  std::span<const uint8_t> body;                             // PUT and POST; must outlive perform()
};

struct HttpResponse {
  int curl_code = 0;       // CURLcode; 0 when a response arrived
  std::string curl_error;  // curl's words when curl_code != 0
  long status = 0;         // HTTP status when curl_code == 0
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case, values trimmed
  std::vector<uint8_t> body;
  uint64_t bytes_sent = 0;

  // The first header named `lower_case_name`.
  std::optional<std::string> header(std::string_view lower_case_name) const;
  std::string_view body_text() const {
    return {reinterpret_cast<const char*>(body.data()), body.size()};
  }
};

class HttpTransport {
 public:
  // `options` must be valid (S3Options::validate). Copies what it needs.
  explicit HttpTransport(const S3Options& options);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  HttpResponse perform(const HttpRequest& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::s3
