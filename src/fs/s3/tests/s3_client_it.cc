// S3Client against a real S3-compatible server (s3proxy in the project's tests; s3_test_env.h says where).
// Every test works below its own random prefix of the test bucket and removes what it wrote.
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
#include "s3_test_env.h"

namespace sluice::s3 {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  SplitMix64 random(seed);
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = random.next();
    for (size_t j = 0; j < 8 && i + j < n; ++j) out[i + j] = static_cast<uint8_t>(v >> (8 * j));
  }
  return out;
}

std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A loopback port nothing listens on (bound, then closed).
int closed_port() {
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
    server_ = testing::s3_test_server_from_env();
    ASSERT_TRUE(server_.available) << server_.reason;
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
  std::unique_ptr<S3Client> client_via(const testing::S3FaultProxy& proxy, int32_t max_retries) {
    S3Options o = options();
    o.endpoint = "http://127.0.0.1:" + std::to_string(proxy.port());
    o.max_retries = max_retries;
    return client_with(o);
  }

  int server_port() const { return std::stoi(server_.endpoint.substr(server_.endpoint.rfind(':') + 1)); }

  testing::S3TestServer server_;
  std::string bucket_;
  std::string prefix_;
  std::string scratch_;
  std::unique_ptr<S3Client> client_;
};

