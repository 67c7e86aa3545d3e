// Where the S3-compatible test server is, from SLUICE_S3_ENDPOINT, SLUICE_S3_ACCESS_KEY, SLUICE_S3_SECRET_KEY,
// SLUICE_S3_REGION (default us-east-1) and SLUICE_S3_BUCKET (default sluice-test). Stands in for
// sluice::testing::s3_test_server() of test-infra/test_servers.h until that fixture exists.
#pragma once

#include <cstdlib>
#include <string>

namespace sluice::s3::testing {

struct S3TestServer {
  bool available = false;
  std::string reason;  // when not available
  std::string endpoint;
  std::string access_key;
  std::string secret_key;
  std::string region;
  std::string bucket;
};

inline std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value == nullptr || *value == '\0' ? std::string(fallback) : std::string(value);
}

inline S3TestServer s3_test_server_from_env() {
  S3TestServer server;
  server.endpoint = env_or("SLUICE_S3_ENDPOINT", "");
  server.access_key = env_or("SLUICE_S3_ACCESS_KEY", "");
  server.secret_key = env_or("SLUICE_S3_SECRET_KEY", "");
  server.region = env_or("SLUICE_S3_REGION", "us-east-1");
  server.bucket = env_or("SLUICE_S3_BUCKET", "sluice-test");
  if (server.endpoint.empty() || server.access_key.empty() || server.secret_key.empty()) {
    server.reason =
        "SLUICE_S3_ENDPOINT, SLUICE_S3_ACCESS_KEY and SLUICE_S3_SECRET_KEY must name an S3-compatible server "
        "(e.g. s3proxy) with the bucket SLUICE_S3_BUCKET";
    return server;
  }
  server.available = true;
  return server;
}

}  // namespace sluice::s3::testing
