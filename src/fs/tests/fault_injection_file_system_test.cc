#include "fs/fault_injection_file_system.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fs/tests/fs_test_util.h"

namespace sluice::fs {
namespace {

namespace stdfs = std::filesystem;
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
  EXPECT_TRUE(stdfs::exists(d));
  EXPECT_FALSE(stdfs::exists(d + "/unsynced")) << "bytes were never synced";
  EXPECT_FALSE(stdfs::exists(d + "/synced-no-dir")) << "its name was never synced";

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
  EXPECT_FALSE(stdfs::exists(tmp / "d"));
  ASSERT_TRUE(create_directories_durable(ffs, tmp / "x/y/z").is_ok());
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_TRUE(stdfs::is_directory(tmp / "x/y/z"));
}

TEST(FaultInjectionFileSystem, AnUnsyncedReplacementIsUndoneAndTheOldBytesComeBack) {
  TempDir tmp;
  FaultInjectionFileSystem ffs;
  const std::string b = tmp / "b";
  ASSERT_TRUE(ffs.write_file(b, bytes_of("old"), Durability::kSync).is_ok());
  ASSERT_TRUE(ffs.sync_dir(tmp.path()).is_ok());
  ASSERT_TRUE(ffs.write_file(b, bytes_of("new"), Durability::kSync).is_ok());
  EXPECT_EQ(testing::read_raw(b), bytes_of("new"));
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_EQ(testing::read_raw(b), bytes_of("old"));

  ASSERT_TRUE(ffs.write_file(b, bytes_of("new"), Durability::kSync).is_ok());
  ASSERT_TRUE(ffs.sync_dir(tmp.path()).is_ok());
  ASSERT_TRUE(ffs.drop_unsynced().is_ok());
  EXPECT_EQ(testing::read_raw(b), bytes_of("new"));
}

TEST(FaultInjectionFileSystem, AFailedWriteLeavesNeitherTheFileNorATemporaryFile) {
  TempDir tmp;
  FaultInjectionFileSystem ffs;
  ffs.inject_failure(FileOp::kWriteFile, "x");
  EXPECT_FALSE(ffs.write_file(tmp / "x", bytes_of("abc"), Durability::kSync).is_ok());
  EXPECT_TRUE(stdfs::is_empty(tmp.path()));
}

TEST(FaultInjectionFileSystem, InjectedFailuresCountAndSkip) {
  TempDir tmp;
  FaultInjectionFileSystem ffs;
  ffs.inject_failure(FileOp::kWriteFile, "x", /*count=*/2, /*skip=*/1);
  EXPECT_TRUE(ffs.write_file(tmp / "x1", {}, Durability::kNone).is_ok());
  Status st = ffs.write_file(tmp / "x2", {}, Durability::kNone);
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("x2"), std::string::npos);
  EXPECT_FALSE(stdfs::exists(tmp / "x2"));
  EXPECT_FALSE(ffs.write_file(tmp / "x3", {}, Durability::kNone).is_ok());
  EXPECT_TRUE(ffs.write_file(tmp / "x4", {}, Durability::kNone).is_ok());
  EXPECT_TRUE(ffs.write_file(tmp / "y", {}, Durability::kNone).is_ok());
  EXPECT_EQ(ffs.count(FileOp::kWriteFile), 5);

  ffs.inject_failure(FileOp::kRead, "/y", -1);
  EXPECT_FALSE(ffs.read_file(tmp / "y").is_ok());
  EXPECT_FALSE(ffs.copy_to_local_file(tmp / "y", tmp / "copy").is_ok()) << "a download reads its source";
  ffs.clear_failures();
  EXPECT_TRUE(ffs.copy_to_local_file(tmp / "y", tmp / "copy").is_ok());
  EXPECT_EQ(ffs.count(FileOp::kRead), 3);
}

}  // namespace
}  // namespace sluice::fs
