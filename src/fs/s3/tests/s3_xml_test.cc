// Parsing S3 response bodies and writing request bodies (s3_xml.h). The "s3proxy" bodies were recorded from
// s3proxy 2.7.0; the "AWS" bodies follow the examples of the AWS S3 API Reference (entity-escaped ETags,
// opaque continuation tokens, owners and storage classes the parser must skip).
#include "fs/s3/s3_xml.h"

#include <gtest/gtest.h>

namespace sluice::s3 {
namespace {

// s3proxy, ListObjectsV2 with delimiter "/" and max-keys 2: a first, truncated page.
constexpr std::string_view kS3ProxyListPage1 =
    R"(<?xml version='1.0' encoding='UTF-8'?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
    R"(<Name>sluice-test</Name><Prefix/><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><ContinuationToken/><StartAfter/>)"
    R"(<Delimiter>/</Delimiter><IsTruncated>true</IsTruncated><NextContinuationToken>b/</NextContinuationToken>)"
    R"(<CommonPrefixes><Prefix>a/</Prefix></CommonPrefixes><CommonPrefixes><Prefix>b/</Prefix></CommonPrefixes>)"
    R"(</ListBucketResult>)";

// s3proxy, the second (last) page of the same listing.
constexpr std::string_view kS3ProxyListPage2 =
    R"(<?xml version='1.0' encoding='UTF-8'?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
    R"(<Name>sluice-test</Name><Prefix/><KeyCount>1</KeyCount><MaxKeys>2</MaxKeys><ContinuationToken>b/</ContinuationToken>)"
    R"(<StartAfter/><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated><Contents><Key>c</Key>)"
    R"(<LastModified>2026-12-04T22:36:10Z</LastModified><ETag>"5d41402abc4b2a76b9719d911017c592"</ETag><Size>5</Size>)"
    R"(<StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>)";

// AWS, ListObjectsV2 (example shape of the API reference), truncated, with an opaque token and escaped ETags.
constexpr std::string_view kAwsListTruncated = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name>
  <Prefix>chk-3/</Prefix>
  <KeyCount>2</KeyCount>
  <MaxKeys>2</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents>
    <Key>chk-3/_metadata</Key>
    <LastModified>2014-11-21T19:40:05.000Z</LastModified>
    <ETag>&quot;70ee1738b6b21e2c8a43f3a5ab0eee71&quot;</ETag>
    <Size>1024</Size>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents>
    <Key>chk-3/op&amp;1 state</Key>
    <LastModified>2013-09-17T18:07:53.000Z</LastModified>
    <ETag>&quot;599bab3ed2c697f1d26842727561fd94&quot;</ETag>
    <Size>5368709120</Size>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
</ListBucketResult>)";

TEST(S3Xml, ListObjectsV2FirstPageHasPrefixesAndAContinuationToken) {
  Result<ListObjectsPage> page = parse_list_objects_v2(kS3ProxyListPage1);
  ASSERT_TRUE(page.is_ok()) << page.status().to_string();
  EXPECT_TRUE(page->objects.empty());
  EXPECT_EQ(page->common_prefixes, (std::vector<std::string>{"a/", "b/"}));
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "b/");
}

TEST(S3Xml, ListObjectsV2LastPage) {
  Result<ListObjectsPage> page = parse_list_objects_v2(kS3ProxyListPage2);
  ASSERT_TRUE(page.is_ok()) << page.status().to_string();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0], (ObjectInfo{"c", 5, "\"5d41402abc4b2a76b9719d911017c592\""}));
  EXPECT_TRUE(page->common_prefixes.empty());
  EXPECT_FALSE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "");
}

TEST(S3Xml, ListObjectsV2AwsBodyWithEscapesAndLargeSizes) {
  Result<ListObjectsPage> page = parse_list_objects_v2(kAwsListTruncated);
  ASSERT_TRUE(page.is_ok()) << page.status().to_string();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "chk-3/_metadata");
  EXPECT_EQ(page->objects[0].etag, "\"70ee1738b6b21e2c8a43f3a5ab0eee71\"");
  EXPECT_EQ(page->objects[1].key, "chk-3/op&1 state");
  EXPECT_EQ(page->objects[1].size_bytes, 5368709120u);  // above 4 GiB
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3Xml, ListObjectsV2TruncatedWithoutATokenIsCorruption) {
  Result<ListObjectsPage> page = parse_list_objects_v2(
      R"(<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>)");
  ASSERT_FALSE(page.is_ok());
  EXPECT_EQ(page.status().code(), StatusCode::kCorruption);
  EXPECT_NE(page.status().message().find("NextContinuationToken"), std::string::npos);
}

