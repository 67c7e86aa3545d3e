// A small HTTP client for the REST endpoint of a running job (the `sluice list` / `sluice cancel` side).
// Thread-safety: functions; each call opens its own connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "sluice/core/status.h"

namespace sluice::rest {

struct HttpResponse {
  int status = 0;    // the HTTP status code
  std::string body;  // the response body (JSON for every route of RestServer)
};

// Sends `method` ("GET", "PATCH", "POST") to http://address:port/path (path with its query string) with a JSON
// `body` for PATCH / POST. kIoError when the endpoint cannot be reached or does not answer within `timeout`
// (naming the endpoint, and "no answer within <timeout> ms" for a timeout). An HTTP error status is a response, not an error.
Result<HttpResponse> http_request(const std::string& method, const std::string& address, int32_t port,
                                  const std::string& path, const std::string& body = "",
                                  std::chrono::milliseconds timeout = std::chrono::seconds(5));

// The message of a Flink-shaped error body ({"errors":[...]}), joined by "; "; the body itself otherwise.
std::string error_message(const HttpResponse& response);

}  // namespace sluice::rest
