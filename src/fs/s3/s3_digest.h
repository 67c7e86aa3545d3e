// Digests S3 requests carry or produce: the payload SHA-256 of SigV4, the Content-MD5 of DeleteObjects, and the
// ETag S3 gives a completed multipart upload.
//
// Computed with OpenSSL's EVP interface (Debian libssl-dev), which libcurl (libcurl4-openssl-dev) links
// already: no second crypto library in the process.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fs/s3/s3_types.h"
#include "sluice/core/status.h"

namespace sluice::s3 {

// Lower-case hex SHA-256 of `bytes`: the value of the x-amz-content-sha256 header (AWS SigV4: "Signature
// calculations for the Authorization header", the payload hash).
std::string sha256_hex(std::span<const uint8_t> bytes);
// Base64 of the MD5 of `bytes`: the value of a Content-MD5 header (RFC 1864).
std::string md5_base64(std::span<const uint8_t> bytes);

// The ETag S3 gives the object a multipart upload of `parts` produces: "\"<hex md5 of the concatenated binary
// MD5s of the parts>-<part count>\"" (quoted, as S3 returns it). Valid when each part's ETag is the hex MD5 of
// its bytes, as for unencrypted and SSE-S3 objects; kInvalidArgument naming the part when an ETag is not 32 hex
// digits (e.g. SSE-KMS), as then the object's ETag cannot be predicted.
Result<std::string> expected_multipart_etag(const std::vector<CompletedPart>& parts);

}  // namespace sluice::s3