TEST(S3Xml, ABadSizeIsCorruptionNamingTheElement) {
  Result<ListObjectsPage> page = parse_list_objects_v2(
      R"(<ListBucketResult><Contents><Key>k</Key><Size>12x</Size></Contents></ListBucketResult>)");
  ASSERT_FALSE(page.is_ok());
  EXPECT_EQ(page.status().code(), StatusCode::kCorruption);
  EXPECT_NE(page.status().message().find("<Size> is '12x'"), std::string::npos) << page.status().message();
}

TEST(S3Xml, NotXmlOrTheWrongRootIsCorruptionShowingTheBody) {
  Result<ListObjectsPage> html = parse_list_objects_v2("<html><body>502 Bad Gateway</body>");
  ASSERT_FALSE(html.is_ok());
  EXPECT_EQ(html.status().code(), StatusCode::kCorruption);
  EXPECT_NE(html.status().message().find("502 Bad Gateway"), std::string::npos) << html.status().message();

  Result<ListObjectsPage> wrong = parse_list_objects_v2(kS3ProxyListPage1.substr(0, 60));
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("not well-formed"), std::string::npos) << wrong.status().message();

  Result<std::string> other = parse_create_multipart_upload(kS3ProxyListPage2);
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("root element <ListBucketResult>, expected <InitiateMultipartUploadResult>"),
            std::string::npos)
      << other.status().message();
}

TEST(S3Xml, ErrorBodies) {
  // s3proxy, GET of a missing key.
  Result<S3ErrorBody> missing = parse_error(
      R"(<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code><Message>The specified key does not )"
      R"(exist.</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>)");
  ASSERT_TRUE(missing.is_ok()) << missing.status().to_string();
  EXPECT_EQ(missing->code, "NoSuchKey");
  EXPECT_EQ(missing->message, "The specified key does not exist.");
  EXPECT_EQ(missing->request_id, "4442587FB7D0A2F9");

  // AWS, throttling (the API reference's error example shape, with its extra elements).
  Result<S3ErrorBody> slow = parse_error(R"(<?xml version="1.0" encoding="UTF-8"?>
<Error>
  <Code>SlowDown</Code>
  <Message>Please reduce your request rate.</Message>
  <Resource>/mybucket/myfoto.jpg</Resource>
  <RequestId>4442587FB7D0A2F9</RequestId>
  <HostId>ZRR2N1sCEbH1VEOlm1dV3pOvZ5eNS7KwZKS1Z+i3GfI=</HostId>
</Error>)");
  ASSERT_TRUE(slow.is_ok());
  EXPECT_EQ(slow->code, "SlowDown");
  EXPECT_EQ(slow->message, "Please reduce your request rate.");

  // s3proxy, a wrong secret key.
  Result<S3ErrorBody> signature = parse_error(
      R"(<?xml version='1.0' encoding='UTF-8'?><Error><Code>SignatureDoesNotMatch</Code><Message>Forbidden</Message>)"
      R"(<RequestId>4442587FB7D0A2F9</RequestId></Error>)");
  ASSERT_TRUE(signature.is_ok());
  EXPECT_EQ(signature->code, "SignatureDoesNotMatch");

  EXPECT_TRUE(is_error_document("<Error><Code>InternalError</Code></Error>"));
  EXPECT_FALSE(is_error_document(kS3ProxyListPage2));
  EXPECT_FALSE(is_error_document(""));
  EXPECT_FALSE(parse_error("").is_ok());
}

TEST(S3Xml, CreateMultipartUploadResult) {
  // s3proxy
  Result<std::string> id = parse_create_multipart_upload(
      R"(<?xml version='1.0' encoding='UTF-8'?><InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Bucket>sluice-test</Bucket><Key>mp/obj</Key><UploadId>a1625fd4-0af4-44bc-a846-644ae3d09017</UploadId>)"
      R"(</InitiateMultipartUploadResult>)");
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  EXPECT_EQ(*id, "a1625fd4-0af4-44bc-a846-644ae3d09017");

  Result<std::string> none = parse_create_multipart_upload(
      "<InitiateMultipartUploadResult><Bucket>b</Bucket></InitiateMultipartUploadResult>");
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().code(), StatusCode::kCorruption);
}

