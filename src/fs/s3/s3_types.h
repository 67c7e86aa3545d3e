// The values S3 operations return (s3_client.h) and the XML parsers produce (s3_xml.h).
//
// ETags are kept exactly as S3 returns them, double quotes included ("\"5d41402abc4b2a76b9719d911017c592\""),
// so a part's ETag can be persisted and sent back in CompleteMultipartUpload unchanged. Compare ETags with
// same_etag(), which ignores the quotes.
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::s3 {

struct ObjectInfo {
  std::string key;
  uint64_t size_bytes = 0;
  std::string etag;  // may be empty for entries some stores list without one (directory markers)
  bool operator==(const ObjectInfo&) const = default;
};

struct ObjectHead {
  uint64_t size_bytes = 0;
  std::string etag;
};

// One ListObjectsV2 response.
struct ListObjectsPage {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> common_prefixes;  // with a delimiter: "a/" for keys "a/1", "a/2"
  bool truncated = false;
  std::string next_continuation_token;  // set when truncated
};

// Every page of a listing, in S3's order (keys ascending in UTF-8 byte order).
struct ListObjectsResult {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> common_prefixes;
};

// A part to name in CompleteMultipartUpload: its number (1..10000) and the ETag UploadPart returned.
struct CompletedPart {
  int32_t part_number = 0;
  std::string etag;
  bool operator==(const CompletedPart&) const = default;
};

// A part as ListParts reports it.
struct PartInfo {
  int32_t part_number = 0;
  std::string etag;
  uint64_t size_bytes = 0;
  bool operator==(const PartInfo&) const = default;
};

// One ListParts response.
struct ListPartsPage {
  std::vector<PartInfo> parts;
  bool truncated = false;
  int32_t next_part_number_marker = 0;
};

// An upload that was created and neither completed nor aborted.
struct MultipartUploadInfo {
  std::string key;
  std::string upload_id;
  std::string initiated;  // ISO 8601 as S3 gives it, e.g. "2026-12-04T22:36:14.491Z"
  bool operator==(const MultipartUploadInfo&) const = default;
};

// One ListMultipartUploads response.
struct ListMultipartUploadsPage {
  std::vector<MultipartUploadInfo> uploads;
  bool truncated = false;
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

// A key DeleteObjects could not delete (S3 deletes the others of the same request).
struct DeleteObjectError {
  std::string key;
  std::string code;     // S3's error code, e.g. "AccessDenied"
  std::string message;  // S3's message
  bool operator==(const DeleteObjectError&) const = default;
};

// The <Error> document of a failed request (AWS S3 API Reference, "Error responses").
struct S3ErrorBody {
  std::string code;        // "NoSuchKey", "SlowDown", ...; empty when the response had no such body (HEAD)
  std::string message;
  std::string request_id;
};

// True when both name the same ETag (surrounding double quotes ignored).
bool same_etag(std::string_view a, std::string_view b);

}  // namespace sluice::s3