TEST_F(S3ClientIT, PutGetHeadRangeDelete) {
  const std::string key = prefix_ + "object.bin";
  std::vector<uint8_t> bytes = random_bytes(100'000, 1);
  ASSERT_TRUE(client_->put_object(bucket_, key, bytes).is_ok());

  Result<std::vector<uint8_t>> got = client_->get_object(bucket_, key);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(*got, bytes);

  Result<ObjectHead> head = client_->head_object(bucket_, key);
  ASSERT_TRUE(head.is_ok()) << head.status().to_string();
  EXPECT_EQ(head->size_bytes, bytes.size());
  EXPECT_EQ(head->etag.size(), 34u) << head->etag;  // a quoted MD5

  Result<std::vector<uint8_t>> range = client_->get_object_range(bucket_, key, 1000, 500);
  ASSERT_TRUE(range.is_ok()) << range.status().to_string();
  EXPECT_EQ(*range, std::vector<uint8_t>(bytes.begin() + 1000, bytes.begin() + 1500));
  Result<std::vector<uint8_t>> tail = client_->get_object_range(bucket_, key, 99'990, 500);
  ASSERT_TRUE(tail.is_ok()) << tail.status().to_string();
  EXPECT_EQ(tail->size(), 10u);  // the object ends first
  Result<std::vector<uint8_t>> past = client_->get_object_range(bucket_, key, 200'000, 10);
  ASSERT_FALSE(past.is_ok());
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidArgument) << past.status().to_string();

  ASSERT_TRUE(client_->delete_object(bucket_, key).is_ok());
  Result<std::vector<uint8_t>> gone = client_->get_object(bucket_, key);
  ASSERT_FALSE(gone.is_ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound) << gone.status().to_string();
  EXPECT_NE(gone.status().message().find(key), std::string::npos) << gone.status().message();
  Result<ObjectHead> head_gone = client_->head_object(bucket_, key);
  ASSERT_FALSE(head_gone.is_ok());
  EXPECT_EQ(head_gone.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(client_->delete_object(bucket_, key).is_ok());  // deleting a missing key is fine
}

TEST_F(S3ClientIT, KeysWithCharactersThatNeedEncoding) {
  // (S3 also takes keys with "./" and "../" segments, which the client sends as they are; s3proxy's HTTP server
  // refuses such paths with HTTP 400, so they are not tried here.)
  for (std::string name : {"a b+c=d&e%f~g.txt", "caf\xC3\xA9/x", "semi;colon,comma(1)[2]", "x/..dots../y."}) {
    const std::string key = prefix_ + name;
    std::vector<uint8_t> bytes = bytes_of("payload of " + name);
    Status put = client_->put_object(bucket_, key, bytes);
    ASSERT_TRUE(put.is_ok()) << key << ": " << put.to_string();
    Result<std::vector<uint8_t>> got = client_->get_object(bucket_, key);
    ASSERT_TRUE(got.is_ok()) << key << ": " << got.status().to_string();
    EXPECT_EQ(*got, bytes) << key;
  }
  Result<ListObjectsResult> listed = client_->list_objects(bucket_, prefix_ + "a b+");
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  EXPECT_EQ(keys_of(listed->objects), std::vector<std::string>{prefix_ + "a b+c=d&e%f~g.txt"});
}

TEST_F(S3ClientIT, ListFollowsContinuationTokensAndRollsUpPrefixes) {
  std::vector<std::string> expected;
  for (int i = 0; i < 25; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "k%02d", i);
    expected.push_back(prefix_ + "flat/" + name);
    ASSERT_TRUE(client_->put_object(bucket_, expected.back(), bytes_of(name)).is_ok());
  }
  S3ClientStats before = client_->stats();
  Result<ListObjectsResult> listed = client_->list_objects(bucket_, prefix_ + "flat/", "", /*max_keys_per_page=*/7);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  EXPECT_EQ(keys_of(listed->objects), expected);
  EXPECT_EQ(client_->stats().requests - before.requests, 4u);  // 7 + 7 + 7 + 4
  for (const ObjectInfo& o : listed->objects) EXPECT_EQ(o.size_bytes, 3u) << o.key;

  for (std::string name : {"tree/a/1", "tree/a/2", "tree/b/1", "tree/c"}) {
    ASSERT_TRUE(client_->put_object(bucket_, prefix_ + name, bytes_of("x")).is_ok());
  }
  Result<ListObjectsResult> tree = client_->list_objects(bucket_, prefix_ + "tree/", "/", 2);
  ASSERT_TRUE(tree.is_ok()) << tree.status().to_string();
  EXPECT_EQ(keys_of(tree->objects), std::vector<std::string>{prefix_ + "tree/c"});
  EXPECT_EQ(tree->common_prefixes, (std::vector<std::string>{prefix_ + "tree/a/", prefix_ + "tree/b/"}));
}

TEST_F(S3ClientIT, MoreThanAThousandKeysListAndDeleteInBatches) {
  constexpr int kKeys = 1005;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "%04d", i);
    keys.push_back(prefix_ + "many/" + name);
  }
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&] {
      for (int i = next++; i < kKeys; i = next++) {
        if (!client_->put_object(bucket_, keys[static_cast<size_t>(i)], bytes_of("v")).is_ok()) ++failures;
      }
    });
  }
  for (std::thread& w : writers) w.join();
  ASSERT_EQ(failures.load(), 0);

  S3ClientStats before = client_->stats();
  Result<ListObjectsResult> listed = client_->list_objects(bucket_, prefix_ + "many/");
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  EXPECT_EQ(keys_of(listed->objects), keys);
  EXPECT_EQ(client_->stats().requests - before.requests, 2u);  // 1000 + 5

  std::vector<std::string> to_delete = keys;
  to_delete.push_back(prefix_ + "many/never-existed");
  before = client_->stats();
  Result<std::vector<DeleteObjectError>> errors = client_->delete_objects(bucket_, to_delete);
  ASSERT_TRUE(errors.is_ok()) << errors.status().to_string();
  EXPECT_TRUE(errors->empty());
  EXPECT_EQ(client_->stats().requests - before.requests, 2u);  // 1000 + 6 keys
  Result<ListObjectsResult> after = client_->list_objects(bucket_, prefix_ + "many/");
  ASSERT_TRUE(after.is_ok());
  EXPECT_TRUE(keys_of(after->objects).empty());
}