TEST(S3Xml, CompleteMultipartUploadResult) {
  // s3proxy (note the line break inside the root tag)
  Result<std::string> etag = parse_complete_multipart_upload(
      "<?xml version='1.0' encoding='UTF-8'?><CompleteMultipartUploadResult "
      "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"\n><Location>http://Example-Bucket.s3.amazonaws.com/mp/obj"
      "</Location><Bucket>sluice-test</Bucket><Key>mp/obj</Key><ETag>\"b66957d6f3d4dafbcb7d95e0616b2258-1\"</ETag>"
      "</CompleteMultipartUploadResult>");
  ASSERT_TRUE(etag.is_ok()) << etag.status().to_string();
  EXPECT_EQ(*etag, "\"b66957d6f3d4dafbcb7d95e0616b2258-1\"");
}

TEST(S3Xml, ListPartsResult) {
  // s3proxy, one part, with the owner elements it copies from AWS's example.
  Result<ListPartsPage> page = parse_list_parts(
      R"(<?xml version='1.0' encoding='UTF-8'?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Bucket>sluice-test</Bucket><Key>mp/obj</Key><UploadId>a1625fd4-0af4-44bc-a846-644ae3d09017</UploadId>)"
      R"(<Initiator><ID>arn:aws:iam::111122223333:user/some-user</ID><DisplayName>umat-user</DisplayName></Initiator>)"
      R"(<Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID>)"
      R"(<DisplayName>CustomersName@amazon.com</DisplayName></Owner><StorageClass>STANDARD</StorageClass><Part>)"
      R"(<PartNumber>1</PartNumber><LastModified>2026-12-04T22:36:14Z</LastModified>)"
      R"(<ETag>"6d0bb00954ceb7fbee436bb55a8397a9"</ETag><Size>100</Size></Part></ListPartsResult>)");
  ASSERT_TRUE(page.is_ok()) << page.status().to_string();
  ASSERT_EQ(page->parts.size(), 1u);
  EXPECT_EQ(page->parts[0], (PartInfo{1, "\"6d0bb00954ceb7fbee436bb55a8397a9\"", 100}));
  EXPECT_FALSE(page->truncated);

  // AWS, a truncated listing (API reference example shape).
  Result<ListPartsPage> truncated = parse_list_parts(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>example-bucket</Bucket>
  <Key>example-object</Key>
  <UploadId>XXBsb2FkIElEIGZvciBlbHZpbmcncyVcdS1tb3ZpZS5tMnRzEEEwbG9hZA</UploadId>
  <PartNumberMarker>1</PartNumberMarker>
  <NextPartNumberMarker>3</NextPartNumberMarker>
  <MaxParts>2</MaxParts>
  <IsTruncated>true</IsTruncated>
  <Part>
    <PartNumber>2</PartNumber>
    <LastModified>2010-11-10T20:48:34.000Z</LastModified>
    <ETag>"7778aef83f66abc1fa1e8477f296d394"</ETag>
    <Size>10485760</Size>
  </Part>
  <Part>
    <PartNumber>3</PartNumber>
    <LastModified>2010-11-10T20:48:33.000Z</LastModified>
    <ETag>"aaaa18db4cc2f85cedef654fccc4a4x8"</ETag>
    <Size>10485760</Size>
  </Part>
</ListPartsResult>)");
  ASSERT_TRUE(truncated.is_ok()) << truncated.status().to_string();
  ASSERT_EQ(truncated->parts.size(), 2u);
  EXPECT_EQ(truncated->parts[1].part_number, 3);
  EXPECT_EQ(truncated->parts[1].size_bytes, 10485760u);
  EXPECT_TRUE(truncated->truncated);
  EXPECT_EQ(truncated->next_part_number_marker, 3);
}

