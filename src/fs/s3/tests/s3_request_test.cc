// Request URLs in SigV4's canonical form (s3_request.h): what libcurl signs is what the URL says.
#include "fs/s3/s3_request.h"

#include <gtest/gtest.h>

namespace sluice::s3 {
namespace {

TEST(S3Request, ParsesEndpoints) {
  Result<ParsedEndpoint> local = parse_endpoint("http://127.0.0.1:9000");
  ASSERT_TRUE(local.is_ok()) << local.status().to_string();
  EXPECT_EQ(local->scheme, "http");
  EXPECT_EQ(local->host, "127.0.0.1");
  EXPECT_EQ(local->port_text, "9000");
  EXPECT_EQ(local->url(), "http://127.0.0.1:9000");

  Result<ParsedEndpoint> aws = parse_endpoint("s3.eu-west-1.amazonaws.com/");
  ASSERT_TRUE(aws.is_ok());
  EXPECT_EQ(aws->url(), "https://s3.eu-west-1.amazonaws.com");

  Result<ParsedEndpoint> v6 = parse_endpoint("HTTP://[::1]:8080");
  ASSERT_TRUE(v6.is_ok()) << v6.status().to_string();
  EXPECT_EQ(v6->url(), "http://[::1]:8080");

  for (std::string_view bad : {"", "http://", "ftp://h", "http://h:", "http://h:0", "http://h:x", "http://h/p",
                               "http://u@h", "http://h?x=1", "http://[::1"}) {
    Result<ParsedEndpoint> parsed = parse_endpoint(bad);
    EXPECT_FALSE(parsed.is_ok()) << bad;
    if (!parsed.is_ok()) {
      EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(parsed.status().message().find("expected e.g."), std::string::npos) << parsed.status().message();
    }
  }
}

TEST(S3Request, UriEncodingIsSigV4s) {
  EXPECT_EQ(uri_encode("AZaz09-_.~", false), "AZaz09-_.~");
  EXPECT_EQ(uri_encode("a b/c", false), "a%20b%2Fc");
  EXPECT_EQ(uri_encode("a b/c", true), "a%20b/c");
  EXPECT_EQ(uri_encode("+=&?*%", false), "%2B%3D%26%3F%2A%25");
  EXPECT_EQ(uri_encode("\xC3\xA9", false), "%C3%A9");  // UTF-8 bytes, upper-case hex
}

TEST(S3Request, CanonicalQueryIsSortedAndAlwaysHasEquals) {
  EXPECT_EQ(canonical_query({}), "");
  EXPECT_EQ(canonical_query({{"uploads", ""}}), "uploads=");
  EXPECT_EQ(canonical_query({{"uploadId", "x/y"}, {"partNumber", "3"}}), "partNumber=3&uploadId=x%2Fy");
  EXPECT_EQ(canonical_query({{"prefix", "a b"}, {"list-type", "2"}, {"max-keys", "10"}, {"delimiter", "/"},
                             {"continuation-token", "1ue+/="}}),
            "continuation-token=1ue%2B%2F%3D&delimiter=%2F&list-type=2&max-keys=10&prefix=a%20b");
}

TEST(S3Request, PathStyleAndVirtualHostedUrls) {
  ParsedEndpoint local = parse_endpoint("http://127.0.0.1:9000").value();
  EXPECT_EQ(object_url(local, Addressing::kPathStyle, "bucket", "chk-1/op 1/_metadata"),
            "http://127.0.0.1:9000/bucket/chk-1/op%201/_metadata");
  EXPECT_EQ(object_url(local, Addressing::kPathStyle, "bucket", "", {{"list-type", "2"}}),
            "http://127.0.0.1:9000/bucket?list-type=2");
  EXPECT_EQ(object_url(local, Addressing::kPathStyle, "bucket", "k", {{"uploads", ""}}),
            "http://127.0.0.1:9000/bucket/k?uploads=");
  ParsedEndpoint aws = parse_endpoint("https://s3.eu-west-1.amazonaws.com").value();
  EXPECT_EQ(object_url(aws, Addressing::kVirtualHosted, "bucket", "a/b"),
            "https://bucket.s3.eu-west-1.amazonaws.com/a/b");
  EXPECT_EQ(object_url(aws, Addressing::kVirtualHosted, "bucket", "", {{"delete", ""}}),
            "https://bucket.s3.eu-west-1.amazonaws.com/?delete=");
  // Dot segments stay as they are (the client sends the path as is).
  EXPECT_EQ(object_url(local, Addressing::kPathStyle, "b", "./x/../y"), "http://127.0.0.1:9000/b/./x/../y");
  EXPECT_EQ(s3_uri("b", "k/1"), "s3://b/k/1");
}

// A bucket's subdomain of an IP address or of localhost cannot resolve: such endpoints are addressed path-style
// whatever s3.path.style.access says; host names follow the option.
TEST(S3Request, IpAndLocalhostEndpointsArePathStyle) {
  for (const char* endpoint : {"http://127.0.0.1:9000", "http://10.1.2.3", "http://[::1]:9000", "http://localhost:9000"}) {
    EXPECT_EQ(addressing_for(parse_endpoint(endpoint).value(), false), Addressing::kPathStyle) << endpoint;
  }
  for (const char* endpoint : {"https://s3.eu-west-1.amazonaws.com", "http://minio.internal:9000", "http://127.0.0.1.nip.io"}) {
    EXPECT_EQ(addressing_for(parse_endpoint(endpoint).value(), false), Addressing::kVirtualHosted) << endpoint;
    EXPECT_EQ(addressing_for(parse_endpoint(endpoint).value(), true), Addressing::kPathStyle) << endpoint;
  }
}

}  // namespace
}  // namespace sluice::s3
