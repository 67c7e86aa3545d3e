// The XML documents of the S3 REST API: parsing responses and writing request bodies.
//
// Shapes from the AWS S3 API Reference (ListObjectsV2, CreateMultipartUpload, CompleteMultipartUpload,
// ListParts, ListMultipartUploads, DeleteObjects, "Error responses"). Parsed with pugixml (Debian
// libpugixml-dev): a small, well-kept DOM parser that needs no schema; S3's default namespace
// (xmlns="http://s3.amazonaws.com/doc/2006-03-01/") carries no prefix, so element names match as written.
// Unknown elements are ignored; missing optional ones take their zero value.
//
// Errors: kCorruption when a body is not well-formed XML or its root element is not the expected one, naming
// the response, what was expected and the first bytes of the body.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fs/s3/s3_types.h"
#include "sluice/core/status.h"

namespace sluice::s3 {

// <Error><Code/><Message/><RequestId/></Error>. kCorruption when `xml` is not such a document.
Result<S3ErrorBody> parse_error(std::string_view xml);
// True when `xml` parses and its root element is <Error> (a 200 CompleteMultipartUpload can carry one).
bool is_error_document(std::string_view xml);

// <ListBucketResult> of ListObjectsV2.
Result<ListObjectsPage> parse_list_objects_v2(std::string_view xml);
// <InitiateMultipartUploadResult>: the upload id (kCorruption if it is missing or empty).
Result<std::string> parse_create_multipart_upload(std::string_view xml);
// <CompleteMultipartUploadResult>: the new object's ETag.
Result<std::string> parse_complete_multipart_upload(std::string_view xml);
// <ListPartsResult>.
Result<ListPartsPage> parse_list_parts(std::string_view xml);
// <ListMultipartUploadsResult>.
Result<ListMultipartUploadsPage> parse_list_multipart_uploads(std::string_view xml);
// <DeleteResult>: the keys that were not deleted (<Error> entries); <Deleted> entries are skipped.
Result<std::vector<DeleteObjectError>> parse_delete_objects(std::string_view xml);

// <CompleteMultipartUpload> listing `parts` in the given order (S3 requires ascending part numbers).
std::string complete_multipart_upload_body(const std::vector<CompletedPart>& parts);
// <Delete> of `keys`; `quiet` asks S3 to report only the keys it could not delete.
std::string delete_objects_body(const std::vector<std::string>& keys, bool quiet);

}  // namespace sluice::s3
