#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <filesystem>

#include "fs/file_system.h"
#include "fs/tests/fs_test_util.h"

namespace sluice::fs {
namespace {

using testing::bytes_of;
using testing::read_raw;
using testing::TempDir;

TEST(LocalFileSystem, WritesPublishWholeFilesAndLeaveNoTemporaryFiles) {
  TempDir tmp;
  auto lfs = local_file_system();
  EXPECT_EQ(lfs->scheme(), "file");
  ASSERT_TRUE(lfs->write_file(tmp / "a", bytes_of("one"), Durability::kSync).is_ok());
  ASSERT_TRUE(lfs->write_file(tmp / "a", bytes_of("two!"), Durability::kNone).is_ok());
  EXPECT_EQ(read_raw(tmp / "a"), bytes_of("two!"));
  auto entries = lfs->list_dir(tmp.path());
  ASSERT_TRUE(entries.is_ok());
  ASSERT_EQ(entries->size(), 1u) << "only the published file, no .inprogress sibling";
  EXPECT_EQ(entries->at(0).name, "a");
}

TEST(LocalFileSystem, FileUrisAndPlainPathsNameTheSameFile) {
  TempDir tmp;
  auto lfs = local_file_system();
  ASSERT_TRUE(lfs->write_file("file://" + (tmp / "u"), bytes_of("x"), Durability::kNone).is_ok());
  EXPECT_EQ(read_raw(tmp / "u"), bytes_of("x"));
  auto kind = lfs->stat("file://" + tmp.path());
  ASSERT_TRUE(kind.is_ok());
  EXPECT_EQ(*kind, PathKind::kDirectory);
}

TEST(LocalFileSystem, CopiesInBothDirectionsReportSizeAndChecksum) {
  TempDir tmp;
  auto lfs = local_file_system();
  std::vector<uint8_t> bytes(3 << 20);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
  ASSERT_TRUE(lfs->write_file(tmp / "src", bytes, Durability::kNone).is_ok());
  auto up = lfs->copy_local_file(tmp / "src", tmp / "remote", Durability::kSync);
  ASSERT_TRUE(up.is_ok()) << up.status().to_string();
  EXPECT_EQ(up->size_bytes, bytes.size());
  EXPECT_EQ(up->checksum, XXH3_64bits(bytes.data(), bytes.size()));
  auto down = lfs->copy_to_local_file(tmp / "remote", tmp / "restored");
  ASSERT_TRUE(down.is_ok()) << down.status().to_string();
  EXPECT_EQ(down->checksum, up->checksum);
  EXPECT_EQ(read_raw(tmp / "restored"), bytes);
  auto missing = lfs->copy_to_local_file(tmp / "nope", tmp / "x");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
}

TEST(LocalFileSystem, TheDefaultCopiesGoThroughReadAndWrite) {
  // A filesystem that implements only the required calls gets working copies from the base class.
  class Minimal final : public FileSystem {
   public:
    std::string_view scheme() const override { return "min"; }
    Status create_dir(const std::string& p) override { return local_file_system()->create_dir(p); }
    Status write_file(const std::string& p, const std::vector<uint8_t>& b, Durability d) override {
      ++writes;
      return local_file_system()->write_file(p, b, d);
    }
    Status sync_dir(const std::string& d) override { return local_file_system()->sync_dir(d); }
    Result<std::vector<uint8_t>> read_file(const std::string& p) override {
      ++reads;
      return local_file_system()->read_file(p);
    }
    Result<FileDigest> digest_file(const std::string& p) override { return local_file_system()->digest_file(p); }
    Result<PathKind> stat(const std::string& p) override { return local_file_system()->stat(p); }
    Result<std::vector<DirEntry>> list_dir(const std::string& d) override { return local_file_system()->list_dir(d); }
    Status remove_file(const std::string& p) override { return local_file_system()->remove_file(p); }
    Status remove_empty_dir(const std::string& p) override { return local_file_system()->remove_empty_dir(p); }
    Status remove_all(const std::string& p) override { return local_file_system()->remove_all(p); }
    int writes = 0, reads = 0;
  } min;
  TempDir tmp;
  ASSERT_TRUE(local_file_system()->write_file(tmp / "in", bytes_of("payload"), Durability::kNone).is_ok());
  auto up = min.copy_local_file(tmp / "in", tmp / "out", Durability::kNone);
  ASSERT_TRUE(up.is_ok());
  EXPECT_EQ(min.writes, 1);
  auto down = min.copy_to_local_file(tmp / "out", tmp / "back");
  ASSERT_TRUE(down.is_ok());
  EXPECT_EQ(min.reads, 1);
  EXPECT_EQ(down->checksum, up->checksum);
  EXPECT_EQ(read_raw(tmp / "back"), bytes_of("payload"));
  auto size = min.file_size(tmp / "out");
  ASSERT_TRUE(size.is_ok());
  EXPECT_EQ(*size, 7u);
}

TEST(LocalFileSystem, CreateDirectoriesDurableCreatesEveryLevel) {
  TempDir tmp;
  ASSERT_TRUE(create_directories_durable(*local_file_system(), tmp / "a/b/../c/d").is_ok());
  EXPECT_TRUE(std::filesystem::is_directory(tmp / "a/c/d"));
  ASSERT_TRUE(local_file_system()->write_file(tmp / "f", {}, Durability::kNone).is_ok());
  EXPECT_FALSE(create_directories_durable(*local_file_system(), tmp / "f/x").is_ok());
}

}  // namespace
}  // namespace sluice::fs
