// S3Client's failures against a real S3-compatible server: refused credentials, a missing bucket, refused
// connections, timeouts, and server errors injected by S3FaultProxy.
#include <gtest/gtest.h>

#include "s3_client_it_fixture.h"

namespace sluice::s3::testing {
namespace {

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
  S3FaultProxy proxy(server_port());
  proxy.inject("GET /" + bucket_ + "/" + key, S3FaultProxy::Fault::kErrorResponse, 2, 503, "SlowDown");
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
  S3FaultProxy proxy(server_port());
  proxy.inject("partNumber=3&", S3FaultProxy::Fault::kErrorResponse, -1, 500, "InternalError");
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

  S3FaultProxy proxy(server_port());
  proxy.inject("POST /" + bucket_ + "/" + key + "?uploadId=", S3FaultProxy::Fault::kLoseResponse, 1);
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

// A kept-alive connection that turns out closed when the next request is sent on it (the server's idle timeout):
// curl sends the request again on a new connection by itself, from the start of its body. No retry of ours is
// needed (none is allowed here); a body curl cannot rewind failed such uploads with curl error 65.
TEST_F(S3ClientIT, AnUploadOnAReusedConnectionThatDiedIsSentAgainWhole) {
  const std::string key = prefix_ + "reused.bin";
  std::vector<uint8_t> bytes = random_bytes(200'000, 13);
  S3FaultProxy proxy(server_port());
  std::unique_ptr<S3Client> client = client_via(proxy, 0);
  ASSERT_TRUE(client->put_object(bucket_, key + ".first", random_bytes(10, 14)).is_ok()) << "opens the connection";
  proxy.inject("PUT /" + bucket_ + "/" + key + " ", S3FaultProxy::Fault::kCloseUnanswered, 1);
  const Status put = client->put_object(bucket_, key, bytes);
  ASSERT_TRUE(put.is_ok()) << put.to_string();
  EXPECT_EQ(proxy.faults_injected(), 1);
  EXPECT_EQ(client->stats().retries, 0u);
  Result<std::vector<uint8_t>> got = client_->get_object(bucket_, key);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(*got, bytes);
}

}  // namespace
}  // namespace sluice::s3::testing
