#include "rest/request_guard.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace sluice::rest {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The host part of a Host header: "127.0.0.1:8081" -> "127.0.0.1", "[::1]:8081" -> "::1".
std::string host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const size_t end = host.find(']');
    return std::string(host.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1));
  }
  return std::string(host.substr(0, host.rfind(':')));
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

std::string refuse_state_change(std::string_view method, std::string_view host, std::string_view origin,
                                std::string_view sec_fetch_site, std::string_view advertised_address) {
  if (method == "GET" || method == "HEAD" || method == "OPTIONS") return "";
  const std::string site = lower(sec_fetch_site);
  if (site == "cross-site" || site == "same-site") {
    return "refused: a " + std::string(method) + " sent by a page of another site (Sec-Fetch-Site: " + site +
           "); this endpoint changes a job only for its own pages and for clients without a browser (curl, sluice)";
  }
  if (origin.empty()) return "";
  if (lower(origin) == "null" || lower(origin) != "http://" + lower(host)) {
    return "refused: a " + std::string(method) + " from the page at " + std::string(origin) +
           ", not this endpoint's (http://" + std::string(host) + ")";
  }
  const std::string name = lower(host_name(host));
  if (name != "localhost" && !is_ip_literal(name) && name != lower(advertised_address)) {
    return "refused: a " + std::string(method) + " from a page at host '" + name +
           "', which is neither an IP address, localhost nor this endpoint's rest.address ('" +
           std::string(advertised_address) + "')";
  }
  return "";
}

}  // namespace sluice::rest
