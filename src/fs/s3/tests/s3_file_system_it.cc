// The s3:// FileSystem against a real S3-compatible server (the ctest fixture s3_server): the semantics
// fs/file_system.h promises, on an object store.
#include "fs/s3/s3_file_system.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "fs/file_system_registry.h"
#include "fs/file_systems_from_config.h"
#include "fs/path.h"
#include "fs/s3/s3_config_options.h"
#include "test_servers.h"

namespace sluice::s3 {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 9));
  return out;
}

class S3FileSystemIT : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = sluice::testing::s3_test_server();
    ASSERT_EQ(server_.server.state, sluice::testing::TestServer::State::kAvailable) << server_.server.reason;
    std::random_device rd;
    root_ = "s3://" + server_.bucket + "/s3-fs-it/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + std::to_string(rd());
    auto fsys = file_systems_for(config()).for_path(root_);
    ASSERT_TRUE(fsys.is_ok()) << fsys.status().to_string();
    fs_ = *fsys;
    scratch_ = ::testing::TempDir() + "s3_fs_it_" + std::to_string(rd());
    std::filesystem::create_directories(scratch_);
  }
  void TearDown() override {
    if (fs_) (void)fs_->remove_all(root_);
    std::filesystem::remove_all(scratch_);
  }

  // The job's configuration: the s3.* keys as a user sets them (-D or YAML).
  Configuration config() const {
    Configuration c;
    EXPECT_TRUE(c.set_string("s3.endpoint", server_.endpoint).is_ok());
    EXPECT_TRUE(c.set_string("s3.access-key", server_.access_key).is_ok());
    EXPECT_TRUE(c.set_string("s3.secret-key", server_.secret_key).is_ok());
    EXPECT_TRUE(c.set_string("s3.path.style.access", "true").is_ok());
    EXPECT_TRUE(c.set_string("s3.multipart.threshold", "5mb").is_ok());
    EXPECT_TRUE(c.set_string("s3.multipart.size", "5mb").is_ok());
    return c;
  }
  static fs::FileSystemRegistry file_systems_for(const Configuration& c) { return fs::file_systems_from(c); }

  std::string p(const std::string& rel) const { return fs::join_path(root_, rel); }

  sluice::testing::S3TestServer server_;
  std::string root_;
  std::string scratch_;
  std::shared_ptr<fs::FileSystem> fs_;
};