TEST_F(S3ClientIT, UploadFileGoesMultipartWithPartsInParallel) {
  const std::string local = scratch_ + "/big.bin";
  std::vector<uint8_t> bytes = random_bytes(4 * kMinPartSizeBytes + 123'457, 2);  // 5 parts, the last small
  write_file(local, bytes);
  const std::string key = prefix_ + "big.bin";
  S3ClientStats before = client_->stats();
  Result<uint64_t> size = client_->upload_file(bucket_, key, local);
  ASSERT_TRUE(size.is_ok()) << size.status().to_string();
  EXPECT_EQ(*size, bytes.size());
  EXPECT_EQ(client_->stats().requests - before.requests, 7u);  // create + 5 parts + complete
  EXPECT_GE(client_->stats().peak_requests_in_flight, 2u);     // parts overlapped
  EXPECT_GE(client_->stats().bytes_sent - before.bytes_sent, bytes.size());

  Result<ObjectHead> head = client_->head_object(bucket_, key);
  ASSERT_TRUE(head.is_ok());
  EXPECT_EQ(head->size_bytes, bytes.size());
  EXPECT_TRUE(head->etag.ends_with("-5\"")) << head->etag;  // a multipart ETag
  Result<std::vector<uint8_t>> got = client_->get_object(bucket_, key);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_TRUE(*got == bytes);

  Result<std::vector<MultipartUploadInfo>> uploads = client_->list_multipart_uploads(bucket_, prefix_);
  ASSERT_TRUE(uploads.is_ok()) << uploads.status().to_string();
  EXPECT_TRUE(uploads->empty());  // completed, nothing left behind
}

TEST_F(S3ClientIT, SmallAndEmptyFilesGoInOnePut) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{4} << 20}) {
    const std::string local = scratch_ + "/small.bin";
    std::vector<uint8_t> bytes = random_bytes(n, 3);
    write_file(local, bytes);
    const std::string key = prefix_ + "small-" + std::to_string(n);
    S3ClientStats before = client_->stats();
    Result<uint64_t> size = client_->upload_file(bucket_, key, local);
    ASSERT_TRUE(size.is_ok()) << size.status().to_string();
    EXPECT_EQ(*size, n);
    EXPECT_EQ(client_->stats().requests - before.requests, 1u);
    const std::string back = scratch_ + "/back.bin";
    Result<uint64_t> down = client_->download_to_file(bucket_, key, back);
    ASSERT_TRUE(down.is_ok()) << down.status().to_string();
    EXPECT_EQ(*down, n);
    EXPECT_TRUE(read_file(back) == bytes) << n;
  }
  Result<uint64_t> missing = client_->upload_file(bucket_, prefix_ + "x", scratch_ + "/no-such-file");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-file"), std::string::npos);
}

TEST_F(S3ClientIT, DownloadToFileFetchesRangesInParallel) {
  const std::string key = prefix_ + "download.bin";
  std::vector<uint8_t> bytes = random_bytes(3 * kMinPartSizeBytes + 77, 4);  // 4 ranges
  ASSERT_TRUE(client_->put_object(bucket_, key, bytes).is_ok());
  const std::string local = scratch_ + "/download.bin";
  write_file(local, random_bytes(40 * kMiB, 5));  // longer than the object: must be truncated
  S3ClientStats before = client_->stats();
  Result<uint64_t> size = client_->download_to_file(bucket_, key, local);
  ASSERT_TRUE(size.is_ok()) << size.status().to_string();
  EXPECT_EQ(*size, bytes.size());
  EXPECT_EQ(client_->stats().requests - before.requests, 5u);  // HEAD + 4 ranged GETs
  EXPECT_GE(client_->stats().peak_requests_in_flight, 2u);     // ranges overlapped
  EXPECT_TRUE(read_file(local) == bytes);

  Result<uint64_t> missing = client_->download_to_file(bucket_, prefix_ + "no-such-key", scratch_ + "/m.bin");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(scratch_ + "/m.bin"));
}

