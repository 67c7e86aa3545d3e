// The local recoverable writer: persist / recover / commit / commit twice, and the truncation of bytes written
// after the persisted point.
#include "fs/local_recoverable_writer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fs/file_system.h"
#include "fs/tests/fs_test_util.h"

namespace sluice::fs {
namespace {

using testing::bytes_of;
using testing::read_raw;
using testing::TempDir;

Status write_text(RecoverableOutputStream& s, const std::string& text) {
  const std::vector<uint8_t> b = bytes_of(text);
  return s.write(b);
}

TEST(LocalRecoverableWriter, CommitPublishesTheFileAndNothingIsVisibleBefore) {
  TempDir tmp;
  auto writer = local_file_system()->create_recoverable_writer(RecoverableWriterOptions{});
  ASSERT_TRUE(writer.is_ok()) << writer.status().to_string();
  auto out = (*writer)->open(tmp / "part-a");
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_TRUE(write_text(**out, "hello\n").is_ok());
  EXPECT_FALSE(std::filesystem::exists(tmp / "part-a"));
  EXPECT_TRUE(std::filesystem::exists(tmp / ".part-a.inprogress"));
  auto c = (*out)->close_for_commit();
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->size_bytes, 6u);
  EXPECT_TRUE(std::filesystem::exists(tmp / ".part-a.pending"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "part-a"));
  ASSERT_TRUE((*writer)->commit(*c).is_ok());
  EXPECT_EQ(read_raw(tmp / "part-a"), bytes_of("hello\n"));
  EXPECT_FALSE(std::filesystem::exists(tmp / ".part-a.pending"));
}

TEST(LocalRecoverableWriter, CommittingTwiceIsANoOpAndALostFileIsAnErrorNamingIt) {
  TempDir tmp;
  auto writer = make_local_recoverable_writer();
  auto out = writer->open("file://" + (tmp / "part-b"));
  ASSERT_TRUE(out.is_ok());
  ASSERT_TRUE(write_text(**out, "x").is_ok());
  auto c = (*out)->close_for_commit();
  ASSERT_TRUE(c.is_ok());
  // The committable travels through a checkpoint: a serialized round trip.
  auto restored = deserialize_bytes<CommitRecoverable>(serialize_bytes(*c).data(), serialize_bytes(*c).size());
  ASSERT_TRUE(restored.is_ok());
  ASSERT_TRUE(writer->commit(*restored).is_ok());
  ASSERT_TRUE(writer->commit(*restored).is_ok()) << "a repeated commit is a no-op";
  EXPECT_EQ(read_raw(tmp / "part-b"), bytes_of("x"));
  std::filesystem::remove(tmp / "part-b");
  Status lost = writer->commit(*restored);
  EXPECT_EQ(lost.code(), StatusCode::kNotFound);
  EXPECT_NE(lost.message().find("part-b"), std::string::npos) << lost.to_string();
}

// A failed run wrote on after its last persist; the recovery keeps exactly the persisted bytes and continues.
TEST(LocalRecoverableWriter, RecoverTruncatesWhatWasWrittenAfterThePersistedPoint) {
  TempDir tmp;
  auto writer = make_local_recoverable_writer();
  ResumeRecoverable resume;
  {
    auto out = writer->open(tmp / "part-c");
    ASSERT_TRUE(out.is_ok());
    ASSERT_TRUE(write_text(**out, "kept-1\n").is_ok());
    auto r1 = (*out)->persist();
    ASSERT_TRUE(r1.is_ok());
    EXPECT_EQ(r1->position_bytes, 7u);
    ASSERT_TRUE(write_text(**out, "kept-2\n").is_ok());
    auto r2 = (*out)->persist();
    ASSERT_TRUE(r2.is_ok());
    resume = *r2;
    ASSERT_TRUE(write_text(**out, "after the checkpoint: dropped\n").is_ok());
    (*out)->close();  // the process dies here
  }
  auto bytes = serialize_bytes(resume);
  auto in_checkpoint = deserialize_bytes<ResumeRecoverable>(bytes.data(), bytes.size());
  ASSERT_TRUE(in_checkpoint.is_ok());
  auto other_writer = make_local_recoverable_writer();  // another process
  auto resumed = other_writer->recover(*in_checkpoint);
  ASSERT_TRUE(resumed.is_ok()) << resumed.status().to_string();
  EXPECT_EQ((*resumed)->position_bytes(), 14u);
  ASSERT_TRUE(write_text(**resumed, "after recovery\n").is_ok());
  auto c = (*resumed)->close_for_commit();
  ASSERT_TRUE(c.is_ok());
  ASSERT_TRUE(other_writer->commit(*c).is_ok());
  EXPECT_EQ(read_raw(tmp / "part-c"), bytes_of("kept-1\nkept-2\nafter recovery\n"));
}

TEST(LocalRecoverableWriter, RecoverFailsWhenTheFileIsGoneOrShorterThanPersisted) {
  TempDir tmp;
  auto writer = make_local_recoverable_writer();
  auto out = writer->open(tmp / "part-d");
  ASSERT_TRUE(out.is_ok());
  ASSERT_TRUE(write_text(**out, "0123456789").is_ok());
  auto r = (*out)->persist();
  ASSERT_TRUE(r.is_ok());
  (*out)->close();
  std::filesystem::resize_file(tmp / ".part-d.inprogress", 4);
  auto shorter = writer->recover(*r);
  EXPECT_EQ(shorter.status().code(), StatusCode::kCorruption);
  std::filesystem::remove(tmp / ".part-d.inprogress");
  auto gone = writer->recover(*r);
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("part-d"), std::string::npos) << gone.status().to_string();
}

TEST(LocalRecoverableWriter, ListsAndAbortsHiddenFilesOfUnpublishedFilesOnly) {
  TempDir tmp;
  auto writer = make_local_recoverable_writer();
  auto a = writer->open(tmp / "part-1");
  auto b = writer->open(tmp / "part-2");
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_TRUE((*b)->close_for_commit().is_ok());
  std::ofstream(tmp / "part-0") << "published";
  std::ofstream(tmp / ".hidden-other") << "not ours";
  auto listed = writer->list_in_progress(tmp.path());
  ASSERT_TRUE(listed.is_ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(listed->at(0).target_path, tmp / "part-1");
  EXPECT_EQ(listed->at(0).stage, InProgressFile::Stage::kInProgress);
  EXPECT_EQ(listed->at(1).target_path, tmp / "part-2");
  EXPECT_EQ(listed->at(1).stage, InProgressFile::Stage::kPending);
  for (const auto& f : *listed) ASSERT_TRUE(writer->abort(f).is_ok());
  EXPECT_TRUE(writer->list_in_progress(tmp.path())->empty());
  EXPECT_TRUE(std::filesystem::exists(tmp / "part-0"));
  EXPECT_TRUE(std::filesystem::exists(tmp / ".hidden-other"));
  EXPECT_TRUE(writer->list_in_progress(tmp / "missing")->empty());
}

}  // namespace
}  // namespace sluice::fs