TEST(S3Xml, ListMultipartUploadsResult) {
  // s3proxy
  Result<ListMultipartUploadsPage> page = parse_list_multipart_uploads(
      R"(<?xml version='1.0' encoding='UTF-8'?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Bucket>sluice-test</Bucket><KeyMarker/><UploadIdMarker/><NextKeyMarker/><NextUploadIdMarker/><Delimiter/>)"
      R"(<Prefix/><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated><Upload><Key>mp/obj</Key>)"
      R"(<UploadId>a1625fd4-0af4-44bc-a846-644ae3d09017</UploadId><Initiator><ID>arn:aws:iam::111122223333:user/u</ID>)"
      R"(<DisplayName>u</DisplayName></Initiator><Owner><ID>75aa57f0</ID><DisplayName>CustomersName@amazon.com)"
      R"(</DisplayName></Owner><StorageClass>STANDARD</StorageClass><Initiated>2026-12-04T22:36:14.491Z</Initiated>)"
      R"(</Upload></ListMultipartUploadsResult>)");
  ASSERT_TRUE(page.is_ok()) << page.status().to_string();
  ASSERT_EQ(page->uploads.size(), 1u);
  EXPECT_EQ(page->uploads[0],
            (MultipartUploadInfo{"mp/obj", "a1625fd4-0af4-44bc-a846-644ae3d09017", "2026-12-04T22:36:14.491Z"}));
  EXPECT_FALSE(page->truncated);

  // AWS, truncated (API reference example shape).
  Result<ListMultipartUploadsPage> truncated = parse_list_multipart_uploads(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>bucket</Bucket>
  <KeyMarker></KeyMarker>
  <UploadIdMarker></UploadIdMarker>
  <NextKeyMarker>my-movie.m2ts</NextKeyMarker>
  <NextUploadIdMarker>YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ</NextUploadIdMarker>
  <MaxUploads>3</MaxUploads>
  <IsTruncated>true</IsTruncated>
  <Upload>
    <Key>my-divisor</Key>
    <UploadId>XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw</UploadId>
    <StorageClass>STANDARD</StorageClass>
    <Initiated>2010-11-10T20:48:33.000Z</Initiated>
  </Upload>
</ListMultipartUploadsResult>)");
  ASSERT_TRUE(truncated.is_ok());
  EXPECT_TRUE(truncated->truncated);
  EXPECT_EQ(truncated->next_key_marker, "my-movie.m2ts");
  EXPECT_EQ(truncated->next_upload_id_marker, "YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ");
}

TEST(S3Xml, DeleteResultReportsTheKeysThatFailed) {
  // AWS, DeleteObjects with one key deleted and one refused (API reference example shape).
  Result<std::vector<DeleteObjectError>> errors = parse_delete_objects(R"(<?xml version="1.0" encoding="UTF-8"?>
<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Deleted>
    <Key>sample1.txt</Key>
  </Deleted>
  <Error>
    <Key>sample2.txt</Key>
    <Code>AccessDenied</Code>
    <Message>Access Denied</Message>
  </Error>
</DeleteResult>)");
  ASSERT_TRUE(errors.is_ok()) << errors.status().to_string();
  ASSERT_EQ(errors->size(), 1u);
  EXPECT_EQ((*errors)[0], (DeleteObjectError{"sample2.txt", "AccessDenied", "Access Denied"}));

  // s3proxy, all deleted (a missing key counts as deleted).
  Result<std::vector<DeleteObjectError>> none = parse_delete_objects(
      R"(<?xml version='1.0' encoding='UTF-8'?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Deleted><Key>a/1</Key></Deleted><Deleted><Key>zz-missing</Key></Deleted></DeleteResult>)");
  ASSERT_TRUE(none.is_ok());
  EXPECT_TRUE(none->empty());
}

TEST(S3Xml, RequestBodiesEscapeKeysAndEtags) {
  EXPECT_EQ(complete_multipart_upload_body({{1, "\"aa\""}, {2, "\"bb\""}}),
            "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1"
            "</PartNumber><ETag>&quot;aa&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;bb&quot;"
            "</ETag></Part></CompleteMultipartUpload>");
  EXPECT_EQ(delete_objects_body({"a<b", "c&d"}, true),
            "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet><Object><Key>a&lt;b</Key>"
            "</Object><Object><Key>c&amp;d</Key></Object></Delete>");
}

TEST(S3Xml, SameEtagIgnoresQuotes) {
  EXPECT_TRUE(same_etag("\"abc-2\"", "abc-2"));
  EXPECT_TRUE(same_etag("abc", "abc"));
  EXPECT_FALSE(same_etag("\"abc\"", "\"abd\""));
}

}  // namespace
}  // namespace sluice::s3