TEST_F(S3ClientIT, MultipartUploadCompletedByAnotherClientAndNotTwice) {
  const std::string key = prefix_ + "resumed.bin";
  std::vector<uint8_t> part1 = random_bytes(kMinPartSizeBytes, 6);
  std::vector<uint8_t> part2 = random_bytes(1000, 7);
  Result<std::string> upload_id = client_->create_multipart_upload(bucket_, key);
  ASSERT_TRUE(upload_id.is_ok()) << upload_id.status().to_string();
  Result<std::string> etag1 = client_->upload_part(bucket_, key, *upload_id, 1, part1);
  Result<std::string> etag2 = client_->upload_part(bucket_, key, *upload_id, 2, part2);
  ASSERT_TRUE(etag1.is_ok()) << etag1.status().to_string();
  ASSERT_TRUE(etag2.is_ok()) << etag2.status().to_string();

  Result<std::vector<MultipartUploadInfo>> uploads = client_->list_multipart_uploads(bucket_, prefix_);
  ASSERT_TRUE(uploads.is_ok()) << uploads.status().to_string();
  ASSERT_EQ(uploads->size(), 1u);
  EXPECT_EQ((*uploads)[0].key, key);
  EXPECT_EQ((*uploads)[0].upload_id, *upload_id);
  Result<std::vector<PartInfo>> parts = client_->list_parts(bucket_, key, *upload_id);
  ASSERT_TRUE(parts.is_ok()) << parts.status().to_string();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0], (PartInfo{1, *etag1, part1.size()}));
  EXPECT_EQ((*parts)[1], (PartInfo{2, *etag2, part2.size()}));

  // What a checkpoint would persist: the upload id and the parts. A new client (a restarted process) completes.
  std::vector<CompletedPart> persisted{{1, *etag1}, {2, *etag2}};
  std::unique_ptr<S3Client> restarted = client_with(options());
  Result<std::string> etag = restarted->complete_multipart_upload(bucket_, key, *upload_id, persisted);
  ASSERT_TRUE(etag.is_ok()) << etag.status().to_string();
  EXPECT_TRUE(same_etag(*etag, expected_multipart_etag(persisted).value())) << *etag;

  std::vector<uint8_t> whole = part1;
  whole.insert(whole.end(), part2.begin(), part2.end());
  Result<std::vector<uint8_t>> got = client_->get_object(bucket_, key);
  ASSERT_TRUE(got.is_ok());
  EXPECT_TRUE(*got == whole);

  // Completing again fails recognisably; the object's ETag tells that it was this upload that completed.
  Result<std::string> again = restarted->complete_multipart_upload(bucket_, key, *upload_id, persisted);
  ASSERT_FALSE(again.is_ok());
  EXPECT_EQ(again.status().code(), StatusCode::kNotFound) << again.status().to_string();
  EXPECT_NE(again.status().message().find(*upload_id), std::string::npos) << again.status().message();
  EXPECT_NE(again.status().message().find("completed, aborted or never created"), std::string::npos);
  Result<ObjectHead> head = client_->head_object(bucket_, key);
  ASSERT_TRUE(head.is_ok());
  EXPECT_TRUE(same_etag(head->etag, expected_multipart_etag(persisted).value())) << head->etag;
}

TEST_F(S3ClientIT, AbortedUploadsDisappear) {
  const std::string key = prefix_ + "aborted.bin";
  Result<std::string> upload_id = client_->create_multipart_upload(bucket_, key);
  ASSERT_TRUE(upload_id.is_ok()) << upload_id.status().to_string();
  ASSERT_TRUE(client_->upload_part(bucket_, key, *upload_id, 1, random_bytes(1000, 8)).is_ok());
  Result<std::string> other_id = client_->create_multipart_upload(bucket_, prefix_ + "other.bin");
  ASSERT_TRUE(other_id.is_ok());

  Result<std::vector<MultipartUploadInfo>> before = client_->list_multipart_uploads(bucket_, prefix_);
  ASSERT_TRUE(before.is_ok());
  EXPECT_EQ(before->size(), 2u);

  ASSERT_TRUE(client_->abort_multipart_upload(bucket_, key, *upload_id).is_ok());
  Result<std::vector<MultipartUploadInfo>> after = client_->list_multipart_uploads(bucket_, prefix_);
  ASSERT_TRUE(after.is_ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].upload_id, *other_id);

  Status again = client_->abort_multipart_upload(bucket_, key, *upload_id);
  EXPECT_EQ(again.code(), StatusCode::kNotFound) << again.to_string();
  // S3 answers NoSuchUpload; s3proxy lists no parts.
  Result<std::vector<PartInfo>> parts = client_->list_parts(bucket_, key, *upload_id);
  if (parts.is_ok()) {
    EXPECT_TRUE(parts->empty());
  } else {
    EXPECT_EQ(parts.status().code(), StatusCode::kNotFound) << parts.status().to_string();
  }
  Result<std::string> part = client_->upload_part(bucket_, key, *upload_id, 0, random_bytes(10, 9));
  EXPECT_EQ(part.status().code(), StatusCode::kInvalidArgument);  // part numbers start at 1
  EXPECT_FALSE(client_->get_object(bucket_, key).is_ok());         // nothing was published
}

