// The digests S3 requests carry (s3_digest.h), against published test vectors and an ETag s3proxy produced.
#include "fs/s3/s3_digest.h"

#include <gtest/gtest.h>

#include <string_view>

namespace sluice::s3 {
namespace {

std::span<const uint8_t> bytes_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

TEST(S3Digest, Sha256HexMatchesFips180Vectors) {
  EXPECT_EQ(sha256_hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(bytes_of("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(S3Digest, Md5Base64MatchesRfc1321Vectors) {
  EXPECT_EQ(md5_base64({}), "1B2M2Y8AsgTpgAmY7PhCfg==");                 // d41d8cd98f00b204e9800998ecf8427e
  EXPECT_EQ(md5_base64(bytes_of("abc")), "kAFQmDzST7DWlj99KOF/cg==");  // 900150983cd24fb0d6963f7d28e17f72
}

TEST(S3Digest, ExpectedMultipartEtagMatchesWhatTheStoreComputed) {
  // s3proxy completed a one-part upload whose part had ETag "6d0bb009..." with ETag "b66957d6...-1".
  Result<std::string> etag = expected_multipart_etag({{1, "\"6d0bb00954ceb7fbee436bb55a8397a9\""}});
  ASSERT_TRUE(etag.is_ok()) << etag.status().to_string();
  EXPECT_EQ(*etag, "\"b66957d6f3d4dafbcb7d95e0616b2258-1\"");
  // Quotes are optional on input.
  EXPECT_EQ(expected_multipart_etag({{1, "6d0bb00954ceb7fbee436bb55a8397a9"}}).value(), *etag);
}

TEST(S3Digest, AnEtagThatIsNotAnMd5CannotPredictTheUploadsEtag) {
  Result<std::string> etag = expected_multipart_etag({{1, "\"6d0bb00954ceb7fbee436bb55a8397a9\""}, {2, "\"kms-xyz\""}});
  ASSERT_FALSE(etag.is_ok());
  EXPECT_EQ(etag.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(etag.status().message().find("part 2"), std::string::npos) << etag.status().message();
}

}  // namespace
}  // namespace sluice::s3
