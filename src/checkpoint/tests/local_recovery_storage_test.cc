// Task-local recovery (local_recovery_storage.h): local copies of state files, reads that prefer them and fall back
// to checkpoint storage when a copy is missing or damaged, retention and cleanup.
#include "checkpoint/local_recovery_storage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/savepoint_files.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

namespace stdfs = std::filesystem;
using testing::pattern;
using testing::TempDir;

const JobId kJob(0x1234567890abcdefULL, 0xcccc);

class LocalRecoveryStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    primary_ = std::make_shared<FileSystemCheckpointStorage>(tmp_ / "ck", testing::threshold(64));
    auto local = LocalRecoveryStorage::create(primary_, sluice::fs::local_file_system(), tmp_ / "local",
                                              /*retained_checkpoints=*/2);
    ASSERT_TRUE(local.is_ok()) << local.status().to_string();
    storage_ = *local;
    ASSERT_TRUE(storage_->initialize(kJob).is_ok());
  }
  // Writes one state file of `size` bytes for checkpoint `id`.
  StreamStateHandle write(int64_t id, size_t size, uint8_t seed) {
    auto factory = storage_->stream_factory(CheckpointId(id));
    EXPECT_TRUE(factory.is_ok()) << factory.status().to_string();
    auto h = (*factory)->write_state("op", "keyed-0", pattern(size, seed));
    EXPECT_TRUE(h.is_ok()) << h.status().to_string();
    return *h;
  }
  std::string location(int64_t id) const { return tmp_ / "ck" + "/" + kJob.to_hex() + "/chk-" + std::to_string(id); }
  // The local copies of checkpoint `id` on disk.
  std::vector<std::string> copies(int64_t id) const {
    std::vector<std::string> out;
    const std::string dir = storage_->local_dir() + "/chk-" + std::to_string(id);
    if (!stdfs::exists(dir)) return out;
    for (const auto& e : stdfs::directory_iterator(dir)) out.push_back(e.path().string());
    return out;
  }

  TempDir tmp_;
  std::shared_ptr<FileSystemCheckpointStorage> primary_;
  std::shared_ptr<LocalRecoveryStorage> storage_;
};

TEST_F(LocalRecoveryStorageTest, AStateFileIsReadFromItsLocalCopy) {
  const StreamStateHandle h = write(1, 1000, 3);
  ASSERT_FALSE(h.is_inline());
  ASSERT_EQ(copies(1).size(), 1u);
  // The primary copy is the checkpoint's: deleting it shows the read came from the local one.
  stdfs::remove_all(location(1));
  auto bytes = storage_->read_state(location(1), h);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, pattern(1000, 3));
  const LocalRecoveryStats s = storage_->stats();
  EXPECT_EQ(s.local_reads, 1);
  EXPECT_EQ(s.fallback_reads, 0);
  EXPECT_EQ(s.copies_written, 1);
}

TEST_F(LocalRecoveryStorageTest, AMissingLocalCopyFallsBackToCheckpointStorage) {
  const StreamStateHandle h = write(1, 1000, 4);
  for (const std::string& f : copies(1)) stdfs::remove(f);
  auto bytes = storage_->read_state(location(1), h);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, pattern(1000, 4));
  EXPECT_EQ(storage_->stats().fallback_reads, 1);
  EXPECT_EQ(storage_->stats().local_reads, 0);
}

