#include "checkpoint/fault_injection_file_system.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::bytes_of;
using testing::TempDir;

// The model the crash tests rely on, checked on its own.
TEST(FaultInjectionFileSystem, UnsyncedBytesAndUnsyncedNamesAreLost) {
  TempDir tmp;
  FaultInjectionFileSystem ffs;
  const std::string d = tmp / "d";
  ASSERT_TRUE(ffs.create_dir(d).is_ok());
  ASSERT_TRUE(ffs.sync_dir(tmp.path()).is_ok());
  ASSERT_TRUE(ffs.write_file(d + "/unsynced", bytes_of("a"), Durability::kNone).is_ok());
  ASSERT_TRUE(ffs.write_file(d + "/synced-no-dir", bytes_of("b"), Durability::kSync).is_ok());
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_TRUE(fs::exists(d));
  EXPECT_FALSE(fs::exists(d + "/unsynced")) << "bytes were never synced";
  EXPECT_FALSE(fs::exists(d + "/synced-no-dir")) << "its name was never synced";

  ASSERT_TRUE(ffs.write_file(d + "/durable", bytes_of("c"), Durability::kSync).is_ok());
  ASSERT_TRUE(ffs.sync_dir(d).is_ok());
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_EQ(testing::read_raw(d + "/durable"), bytes_of("c"));
}

TEST(FaultInjectionFileSystem, UnsyncedDirectoryCreationIsLost) {
  TempDir tmp;
  FaultInjectionFileSystem ffs;
  ASSERT_TRUE(ffs.create_dir(tmp / "d").is_ok());
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_FALSE(fs::exists(tmp / "d"));
  ASSERT_TRUE(create_directories_durable(ffs, tmp / "x/y/z").is_ok());
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_TRUE(fs::is_directory(tmp / "x/y/z"));
}

TEST(FaultInjectionFileSystem, UnsyncedRenameIsUndoneAndRestoresTheDisplacedFile) {
  TempDir tmp;
  FaultInjectionFileSystem ffs;
  const std::string a = tmp / "a", b = tmp / "b";
  ASSERT_TRUE(ffs.write_file(a, bytes_of("new"), Durability::kSync).is_ok());
  ASSERT_TRUE(ffs.write_file(b, bytes_of("old"), Durability::kSync).is_ok());
  ASSERT_TRUE(ffs.sync_dir(tmp.path()).is_ok());
  ASSERT_TRUE(ffs.rename(a, b).is_ok());
  EXPECT_EQ(testing::read_raw(b), bytes_of("new"));
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_EQ(testing::read_raw(a), bytes_of("new"));
  EXPECT_EQ(testing::read_raw(b), bytes_of("old"));

  ASSERT_TRUE(ffs.rename(a, b).is_ok());
  ASSERT_TRUE(ffs.sync_dir(tmp.path()).is_ok());
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_FALSE(fs::exists(a));
  EXPECT_EQ(testing::read_raw(b), bytes_of("new"));
}

TEST(FaultInjectionFileSystem, InjectedFailuresCountAndSkip) {
  TempDir tmp;
  FaultInjectionFileSystem ffs;
  ffs.inject_failure(FileOp::kWriteFile, "x", /*count=*/2, /*skip=*/1);
  EXPECT_TRUE(ffs.write_file(tmp / "x1", {}, Durability::kNone).is_ok());
  Status st = ffs.write_file(tmp / "x2", {}, Durability::kNone);
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("x2"), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "x2"));
  EXPECT_FALSE(ffs.write_file(tmp / "x3", {}, Durability::kNone).is_ok());
  EXPECT_TRUE(ffs.write_file(tmp / "x4", {}, Durability::kNone).is_ok());
  EXPECT_TRUE(ffs.write_file(tmp / "y", {}, Durability::kNone).is_ok());
  EXPECT_EQ(ffs.count(FileOp::kWriteFile), 5);

  ffs.inject_failure(FileOp::kRename, "target", -1);
  EXPECT_FALSE(ffs.rename(tmp / "y", tmp / "target").is_ok());
  EXPECT_FALSE(ffs.rename(tmp / "y", tmp / "target").is_ok());
  ffs.clear_failures();
  EXPECT_TRUE(ffs.rename(tmp / "y", tmp / "target").is_ok());
}

TEST(FileSystemPaths, JoinParentAndName) {
  EXPECT_EQ(join_path("/a/", "/b"), "/a/b");
  EXPECT_EQ(join_path("", "b"), "b");
  EXPECT_EQ(join_path("/", "b"), "/b");
  EXPECT_EQ(path_file_name("/ck/job/chk-3/"), "chk-3");
  EXPECT_EQ(path_parent("/ck/job/chk-3/"), "/ck/job");
  EXPECT_EQ(path_parent("/x"), "/");
  EXPECT_EQ(path_parent("x"), "");
}

}  // namespace
}  // namespace sluice::checkpoint
