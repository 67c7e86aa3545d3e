// s3_test_server(): the fixture's S3 server is found and answers; environment variables win over the state
// directory's env file, which may quote its values; the skip and failure states say why.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "test_servers.h"

namespace sluice::testing {
namespace {

const char* const kVariables[] = {"SLUICE_S3_ENDPOINT", "SLUICE_S3_ACCESS_KEY", "SLUICE_S3_SECRET_KEY",
                                  "SLUICE_S3_REGION",   "SLUICE_S3_BUCKET",     "SLUICE_S3_STATE_DIR"};

// Sets the S3 variables for one test and puts the old values back after it.
class ScopedS3Environment {
 public:
  ScopedS3Environment() {
    for (const char* name : kVariables) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      ::unsetenv(name);
    }
  }
  ~ScopedS3Environment() {
    for (const char* name : kVariables) {
      if (auto it = saved_.find(name); it != saved_.end()) {
        ::setenv(name, it->second.c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }
  ScopedS3Environment(const ScopedS3Environment&) = delete;
  ScopedS3Environment& operator=(const ScopedS3Environment&) = delete;

  void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

 private:
  std::map<std::string, std::string> saved_;
};

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The status code of an anonymous GET of `path` from a "http://127.0.0.1:<port>" endpoint, over a plain socket.
std::optional<int> anonymous_get_status(const std::string& endpoint, const std::string& path) {
  const std::string prefix = "http://127.0.0.1:";
  if (endpoint.rfind(prefix, 0) != 0) return std::nullopt;
  const int port = std::stoi(endpoint.substr(prefix.size()));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                "\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) response.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return std::nullopt;
  return std::stoi(response.substr(9, 3));
}

TEST(S3TestServerTest, TheFixturesServerIsFoundAndAnswers) {
  const S3TestServer s3 = s3_test_server();
  ASSERT_EQ(s3.server.state, TestServer::State::kAvailable) << s3.server.reason;
  EXPECT_EQ(s3.server.address, s3.endpoint);
  EXPECT_EQ(s3.endpoint.rfind("http://127.0.0.1:", 0), 0u) << s3.endpoint;
  EXPECT_FALSE(s3.access_key.empty());
  EXPECT_FALSE(s3.secret_key.empty());
  EXPECT_EQ(s3.region, "us-east-1");
  EXPECT_EQ(s3.bucket, "sluice-test");
  // Without a signature the private bucket's listing answers 403 AccessDenied: an S3 server, listening, that checks.
  EXPECT_EQ(anonymous_get_status(s3.endpoint, "/" + s3.bucket), 403);
}

TEST(S3TestServerTest, EnvironmentVariablesWinOverTheEnvFile) {
  ScopedS3Environment scoped;
  const auto dir = fresh_dir("s3-env-precedence");
  std::ofstream(dir / "env") << "# written by s3-start\n"
                             << "export SLUICE_S3_ENDPOINT=http://127.0.0.1:1/\n"
                             << "export SLUICE_S3_ACCESS_KEY='file key'\n"
                             << "SLUICE_S3_SECRET_KEY=\"file secret\"\n"
                             << "export SLUICE_S3_REGION=eu-west-1\n"
                             << "export SLUICE_S3_BUCKET=file-bucket\n";
  scoped.set("SLUICE_S3_STATE_DIR", dir.string());

  S3TestServer s3 = s3_test_server();
  ASSERT_EQ(s3.server.state, TestServer::State::kAvailable) << s3.server.reason;
  EXPECT_EQ(s3.endpoint, "http://127.0.0.1:1");  // no trailing slash
  EXPECT_EQ(s3.access_key, "file key");
  EXPECT_EQ(s3.secret_key, "file secret");
  EXPECT_EQ(s3.region, "eu-west-1");
  EXPECT_EQ(s3.bucket, "file-bucket");

  scoped.set("SLUICE_S3_ENDPOINT", "http://127.0.0.1:2");
  scoped.set("SLUICE_S3_BUCKET", "env-bucket");
  s3 = s3_test_server();
  EXPECT_EQ(s3.endpoint, "http://127.0.0.1:2");
  EXPECT_EQ(s3.server.address, "http://127.0.0.1:2");
  EXPECT_EQ(s3.bucket, "env-bucket");
  EXPECT_EQ(s3.access_key, "file key");  // not set in the environment: from the file
}

TEST(S3TestServerTest, AnEndpointWithoutKeysIsNotStarted) {
  ScopedS3Environment scoped;
  scoped.set("SLUICE_S3_ENDPOINT", "http://127.0.0.1:3");
  scoped.set("SLUICE_S3_ACCESS_KEY", "key");
  const S3TestServer s3 = s3_test_server();
  EXPECT_EQ(s3.server.state, TestServer::State::kNotStarted);
  EXPECT_NE(s3.server.reason.find("SLUICE_S3_SECRET_KEY"), std::string::npos) << s3.server.reason;
  EXPECT_EQ(s3.region, "us-east-1");
  EXPECT_EQ(s3.bucket, "sluice-test");
}

TEST(S3TestServerTest, UnavailableAndNotStartedSayWhy) {
  ScopedS3Environment scoped;
  EXPECT_EQ(s3_test_server().server.state, TestServer::State::kNotStarted);

  const auto dir = fresh_dir("s3-unavailable");
  scoped.set("SLUICE_S3_STATE_DIR", dir.string());
  S3TestServer s3 = s3_test_server();
  EXPECT_EQ(s3.server.state, TestServer::State::kNotStarted);
  EXPECT_NE(s3.server.reason.find("did not start"), std::string::npos) << s3.server.reason;

  std::ofstream(dir / "unavailable") << "Maven Central cannot be reached\n";
  s3 = s3_test_server();
  EXPECT_EQ(s3.server.state, TestServer::State::kUnavailable);
  EXPECT_EQ(s3.server.reason, "Maven Central cannot be reached");
}

}  // namespace
}  // namespace sluice::testing