TEST_F(LocalRecoveryStorageTest, ADamagedLocalCopyFallsBackToCheckpointStorage) {
  const StreamStateHandle h = write(1, 1000, 5);
  ASSERT_EQ(copies(1).size(), 1u);
  {
    // One byte changed, the size kept: only the checksum tells.
    std::fstream f(copies(1)[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f.put(static_cast<char>(0x5a ^ pattern(1000, 5)[500]));
  }
  auto bytes = storage_->read_state(location(1), h);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, pattern(1000, 5));
  {
    std::ofstream f(copies(1)[0], std::ios::binary | std::ios::trunc);  // truncated
    f << "short";
  }
  ASSERT_TRUE(storage_->read_state(location(1), h).is_ok());
  EXPECT_EQ(storage_->stats().fallback_reads, 2);
  // Both copies damaged or gone: the checkpoint's own error, not an empty restore.
  stdfs::remove_all(location(1));
  auto lost = storage_->read_state(location(1), h);
  ASSERT_FALSE(lost.is_ok());
  EXPECT_EQ(lost.status().code(), StatusCode::kNotFound) << lost.status().to_string();
}

TEST_F(LocalRecoveryStorageTest, InlineStateAndSavepointsAreNotCopiedAndAFileWithoutACopyIsReadRemotely) {
  auto factory = storage_->stream_factory(CheckpointId(1));
  ASSERT_TRUE(factory.is_ok());
  auto small = (*factory)->write_state("op", "tiny", pattern(10, 1));  // below the inline threshold
  ASSERT_TRUE(small.is_ok());
  ASSERT_TRUE(small->is_inline());
  EXPECT_TRUE(copies(1).empty());
  auto folder = create_savepoint_dir(*sluice::fs::local_file_system(), tmp_ / "sp", kJob);
  ASSERT_TRUE(folder.is_ok()) << folder.status().to_string();
  ASSERT_TRUE(storage_->begin_savepoint(CheckpointId(2), *folder).is_ok());
  auto sp = storage_->stream_factory(CheckpointId(2));
  ASSERT_TRUE(sp.is_ok()) << sp.status().to_string();
  auto sp_handle = (*sp)->write_state("op", "keyed-0", pattern(500, 2));
  ASSERT_TRUE(sp_handle.is_ok()) << sp_handle.status().to_string();
  EXPECT_FALSE(sp_handle->is_inline());
  EXPECT_TRUE(copies(2).empty());
  EXPECT_EQ(storage_->stats().copies_written, 0);
  // A handle this process never wrote (another TaskManager's): read from checkpoint storage.
  const StreamStateHandle h = write(3, 500, 6);
  StreamStateHandle other = h;
  other.relative_path = "chk-3/written-elsewhere";
  (void)storage_->read_state(location(3), other);
  EXPECT_EQ(storage_->stats().remote_reads, 1);
}

TEST_F(LocalRecoveryStorageTest, OnlyTheNewestCheckpointsKeepCopiesAndADiscardDropsThem) {
  const StreamStateHandle h1 = write(1, 500, 1);
  write(2, 500, 2);
  EXPECT_EQ(copies(1).size(), 1u);
  const StreamStateHandle h3 = write(3, 500, 3);  // retained 2: checkpoint 1's copy goes
  EXPECT_TRUE(copies(1).empty());
  EXPECT_EQ(copies(2).size(), 1u);
  EXPECT_EQ(copies(3).size(), 1u);
  ASSERT_TRUE(storage_->read_state(location(1), h1).is_ok());  // from checkpoint storage
  EXPECT_EQ(storage_->stats().remote_reads, 1);
  ASSERT_TRUE(storage_->discard(CheckpointId(3)).is_ok());
  EXPECT_TRUE(copies(3).empty());
  EXPECT_FALSE(stdfs::exists(location(3)));  // the primary discarded it too
}

TEST(LocalRecoveryStorage, TheLocalDirectoryIsItsOwnFromCreationToDestruction) {
  TempDir tmp;
  auto primary = std::make_shared<FileSystemCheckpointStorage>(tmp / "ck", testing::threshold(0));
  stdfs::create_directories(tmp / "taken");
  auto refused = LocalRecoveryStorage::create(primary, sluice::fs::local_file_system(), tmp / "taken");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("exists already"), std::string::npos) << refused.status().to_string();
  EXPECT_TRUE(stdfs::exists(tmp / "taken"));  // another's directory is never touched
  EXPECT_FALSE(LocalRecoveryStorage::create(nullptr, sluice::fs::local_file_system(), tmp / "x").is_ok());
  EXPECT_FALSE(LocalRecoveryStorage::create(primary, sluice::fs::local_file_system(), tmp / "y", 0).is_ok());
  {
    auto local = LocalRecoveryStorage::create(primary, sluice::fs::local_file_system(), tmp / "mine/local");
    ASSERT_TRUE(local.is_ok()) << local.status().to_string();
    EXPECT_TRUE(stdfs::is_directory(tmp / "mine/local"));
  }
  EXPECT_FALSE(stdfs::exists(tmp / "mine/local"));
}

}  // namespace
}  // namespace sluice::checkpoint
