#include "fs/s3/s3_request.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace sluice::s3 {

std::string ParsedEndpoint::url() const {
  std::string out = scheme + "://" + host;
  if (!port_text.empty()) out += ":" + port_text;
  return out;
}

Result<ParsedEndpoint> parse_endpoint(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status::invalid_argument("S3 endpoint '" + std::string(text) + "': " + std::string(why) +
                                    " (expected e.g. http://127.0.0.1:9000 or https://s3.eu-west-1.amazonaws.com)");
  };
  ParsedEndpoint out;
  std::string_view rest = text;
  size_t scheme_end = rest.find("://");
  if (scheme_end == std::string_view::npos) {
    out.scheme = "https";
  } else {
    std::string scheme(rest.substr(0, scheme_end));
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme != "http" && scheme != "https") return bad("the scheme must be http or https");
    out.scheme = scheme;
    rest.remove_prefix(scheme_end + 3);
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find_first_of("/?#@") != std::string_view::npos) return bad("a path, query or user part is not allowed");
  if (rest.empty()) return bad("the host is empty");
  std::string_view host = rest;
  std::string_view port;
  if (rest.front() == '[') {  // [v6]:port
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 host needs a closing ']'");
    host = rest.substr(0, close + 1);
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("expected ':' and a port after the IPv6 host");
      port = after.substr(1);
    }
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (host.empty()) return bad("the host is empty");
  }
  if (!port.empty() || rest.back() == ':') {
    bool digits = !port.empty() && port.size() <= 5 &&
                  std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(std::string(port)) < 1 || std::stoi(std::string(port)) > 65535) {
      return bad("the port must be a number in [1, 65535]");
    }
  }
  out.host = std::string(host);
  out.port_text = std::string(port);
  return out;
}

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::string canonical_query(QueryParams params) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(params.size());
  for (auto& [name, value] : params) encoded.emplace_back(uri_encode(name, false), uri_encode(value, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

Addressing addressing_for(const ParsedEndpoint& endpoint, bool path_style_access) {
  if (path_style_access) return Addressing::kPathStyle;
  std::string host = endpoint.host;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  in_addr v4{};
  in6_addr v6{};
  const bool ip = ::inet_pton(AF_INET, host.c_str(), &v4) == 1 || ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
  if (ip || host == "localhost") return Addressing::kPathStyle;
  return Addressing::kVirtualHosted;
}

std::string object_url(const ParsedEndpoint& endpoint, Addressing addressing, std::string_view bucket,
                       std::string_view key, QueryParams params) {
  std::string url = endpoint.scheme + "://";
  std::string path;
  if (addressing == Addressing::kPathStyle) {
    url += endpoint.host;
    path = "/" + uri_encode(bucket, false);
    if (!key.empty()) path += "/" + uri_encode(key, true);
  } else {
    url += std::string(bucket) + "." + endpoint.host;
    path = "/" + uri_encode(key, true);
  }
  if (!endpoint.port_text.empty()) url += ":" + endpoint.port_text;
  url += path;
  std::string query = canonical_query(std::move(params));
  if (!query.empty()) url += "?" + query;
  return url;
}

std::string s3_uri(std::string_view bucket, std::string_view key) {
  return "s3://" + std::string(bucket) + "/" + std::string(key);
}

}  // namespace sluice::s3
