// S3Client's operations against a real S3-compatible server (s3proxy in the project's tests; test-infra/test_servers.h says
// where). Every test works below its own random prefix of the test bucket and removes what it wrote.
#include <gtest/gtest.h>

#include "s3_client_it_fixture.h"

namespace sluice::s3::testing {
namespace {

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

}  // namespace
}  // namespace sluice::s3::testing
