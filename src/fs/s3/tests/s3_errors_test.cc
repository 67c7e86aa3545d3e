// Which Status each failed S3 request becomes, and what its message says (s3_errors.h).
#include "fs/s3/s3_errors.h"

#include <curl/curl.h>
#include <gtest/gtest.h>

namespace sluice::s3 {
namespace {

const RequestContext kGet{"GetObject", "http://127.0.0.1:9000", "sluice-test", "chk-1/_metadata", "", "AKIDEXAMPLE"};

AttemptFailure http(long status, std::string code, std::string message = "") {
  AttemptFailure f;
  f.http_status = status;
  f.error = S3ErrorBody{std::move(code), std::move(message), "4442587FB7D0A2F9"};
  return f;
}

void expect_names_the_request(const Status& s) {
  EXPECT_NE(s.message().find("GetObject"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("s3://sluice-test/chk-1/_metadata"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("http://127.0.0.1:9000"), std::string::npos) << s.message();
}

TEST(S3Errors, MissingKeyIsNotFound) {
  Status s = status_for_final_failure(kGet, http(404, "NoSuchKey", "The specified key does not exist."), 1);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_FALSE(s.retriable());
  expect_names_the_request(s);
  EXPECT_NE(s.message().find("NoSuchKey"), std::string::npos);
  EXPECT_NE(s.message().find("4442587FB7D0A2F9"), std::string::npos);  // the request id, for AWS support

  // HEAD answers 404 without a body.
  AttemptFailure head;
  head.http_status = 404;
  EXPECT_EQ(status_for_final_failure(kGet, head, 1).code(), StatusCode::kNotFound);
}

TEST(S3Errors, UnknownUploadIsNotFoundSayingWhy) {
  RequestContext complete{"CompleteMultipartUpload", "http://e", "b", "k", "u-1", "AKID"};
  for (const char* code : {"NoSuchUpload", "NoSuchKey"}) {  // s3proxy answers NoSuchKey for a completed upload
    Status s = status_for_final_failure(complete, http(404, code), 1);
    EXPECT_EQ(s.code(), StatusCode::kNotFound);
    EXPECT_NE(s.message().find("upload id 'u-1'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("completed, aborted or never created"), std::string::npos) << s.message();
  }
}

TEST(S3Errors, MissingBucketNamesBucketAndEndpoint) {
  Status s = status_for_final_failure(kGet, http(404, "NoSuchBucket", "The specified bucket does not exist"), 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("bucket 'sluice-test' does not exist at http://127.0.0.1:9000", 0), 0u) << s.message();
}

TEST(S3Errors, RefusedCredentialsAreFinalAndNameTheKeys) {
  for (const char* code : {"SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied"}) {
    Status s = status_for_final_failure(kGet, http(403, code, "Forbidden"), 1);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << code;
    EXPECT_FALSE(s.retriable());
    expect_names_the_request(s);
    EXPECT_NE(s.message().find(code), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("s3.secret-key"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("'AKIDEXAMPLE'"), std::string::npos) << s.message();
  }
}

TEST(S3Errors, WrongRegionSaysSo) {
  Status s = status_for_final_failure(kGet, http(400, "AuthorizationHeaderMalformed"), 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("s3.region"), std::string::npos) << s.message();
}

TEST(S3Errors, PreconditionsAndRanges) {
  EXPECT_EQ(status_for_final_failure(kGet, http(412, "PreconditionFailed"), 1).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(status_for_final_failure(kGet, http(416, "InvalidRange"), 1).code(), StatusCode::kInvalidArgument);
  Status not_implemented = status_for_final_failure(kGet, http(501, "NotImplemented"), 1);
  EXPECT_EQ(not_implemented.code(), StatusCode::kIOError);
  EXPECT_FALSE(not_implemented.retriable());
}

TEST(S3Errors, ExhaustedRetriesAreRetriableIOErrorsCountingAttempts) {
  AttemptFailure refused;
  refused.curl_code = CURLE_COULDNT_CONNECT;
  refused.curl_error = "Couldn't connect to server: Failed to connect to 127.0.0.1 port 1: Connection refused";
  Status s = status_for_exhausted_retries(kGet, refused, 6);
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_TRUE(s.retriable());
  expect_names_the_request(s);
  EXPECT_NE(s.message().find("after 6 attempts (s3.retry.limit 5)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("curl error 7"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("Connection refused"), std::string::npos) << s.message();

  Status slow = status_for_exhausted_retries(kGet, http(503, "SlowDown", "Please reduce your request rate."), 2);
  EXPECT_NE(slow.message().find("HTTP 503 SlowDown (Please reduce your request rate.)"), std::string::npos)
      << slow.message();
}

// A 404 whose body is not an S3 error comes from something that is not an S3 server: not "no such object".
TEST(S3Errors, A404FromSomethingElseThanS3NamesTheEndpointOption) {
  RequestContext list{"ListObjectsV2", "http://127.0.0.1:8080", "b", "", "", "AKID"};
  AttemptFailure f;
  f.http_status = 404;
  f.error = S3ErrorBody{"", "response body: <html><body>Not Found</body></html>", ""};
  Status s = status_for_final_failure(list, f, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_EQ(s.message().find("no such object"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not an S3 error"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("s3.endpoint"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("http://127.0.0.1:8080"), std::string::npos) << s.message();
}

TEST(S3Errors, BucketLevelOperationsNameTheBucket) {
  RequestContext list{"ListObjectsV2", "http://e", "b", "", "", "AKID"};
  Status s = status_for_final_failure(list, http(400, "InvalidArgument", "bad max-keys"), 1);
  EXPECT_NE(s.message().find("S3 ListObjectsV2 on bucket 'b' at http://e"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sluice::s3
