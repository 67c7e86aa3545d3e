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
    // httplib names a timeout after the step that waited ("Read", "Write"); say what the user can act on.
    const httplib::Error e = result.error();
    // A PATCH or POST that timed out reading the answer was sent: the job may still act on it.
    const std::string may_act = e == httplib::Error::Read && method != "GET"
                                    ? "; the request was sent and may still take effect when the process answers"
                                    : "";
    const std::string why = e == httplib::Error::Read || e == httplib::Error::Write
                                ? "no answer within " + std::to_string(timeout.count()) +
                                      " ms (the process may be stopped or overloaded" + may_act + ")"
                            : e == httplib::Error::Connection ? "cannot connect (" + httplib::to_string(e) + ")"
                                                              : httplib::to_string(e);
    return Status::io_error("REST endpoint http://" + address + ":" + std::to_string(port) + path + ": " + why);
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
