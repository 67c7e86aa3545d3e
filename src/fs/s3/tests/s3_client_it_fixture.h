// The fixture and helpers of s3_client_it: a client of the S3 test server (test-infra/test_servers.h), a random prefix per
// test that TearDown removes, a scratch folder, and sockets that refuse or never answer.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "fs/s3/s3_client.h"
#include "fs/s3/s3_digest.h"
#include "fs/s3/s3_retry_policy.h"
#include "s3_fault_proxy.h"
#include "test_servers.h"

namespace sluice::s3::testing {

using Clock = std::chrono::steady_clock;

inline std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  SplitMix64 random(seed);
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = random.next();
    for (size_t j = 0; j < 8 && i + j < n; ++j) out[i + j] = static_cast<uint8_t>(v >> (8 * j));
  }
  return out;
}

inline std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A loopback port nothing listens on (bound, then closed).
inline int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A loopback socket that accepts connections (in the kernel's backlog) and never answers.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 64);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentServer() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class S3ClientIT : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = sluice::testing::s3_test_server();
    ASSERT_EQ(server_.server.state, sluice::testing::TestServer::State::kAvailable) << server_.server.reason;
    bucket_ = server_.bucket;
    std::random_device rd;
    prefix_ = "s3-client-it/" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
              std::to_string(rd()) + "/";
    Result<std::unique_ptr<S3Client>> client = S3Client::create(options());
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    client_ = std::move(client).value();
    scratch_ = ::testing::TempDir() + "s3_client_it_" + std::to_string(rd());
    std::filesystem::create_directories(scratch_);
  }

  void TearDown() override {
    if (client_ != nullptr) {
      Result<std::vector<MultipartUploadInfo>> uploads = client_->list_multipart_uploads(bucket_, prefix_);
      if (uploads.is_ok()) {
        for (const MultipartUploadInfo& u : *uploads) (void)client_->abort_multipart_upload(bucket_, u.key, u.upload_id);
      }
      Result<ListObjectsResult> left = client_->list_objects(bucket_, prefix_);
      // Folder entries of s3proxy's filesystem store go with their last key (deleting one takes it 10 s).
      if (left.is_ok()) (void)client_->delete_objects(bucket_, keys_of(left->objects));
    }
    std::filesystem::remove_all(scratch_);
  }

  S3Options options() const {
    S3Options o;
    o.endpoint = server_.endpoint;
    o.region = server_.region;
    o.access_key = server_.access_key;
    o.secret_key = server_.secret_key;
    o.path_style_access = true;
    o.retry_base_delay_ms = 10;
    o.retry_max_delay_ms = 100;
    o.part_size_bytes = kMinPartSizeBytes;
    o.multipart_threshold_bytes = kMinPartSizeBytes;
    return o;
  }

  std::unique_ptr<S3Client> client_with(const S3Options& o, S3ClientHooks hooks = {}) {
    Result<std::unique_ptr<S3Client>> client = S3Client::create(o, std::move(hooks));
    EXPECT_TRUE(client.is_ok()) << client.status().to_string();
    return client.is_ok() ? std::move(client).value() : nullptr;
  }

  // Keys of the listing, without entries for folders (s3proxy's filesystem store lists a folder on its disk
  // as a key ending in '/' with no ETag).
  static std::vector<std::string> keys_of(const std::vector<ObjectInfo>& objects) {
    std::vector<std::string> keys;
    for (const ObjectInfo& o : objects) {
      if (!(o.key.ends_with('/') && o.etag.empty())) keys.push_back(o.key);
    }
    return keys;
  }

  // A client that talks to the server through `proxy`.
  std::unique_ptr<S3Client> client_via(const S3FaultProxy& proxy, int32_t max_retries) {
    S3Options o = options();
    o.endpoint = "http://127.0.0.1:" + std::to_string(proxy.port());
    o.max_retries = max_retries;
    return client_with(o);
  }

  int server_port() const { return std::stoi(server_.endpoint.substr(server_.endpoint.rfind(':') + 1)); }

  sluice::testing::S3TestServer server_;
  std::string bucket_;
  std::string prefix_;
  std::string scratch_;
  std::unique_ptr<S3Client> client_;
};


}  // namespace sluice::s3::testing
