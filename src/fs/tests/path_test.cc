#include "fs/path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace sluice::fs {
namespace {

TEST(FileSystemPaths, JoinParentAndNameOfPlainPaths) {
  EXPECT_EQ(join_path("/a/", "/b"), "/a/b");
  EXPECT_EQ(join_path("", "b"), "b");
  EXPECT_EQ(join_path("/", "b"), "/b");
  EXPECT_EQ(path_file_name("/ck/job/chk-3/"), "chk-3");
  EXPECT_EQ(path_parent("/ck/job/chk-3/"), "/ck/job");
  EXPECT_EQ(path_parent("/x"), "/");
  EXPECT_EQ(path_parent("x"), "");
}

TEST(FileSystemPaths, AUriRootIsNeverSplit) {
  EXPECT_EQ(join_path("s3://bucket", "ck"), "s3://bucket/ck");
  EXPECT_EQ(join_path("s3://bucket/", "/ck/"), "s3://bucket/ck/");
  EXPECT_EQ(path_parent("s3://bucket/ck/job"), "s3://bucket/ck");
  EXPECT_EQ(path_parent("s3://bucket/ck"), "s3://bucket");
  EXPECT_EQ(path_parent("s3://bucket/"), "");
  EXPECT_EQ(path_parent("s3://bucket"), "");
  EXPECT_EQ(path_file_name("s3://bucket/ck/chk-2/"), "chk-2");
  EXPECT_EQ(path_file_name("s3://bucket"), "");
  EXPECT_EQ(path_parent("file:///var/ck"), "file:///var");
  EXPECT_EQ(path_parent("file:///var"), "file:///");
  EXPECT_EQ(path_parent("file:///"), "");
}

TEST(FileSystemPaths, SchemesAreRecognisedOnlyWithTheirSlashes) {
  EXPECT_EQ(uri_scheme("s3://b/k"), "s3");
  EXPECT_EQ(uri_scheme("S3://b/k"), "s3");
  EXPECT_EQ(uri_scheme("hdfs:///ck"), "hdfs");
  EXPECT_EQ(uri_scheme("s3a+x.y-z://b"), "s3a+x.y-z");
  EXPECT_EQ(uri_scheme("/var/ck"), "");
  EXPECT_EQ(uri_scheme("s3:bucket"), "");
  EXPECT_EQ(uri_scheme("ck/s3://x"), "");
  EXPECT_EQ(uri_scheme("1s3://x"), "");
  EXPECT_EQ(uri_root_length("s3://bucket/ck"), 11u);
  EXPECT_EQ(uri_root_length("file:///ck"), 7u);
  EXPECT_EQ(uri_root_length("/ck"), 0u);
}

TEST(FileSystemPaths, NormalizeResolvesDotsLexicallyAndKeepsTheRoot) {
  EXPECT_EQ(normalize_path("s3://b/ck/../other/./x//y/"), "s3://b/other/x/y");
  EXPECT_EQ(normalize_path("/a/b/../../.."), "/");
  EXPECT_EQ(normalize_path("../a/./b"), "../a/b");
  EXPECT_EQ(normalize_path("a/.."), ".");
  EXPECT_EQ(strip_file_scheme("file:///var/ck"), "/var/ck");
  EXPECT_EQ(strip_file_scheme("/var/ck"), "/var/ck");
  EXPECT_EQ(strip_file_scheme("s3://b/k"), "s3://b/k");
  EXPECT_EQ(strip_file_scheme("file://localhost/var/ck"), "/var/ck");
}

// One folder, however it is spelled, whether or not it exists yet (the key of a folder's claim).
TEST(FileSystemPaths, CanonicalPathsOfOneFolderAreEqual) {
  const std::string cwd = std::filesystem::current_path().string();
  const std::string missing = cwd + "/no-such-folder-" + std::to_string(::getpid());
  const std::string relative = "no-such-folder-" + std::to_string(::getpid());  // nothing of it exists
  for (const std::string& spelling : {missing, missing + "/", missing + "/.", missing + "/x/..", "file://" + missing,
                                      relative, "./" + relative + "/", relative + "/x/.."}) {
    EXPECT_EQ(canonical_path(spelling), missing) << spelling;
  }
  EXPECT_EQ(canonical_path("."), cwd);
  EXPECT_EQ(canonical_path("./"), cwd);
  EXPECT_EQ(canonical_path("/"), "/");
  EXPECT_EQ(canonical_path("s3://b/a/../c"), "s3://b/c");
}

TEST(Path, MistypedUrisAndFileUriHosts) {
  EXPECT_EQ(mistyped_uri_scheme("s3:/b/k"), "s3");
  EXPECT_EQ(mistyped_uri_scheme("S3:b/k"), "s3");
  EXPECT_EQ(mistyped_uri_scheme("hdfs:ck"), "hdfs");
  for (const char* p : {"s3://b/k", "/var/s3:x", "./s3:x", "ck", "c:x", "a b:c", ":x", "s3"}) {
    EXPECT_EQ(mistyped_uri_scheme(p), "") << p;
  }
  EXPECT_EQ(file_uri_host("file://host/x"), "host");
  EXPECT_EQ(file_uri_host("file:///x"), "");
  EXPECT_EQ(file_uri_host("s3://b/x"), "");
}

}  // namespace
}  // namespace sluice::fs