TEST_F(S3ClientIT, WrongSecretIsRefusedAtOnceWithoutShowingTheSecret) {
  S3Options o = options();
  o.secret_key = "wrong-secret-Zq9XjK2";
  std::unique_ptr<S3Client> client = client_with(o);
  const std::string key = prefix_ + "secret-test";
  Result<std::vector<uint8_t>> got = client->get_object(bucket_, key);
  ASSERT_FALSE(got.is_ok());
  const Status& s = got.status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_FALSE(s.retriable());
  EXPECT_NE(s.message().find("SignatureDoesNotMatch"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(server_.endpoint), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(bucket_), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(key), std::string::npos) << s.message();
  EXPECT_EQ(s.to_string().find(o.secret_key), std::string::npos) << s.message();
  EXPECT_EQ(s.to_string().find(server_.secret_key), std::string::npos) << s.message();
  EXPECT_EQ(client->stats().requests, 1u);  // not retried
  EXPECT_EQ(client->put_object(bucket_, key, bytes_of("x")).code(), StatusCode::kInvalidArgument);

  o = options();
  o.access_key = "no-such-access-key";
  Status unknown_key = client_with(o)->put_object(bucket_, key, bytes_of("x"));
  EXPECT_EQ(unknown_key.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown_key.message().find("InvalidAccessKeyId"), std::string::npos) << unknown_key.message();
}

TEST_F(S3ClientIT, MissingBucketIsNamed) {
  const std::string bucket = "sluice-no-such-bucket-" + std::to_string(std::random_device{}() % 100000);
  Result<std::vector<uint8_t>> got = client_->get_object(bucket, "k");
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << got.status().to_string();
  EXPECT_EQ(got.status().message().rfind("bucket '" + bucket + "' does not exist at " + server_.endpoint, 0), 0u)
      << got.status().message();
  Status put = client_->put_object(bucket, "k", bytes_of("x"));
  EXPECT_NE(put.message().find("bucket '" + bucket + "' does not exist"), std::string::npos) << put.message();
  Result<ListObjectsResult> listed = client_->list_objects(bucket, "");
  EXPECT_NE(listed.status().message().find("bucket '" + bucket + "' does not exist"), std::string::npos)
      << listed.status().message();
}

TEST_F(S3ClientIT, ConnectionRefusedIsRetriedMaxRetriesTimesThenAnIOError) {
  S3Options o = options();
  o.endpoint = "http://127.0.0.1:" + std::to_string(closed_port());
  o.max_retries = 3;
  o.retry_base_delay_ms = 20;
  o.retry_max_delay_ms = 50;
  std::mutex mu;
  std::vector<int64_t> delays;
  S3ClientHooks hooks;
  hooks.random = seeded_random(99);
  hooks.sleep = [&](int64_t ms) {
    std::lock_guard<std::mutex> lock(mu);
    delays.push_back(ms);
  };
  std::unique_ptr<S3Client> client = client_with(o, hooks);
  Status s = client->put_object(bucket_, "k", bytes_of("x"));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_TRUE(s.retriable());
  EXPECT_NE(s.message().find("PutObject"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(o.endpoint), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("s3://" + bucket_ + "/k"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("after 4 attempts"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("curl error 7"), std::string::npos) << s.message();
  EXPECT_EQ(client->stats().requests, 4u);
  EXPECT_EQ(client->stats().retries, 3u);
  ASSERT_EQ(delays.size(), 3u);
  for (size_t i = 0; i < delays.size(); ++i) {
    EXPECT_GE(delays[i], 0);
    EXPECT_LE(delays[i], backoff_ceiling_ms(static_cast<int32_t>(i + 1), 20, 50));
  }
  // The same seed replays the same delays.
  std::vector<int64_t> first = delays;
  delays.clear();
  hooks.random = seeded_random(99);
  (void)client_with(o, hooks)->put_object(bucket_, "k", bytes_of("x"));
  EXPECT_EQ(delays, first);
}

TEST_F(S3ClientIT, TimeoutsAreBoundedAndRetried) {
  SilentServer silent;
  S3Options o = options();
  o.endpoint = "http://127.0.0.1:" + std::to_string(silent.port());
  o.request_timeout_ms = 300;
  o.max_retries = 2;
  std::unique_ptr<S3Client> client = client_with(o);
  auto start = Clock::now();
  Result<std::vector<uint8_t>> got = client->get_object(bucket_, "k");
  auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIOError);
  EXPECT_TRUE(got.status().retriable());
  EXPECT_NE(got.status().message().find("after 3 attempts"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("curl error 28"), std::string::npos) << got.status().message();  // timeout
  EXPECT_GE(elapsed_ms, 3 * 300);
  EXPECT_LT(elapsed_ms, 3 * 300 + 2 * 100 + 1500) << "3 attempts of 300 ms and 2 backoffs of at most 100 ms";
}

TEST_F(S3ClientIT, ServerErrorsAreRetriedUntilTheySucceed) {
  const std::string key = prefix_ + "flaky.bin";
  std::vector<uint8_t> bytes = random_bytes(1000, 10);
  ASSERT_TRUE(client_->put_object(bucket_, key, bytes).is_ok());
  testing::S3FaultProxy proxy(server_port());
  proxy.inject("GET /" + bucket_ + "/" + key, testing::S3FaultProxy::Fault::kErrorResponse, 2, 503, "SlowDown");
  std::unique_ptr<S3Client> client = client_via(proxy, 3);
  Result<std::vector<uint8_t>> got = client->get_object(bucket_, key);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(*got, bytes);
  EXPECT_EQ(proxy.faults_injected(), 2);
  EXPECT_EQ(client->stats().requests, 3u);
  EXPECT_EQ(client->stats().retries, 2u);
}

TEST_F(S3ClientIT, UploadFileAbortsTheUploadWhenAPartKeepsFailing) {
  const std::string local = scratch_ + "/doomed.bin";
  write_file(local, random_bytes(3 * kMinPartSizeBytes + 1, 11));  // 4 parts
  const std::string key = prefix_ + "doomed.bin";
  testing::S3FaultProxy proxy(server_port());
  proxy.inject("partNumber=3&", testing::S3FaultProxy::Fault::kErrorResponse, -1, 500, "InternalError");
  std::unique_ptr<S3Client> client = client_via(proxy, 2);
  Result<uint64_t> uploaded = client->upload_file(bucket_, key, local);
  ASSERT_FALSE(uploaded.is_ok());
  const Status& s = uploaded.status();
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s.to_string();
  EXPECT_TRUE(s.retriable());
  EXPECT_NE(s.message().find("UploadPart"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("after 3 attempts"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("HTTP 500 InternalError"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("(aborted)"), std::string::npos) << s.message();
  EXPECT_EQ(proxy.faults_injected(), 3);

  Result<std::vector<MultipartUploadInfo>> uploads = client_->list_multipart_uploads(bucket_, prefix_);
  ASSERT_TRUE(uploads.is_ok()) << uploads.status().to_string();
  EXPECT_TRUE(uploads->empty()) << "the failed upload was not aborted";
  EXPECT_EQ(client_->head_object(bucket_, key).status().code(), StatusCode::kNotFound);
}

TEST_F(S3ClientIT, ACompletionWhoseAnswerWasLostIsRecognisedOnRetry) {
  const std::string key = prefix_ + "lost-answer.bin";
  std::vector<uint8_t> part = random_bytes(1000, 12);
  Result<std::string> upload_id = client_->create_multipart_upload(bucket_, key);
  ASSERT_TRUE(upload_id.is_ok()) << upload_id.status().to_string();
  Result<std::string> etag = client_->upload_part(bucket_, key, *upload_id, 1, part);
  ASSERT_TRUE(etag.is_ok()) << etag.status().to_string();

  testing::S3FaultProxy proxy(server_port());
  proxy.inject("POST /" + bucket_ + "/" + key + "?uploadId=", testing::S3FaultProxy::Fault::kLoseResponse, 1);
  std::unique_ptr<S3Client> client = client_via(proxy, 3);
  Result<std::string> completed = client->complete_multipart_upload(bucket_, key, *upload_id, {{1, *etag}});
  ASSERT_TRUE(completed.is_ok()) << completed.status().to_string();
  EXPECT_EQ(proxy.faults_injected(), 1);
  EXPECT_GE(client->stats().retries, 1u);
  EXPECT_TRUE(same_etag(*completed, expected_multipart_etag({{1, *etag}}).value())) << *completed;
  Result<std::vector<uint8_t>> got = client_->get_object(bucket_, key);
  ASSERT_TRUE(got.is_ok());
  EXPECT_EQ(*got, part);
}

TEST_F(S3ClientIT, ManyThreadsShareOneClient) {
  constexpr int kThreads = 8;
  constexpr int kObjectsPerThread = 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kObjectsPerThread; ++i) {
        std::string key = prefix_ + "t" + std::to_string(t) + "/" + std::to_string(i);
        std::vector<uint8_t> bytes = random_bytes(1000 + static_cast<size_t>(i), static_cast<uint64_t>(t * 100 + i));
        if (!client_->put_object(bucket_, key, bytes).is_ok()) ++failures;
        Result<std::vector<uint8_t>> got = client_->get_object(bucket_, key);
        if (!got.is_ok() || *got != bytes) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(client_->stats().requests, 2u * kThreads * kObjectsPerThread);
  EXPECT_EQ(client_->stats().retries, 0u);
}

// Not a check: prints upload_file / download_to_file throughput for a 64 MiB file with 8 MiB parts, one part at
// a time and four at a time. Run with --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'.
TEST_F(S3ClientIT, DISABLED_ThroughputFigures) {
  const std::string local = scratch_ + "/throughput.bin";
  const std::string back = scratch_ + "/throughput.back";
  std::vector<uint8_t> bytes = random_bytes(64 * kMiB, 13);
  write_file(local, bytes);
  for (int32_t parallelism : {1, 4}) {
    S3Options o = options();
    o.part_size_bytes = 8 * kMiB;
    o.multipart_threshold_bytes = 8 * kMiB;
    o.upload_parallelism = parallelism;
    o.download_parallelism = parallelism;
    std::unique_ptr<S3Client> client = client_with(o);
    const std::string key = prefix_ + "throughput-" + std::to_string(parallelism);
    auto start = Clock::now();
    ASSERT_TRUE(client->upload_file(bucket_, key, local).is_ok());
    double up_s = std::chrono::duration<double>(Clock::now() - start).count();
    start = Clock::now();
    ASSERT_TRUE(client->download_to_file(bucket_, key, back).is_ok());
    double down_s = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_TRUE(read_file(back) == bytes);
    std::printf("parallelism %d: upload_file %.0f MiB/s (%llu requests), download_to_file %.0f MiB/s\n", parallelism,
                64 / up_s, static_cast<unsigned long long>(client->stats().requests), 64 / down_s);
  }
}

}  // namespace
}  // namespace sluice::s3
