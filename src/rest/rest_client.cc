#include "rest/rest_client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

namespace sluice::rest {

Result<HttpResponse> http_request(const std::string& method, const std::string& address, int32_t port,
                                  const std::string& path, const std::string& body,
                                  std::chrono::milliseconds timeout) {
  httplib::Client client(address, port);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  if (method != "GET" && method != "PATCH" && method != "POST") {
    return Status::invalid_argument("HTTP method '" + method + "' is not supported: expected GET, PATCH or POST");
  }
  httplib::Result result = method == "GET"     ? client.Get(path)
                           : method == "PATCH" ? client.Patch(path, body, "application/json")
                                               : client.Post(path, body, "application/json");
  if (!result) {
    return Status::io_error("no answer from the REST endpoint http://" + address + ":" + std::to_string(port) + path +
                            ": " + httplib::to_string(result.error()));
  }
  return HttpResponse{result->status, result->body};
}

std::string error_message(const HttpResponse& response) {
  nlohmann::json j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("errors") && j["errors"].is_array()) {
    std::string out;
    for (const auto& e : j["errors"]) {
      if (!out.empty()) out += "; ";
      out += e.is_string() ? e.get<std::string>() : e.dump();
    }
    return out;
  }
  return response.body;
}

}  // namespace sluice::rest
