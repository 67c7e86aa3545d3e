// Writing a route's answer: a JSON body, or Flink's error body {"errors": ["message"]}. Internal to src/rest (the
// handlers of rest_routes.cc and job_detail_routes.cc).
#pragma once

#include <httplib.h>

#include <string>

#include <nlohmann/json.hpp>

namespace sluice::rest {

inline constexpr const char* kJsonContentType = "application/json; charset=UTF-8";

inline void reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  // Errors echo what the request said (a mode, a directory), which need not be UTF-8: such bytes become U+FFFD
  // instead of making dump() throw.
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kJsonContentType);
}

inline void error(httplib::Response& res, int status, const std::string& message) {
  reply(res, status, nlohmann::json{{"errors", nlohmann::json::array({message})}});
}

}  // namespace sluice::rest