TEST_F(S3FileSystemIT, FilesAreWrittenWholeReadBackAndListedAsADirectoryTree) {
  EXPECT_EQ(fs_->scheme(), "s3");
  ASSERT_TRUE(fs::create_directories_durable(*fs_, p("job/chk-1")).is_ok()) << "directories are implied";
  EXPECT_EQ(*fs_->stat(p("job")), fs::PathKind::kMissing) << "an empty prefix does not exist";
  ASSERT_TRUE(fs_->write_file(p("job/chk-1/_metadata"), pattern(100, 1), fs::Durability::kSync).is_ok());
  ASSERT_TRUE(fs_->write_file(p("job/chk-1/state-a"), pattern(3000, 2), fs::Durability::kNone).is_ok());
  ASSERT_TRUE(fs_->write_file(p("job/shared/x.sst"), pattern(10, 3), fs::Durability::kSync).is_ok());
  EXPECT_EQ(*fs_->stat(p("job")), fs::PathKind::kDirectory);
  EXPECT_EQ(*fs_->stat(p("job/chk-1")), fs::PathKind::kDirectory);
  EXPECT_EQ(*fs_->stat(p("job/chk-1/_metadata")), fs::PathKind::kFile);
  EXPECT_EQ(*fs_->stat(p("job/chk-2")), fs::PathKind::kMissing);
  EXPECT_EQ(*fs_->read_file(p("job/chk-1/state-a")), pattern(3000, 2));
  EXPECT_EQ(*fs_->file_size(p("job/chk-1/state-a")), 3000u);
  auto top = fs_->list_dir(p("job"));
  ASSERT_TRUE(top.is_ok()) << top.status().to_string();
  EXPECT_EQ(*top, (std::vector<fs::DirEntry>{{"chk-1", fs::PathKind::kDirectory}, {"shared", fs::PathKind::kDirectory}}));
  auto files = fs_->list_dir(p("job/chk-1"));
  ASSERT_TRUE(files.is_ok());
  EXPECT_EQ(*files, (std::vector<fs::DirEntry>{{"_metadata", fs::PathKind::kFile}, {"state-a", fs::PathKind::kFile}}));
  EXPECT_TRUE(fs_->list_dir(p("nothing-here"))->empty());

  auto d = fs_->digest_file(p("job/chk-1/state-a"));
  ASSERT_TRUE(d.is_ok());
  auto expected = pattern(3000, 2);
  EXPECT_EQ(d->checksum, XXH3_64bits(expected.data(), expected.size()));

  EXPECT_EQ(fs_->remove_empty_dir(p("job/chk-1")).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(fs_->remove_file(p("job/chk-1/state-a")).is_ok());
  ASSERT_TRUE(fs_->remove_file(p("job/chk-1/state-a")).is_ok()) << "removing a missing file is ok";
  ASSERT_TRUE(fs_->remove_all(p("job/chk-1")).is_ok());
  EXPECT_EQ(*fs_->stat(p("job/chk-1")), fs::PathKind::kMissing);
  EXPECT_EQ(*fs_->stat(p("job/shared/x.sst")), fs::PathKind::kFile) << "remove_all stays below its prefix";
  EXPECT_TRUE(fs_->remove_empty_dir(p("job/chk-1")).is_ok());
}

TEST_F(S3FileSystemIT, MissingFilesAreNotFoundNamingThePath) {
  auto r = fs_->read_file(p("missing/_metadata"));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(p("missing/_metadata")), std::string::npos) << r.status().message();
  EXPECT_EQ(fs_->file_size(p("missing/x")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_->copy_to_local_file(p("missing/x"), scratch_ + "/x").status().code(), StatusCode::kNotFound);
}

TEST_F(S3FileSystemIT, LargeFilesGoUpInPartsAndComeDownInRangesWithTheirChecksum) {
  const std::vector<uint8_t> bytes = pattern(13 << 20, 7);  // three parts of 5 MiB, the last one short
  const std::string local = scratch_ + "/big.sst";
  {
    std::ofstream out(local, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  auto up = fs_->copy_local_file(local, p("job/shared/big.sst"), fs::Durability::kSync);
  ASSERT_TRUE(up.is_ok()) << up.status().to_string();
  EXPECT_EQ(up->size_bytes, bytes.size());
  EXPECT_EQ(up->checksum, XXH3_64bits(bytes.data(), bytes.size()));
  auto digest = fs_->digest_file(p("job/shared/big.sst"));
  ASSERT_TRUE(digest.is_ok()) << digest.status().to_string();
  EXPECT_EQ(digest->checksum, up->checksum);
  EXPECT_EQ(digest->size_bytes, up->size_bytes);
  auto down = fs_->copy_to_local_file(p("job/shared/big.sst"), scratch_ + "/restored.sst",
                                      fs::LocalCopyMode::kLinkIfPossible);
  ASSERT_TRUE(down.is_ok()) << down.status().to_string();
  EXPECT_EQ(down->checksum, up->checksum);
  EXPECT_EQ(std::filesystem::file_size(scratch_ + "/restored.sst"), bytes.size());
}

TEST_F(S3FileSystemIT, ALargeWriteFileIsAMultipartUploadAndReadsBackWhole) {
  // 12 MiB at a 5 MiB threshold: three parts in parallel (one PUT of a large state file can exhaust a small
  // server's memory: S3Proxy with a 256 MiB heap fails a 256 MiB PUT).
  const std::vector<uint8_t> bytes = pattern(12 << 20, 9);
  auto* s3fs = dynamic_cast<S3FileSystem*>(fs_.get());
  ASSERT_NE(s3fs, nullptr);
  const S3ClientStats before = s3fs->client().stats();
  ASSERT_TRUE(fs_->write_file(p("job/chk-1/big-state"), bytes, fs::Durability::kSync).is_ok());
  const S3ClientStats after = s3fs->client().stats();
  EXPECT_EQ(after.requests - before.requests, 5u) << "create, three parts, complete";
  auto back = fs_->read_file(p("job/chk-1/big-state"));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(*back == bytes);
  auto size = fs_->file_size(p("job/chk-1/big-state"));
  ASSERT_TRUE(size.is_ok());
  EXPECT_EQ(*size, bytes.size());
}

TEST_F(S3FileSystemIT, PathsWithoutABucketAndBucketsThatDoNotExistAreClearErrors) {
  EXPECT_EQ(parse_s3_path("s3:///key").status().code(), StatusCode::kInvalidArgument);
  auto loc = parse_s3_path("s3://b//a/./c/");
  ASSERT_TRUE(loc.is_ok());
  EXPECT_EQ(loc->bucket, "b");
  EXPECT_EQ(loc->key, "a/c");
  auto missing = fs_->stat("s3://no-such-bucket-sluice/ck");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("no-such-bucket-sluice"), std::string::npos) << missing.status().message();
  EXPECT_EQ(fs_->remove_all("s3://" + server_.bucket).code(), StatusCode::kInvalidArgument)
      << "a whole bucket is never removed";
}

TEST_F(S3FileSystemIT, TheSecretNeverAppearsAndWrongCredentialsSayWhichEndpointRefused) {
  Configuration c = config();
  ASSERT_TRUE(c.set_string("s3.secret-key", "wrong-secret-value-1234").is_ok());
  auto fsys = file_systems_for(c).for_path(root_);
  ASSERT_TRUE(fsys.is_ok()) << fsys.status().to_string();
  Status st = (*fsys)->write_file(p("x"), pattern(10, 1), fs::Durability::kSync);
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.message().find("wrong-secret-value-1234"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(server_.endpoint), std::string::npos) << st.message();
  EXPECT_FALSE(st.retriable()) << "a refused signature cannot heal by retrying";

  Configuration no_keys;
  ASSERT_TRUE(no_keys.set_string("s3.endpoint", server_.endpoint).is_ok());
  auto none = file_systems_for(no_keys).for_path(root_);
  if (std::getenv("AWS_ACCESS_KEY_ID") == nullptr) {
    ASSERT_FALSE(none.is_ok());
    EXPECT_NE(none.status().message().find("s3.access-key"), std::string::npos) << none.status().message();
    EXPECT_NE(none.status().message().find(root_), std::string::npos) << none.status().message();
  }
}

}  // namespace
}  // namespace sluice::s3
