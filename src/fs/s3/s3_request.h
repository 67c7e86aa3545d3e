// Request URLs for S3: endpoint parsing, SigV4's URI encoding, path-style and virtual-hosted addressing.
//
// libcurl signs what it sends (CURLOPT_AWS_SIGV4): in curl 7.88 the canonical URI is the URL's path as given and
// the canonical query string is the URL's query as given. So the URL must already be in SigV4's canonical form
// (AWS General Reference, "Create a canonical request for Signature Version 4"): every byte outside
// A-Z a-z 0-9 - _ . ~ percent-encoded with upper-case hex (a key's '/' kept), query parameters sorted by
// name, and every parameter written as name=value, also when the value is empty ("uploads=": a bare
// "uploads" is signed differently by curl and the server, which then answers 403).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::s3 {

struct ParsedEndpoint {
  std::string scheme;     // "http" or "https"
  std::string host;       // "127.0.0.1", "s3.eu-west-1.amazonaws.com"
  std::string port_text;  // "" or "9000"
  // scheme://host[:port], no trailing slash
  std::string url() const;
};

// "http://127.0.0.1:9000", "https://s3.amazonaws.com/", "s3.amazonaws.com" (https assumed). kInvalidArgument
// naming `text` for another scheme, an empty host, a bad port, or a path, query or user part.
Result<ParsedEndpoint> parse_endpoint(std::string_view text);

// SigV4 UriEncode: unreserved bytes kept, '/' kept when `keep_slash`, everything else %XX (upper-case hex).
std::string uri_encode(std::string_view text, bool keep_slash);

using QueryParams = std::vector<std::pair<std::string, std::string>>;  // unencoded name, value

// "a=1&b=&list-type=2": encoded, sorted by encoded name (then value), always with '='. "" for no parameters.
std::string canonical_query(QueryParams params);

// How a bucket is addressed.
enum class Addressing : uint8_t {
  kPathStyle,      // scheme://host/bucket/key
  kVirtualHosted,  // scheme://bucket.host/key
};

// kPathStyle when `path_style_access` (s3.path.style.access) or when the endpoint's host is an IP address or
// "localhost", where a bucket's subdomain cannot resolve (the AWS SDKs switch the same way); else kVirtualHosted.
Addressing addressing_for(const ParsedEndpoint& endpoint, bool path_style_access);

// The full request URL of `key` in `bucket` (key "" addresses the bucket itself), with `params`.
std::string object_url(const ParsedEndpoint& endpoint, Addressing addressing, std::string_view bucket,
                       std::string_view key, QueryParams params = {});

// "s3://bucket/key" for messages.
std::string s3_uri(std::string_view bucket, std::string_view key);

}  // namespace sluice::s3
