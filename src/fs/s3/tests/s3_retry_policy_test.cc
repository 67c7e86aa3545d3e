// Which failures the S3 client retries, and how long it waits: the pure decisions of s3_retry_policy.h.
#include "fs/s3/s3_retry_policy.h"

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <set>

namespace sluice::s3 {
namespace {

TEST(S3RetryPolicy, TransportErrorsThatATryAgainCanFixAreRetried) {
  for (CURLcode code : {CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_COULDNT_RESOLVE_HOST,
                        CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SEND_FAIL_REWIND,
                        CURLE_SSL_CONNECT_ERROR}) {
    EXPECT_TRUE(is_retriable_curl_code(code)) << curl_easy_strerror(code);
    EXPECT_EQ(classify_attempt(code, 0, ""), AttemptVerdict::kRetriable) << curl_easy_strerror(code);
  }
}

TEST(S3RetryPolicy, TransportErrorsThatCannotHealAreFinal) {
  for (CURLcode code : {CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_PEER_FAILED_VERIFICATION,
                        CURLE_OUT_OF_MEMORY, CURLE_ABORTED_BY_CALLBACK, CURLE_BAD_FUNCTION_ARGUMENT}) {
    EXPECT_FALSE(is_retriable_curl_code(code)) << curl_easy_strerror(code);
    EXPECT_EQ(classify_attempt(code, 0, ""), AttemptVerdict::kFinal) << curl_easy_strerror(code);
  }
}

TEST(S3RetryPolicy, ServerErrorsAndThrottlingAreRetried) {
  EXPECT_EQ(classify_attempt(0, 500, "InternalError"), AttemptVerdict::kRetriable);
  EXPECT_EQ(classify_attempt(0, 503, "SlowDown"), AttemptVerdict::kRetriable);
  EXPECT_EQ(classify_attempt(0, 503, ""), AttemptVerdict::kRetriable);  // a proxy's 503 without an S3 body
  EXPECT_EQ(classify_attempt(0, 502, ""), AttemptVerdict::kRetriable);
  EXPECT_EQ(classify_attempt(0, 429, ""), AttemptVerdict::kRetriable);
  // S3 answers 400 RequestTimeout when it waited too long for the body: a retry can succeed.
  EXPECT_EQ(classify_attempt(0, 400, "RequestTimeout"), AttemptVerdict::kRetriable);
}

TEST(S3RetryPolicy, ClientErrorsAreFinal) {
  EXPECT_EQ(classify_attempt(0, 403, "SignatureDoesNotMatch"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 403, "InvalidAccessKeyId"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 403, "AccessDenied"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 404, "NoSuchKey"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 404, "NoSuchBucket"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 404, "NoSuchUpload"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 400, "EntityTooSmall"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 412, "PreconditionFailed"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 416, "InvalidRange"), AttemptVerdict::kFinal);
  EXPECT_EQ(classify_attempt(0, 501, "NotImplemented"), AttemptVerdict::kFinal);
}

TEST(S3RetryPolicy, SuccessUnlessA2xxCarriesAnErrorBody) {
  EXPECT_EQ(classify_attempt(0, 200, ""), AttemptVerdict::kSuccess);
  EXPECT_EQ(classify_attempt(0, 204, ""), AttemptVerdict::kSuccess);
  EXPECT_EQ(classify_attempt(0, 206, ""), AttemptVerdict::kSuccess);
  // CompleteMultipartUpload may answer 200 and then an <Error> in the body.
  EXPECT_EQ(classify_attempt(0, 200, "InternalError", /*error_in_success_body=*/true), AttemptVerdict::kRetriable);
  EXPECT_EQ(classify_attempt(0, 200, "InvalidPart", /*error_in_success_body=*/true), AttemptVerdict::kFinal);
}

TEST(S3RetryPolicy, BackoffCeilingDoublesFromTheBaseUpToTheCap) {
  EXPECT_EQ(backoff_ceiling_ms(1, 100, 5000), 100);
  EXPECT_EQ(backoff_ceiling_ms(2, 100, 5000), 200);
  EXPECT_EQ(backoff_ceiling_ms(3, 100, 5000), 400);
  EXPECT_EQ(backoff_ceiling_ms(6, 100, 5000), 3200);
  EXPECT_EQ(backoff_ceiling_ms(7, 100, 5000), 5000);
  EXPECT_EQ(backoff_ceiling_ms(30, 100, 5000), 5000);
  EXPECT_EQ(backoff_ceiling_ms(1'000'000, 100, 5000), 5000);  // no overflow, no endless loop
  EXPECT_EQ(backoff_ceiling_ms(64, INT64_MAX / 2, INT64_MAX), INT64_MAX);
}

TEST(S3RetryPolicy, FullJitterStaysWithinZeroAndTheCeiling) {
  SplitMix64 random(42);
  for (int32_t retry = 1; retry <= 30; ++retry) {
    int64_t ceiling = backoff_ceiling_ms(retry, 100, 5000);
    for (int i = 0; i < 1000; ++i) {
      int64_t delay = full_jitter_delay_ms(retry, 100, 5000, random.next());
      ASSERT_GE(delay, 0);
      ASSERT_LE(delay, ceiling);
    }
  }
  EXPECT_EQ(full_jitter_delay_ms(1, 100, 5000, 0), 0);
  EXPECT_EQ(full_jitter_delay_ms(1, 100, 5000, 100), 100);
  EXPECT_EQ(full_jitter_delay_ms(3, 100, 5000, 401), 0);  // random modulo (ceiling + 1)
}

TEST(S3RetryPolicy, FullJitterSpreadsOverTheWholeRange) {
  SplitMix64 random(7);
  std::set<int64_t> seen;
  int64_t low = 0;
  int64_t high = 0;
  for (int i = 0; i < 10'000; ++i) {
    int64_t delay = full_jitter_delay_ms(4, 10, 1000, random.next());  // ceiling 80
    seen.insert(delay);
    low += delay < 40 ? 1 : 0;
    high += delay > 40 ? 1 : 0;
  }
  EXPECT_EQ(seen.size(), 81u);  // every value in [0, 80]
  EXPECT_NEAR(static_cast<double>(low) / static_cast<double>(high), 1.0, 0.1);
}

TEST(S3RetryPolicy, ASeedReplaysTheSameJitter) {
  SplitMix64 a(123);
  SplitMix64 b(123);
  SplitMix64 c(124);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differs = differs || x != c.next();
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace sluice::s3
