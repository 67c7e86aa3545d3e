// JobCheckpoints on real checkpoint folders: which checkpoints a job may delete (its own, a claimed restore point,
// never a NO_CLAIM one), the restore point the next attempt gets, the file check before a restart, and the cleanup
// at job end.
#include "cluster/job_checkpoints.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/tests/checkpoint_fixture.h"

namespace sluice::cluster {
namespace {

using checkpoint::ExternalizedCheckpointRetention;
using checkpoint::JobTerminalStatus;
namespace ct = checkpoint::testing;

class JobCheckpointsTest : public ::testing::Test {
 protected:
  // The job under test; `earlier_` is the run it restores from.
  std::unique_ptr<JobCheckpoints> make(int32_t num_retained,
                                       ExternalizedCheckpointRetention retention =
                                           ExternalizedCheckpointRetention::kNoExternalizedCheckpoints) {
    storage_ = std::make_shared<checkpoint::FileSystemCheckpointStorage>(tmp_.path(), ct::threshold(100));
    EXPECT_TRUE(storage_->initialize(job_).is_ok());
    return std::make_unique<JobCheckpoints>("test-job", storage_, num_retained, retention);
  }
  checkpoint::CheckpointMetadata metadata(const std::string& location) {
    auto m = storage_->read_metadata(location);
    EXPECT_TRUE(m.is_ok()) << m.status().to_string();
    return m.is_ok() ? *m : checkpoint::CheckpointMetadata{};
  }
  // Checkpoint `id` of the job under test, completed.
  std::string complete(JobCheckpoints& jc, int64_t id) {
    const std::string loc = ct::make_checkpoint(tmp_.path(), job_, id);
    jc.on_checkpoint_completed(metadata(loc), loc);
    return loc;
  }

  ct::TempDir tmp_;
  JobId earlier_{1, 1};
  JobId job_{2, 2};
  std::shared_ptr<checkpoint::FileSystemCheckpointStorage> storage_;
};

TEST_F(JobCheckpointsTest, AClaimedRestorePointIsDeletedOnceSubsumedAndANoClaimOneNever) {
  for (bool claim : {true, false}) {
    SCOPED_TRACE(claim ? "CLAIM" : "NO_CLAIM");
    const std::string restored = ct::make_checkpoint(tmp_.path(), earlier_, 5);
    auto jc = make(1);
    auto point = jc->add_restored(metadata(restored), restored, claim);
    ASSERT_TRUE(point.is_ok()) << point.status().to_string();
    EXPECT_EQ(point->owned, claim);
    EXPECT_EQ(point->location, restored);
    ASSERT_TRUE(jc->latest().has_value());
    EXPECT_EQ(jc->latest()->location, restored);
    EXPECT_EQ(jc->latest_checkpoint_id(), 5);

    const std::string own = complete(*jc, 6);
    EXPECT_EQ(std::filesystem::exists(restored), !claim);
    EXPECT_TRUE(std::filesystem::exists(own));
    EXPECT_EQ(jc->latest()->location, own);
    EXPECT_TRUE(jc->latest()->owned);
    EXPECT_EQ(jc->latest_checkpoint_id(), 6);
    std::filesystem::remove_all(tmp_ / earlier_.to_hex());
    std::filesystem::remove_all(tmp_ / job_.to_hex());
  }
}

TEST_F(JobCheckpointsTest, KeepsNumRetainedOfItsOwnCheckpoints) {
  auto jc = make(2);
  EXPECT_FALSE(jc->latest().has_value());
  EXPECT_EQ(jc->latest_checkpoint_id(), -1);
  const std::string c1 = complete(*jc, 1), c2 = complete(*jc, 2), c3 = complete(*jc, 3);
  EXPECT_FALSE(std::filesystem::exists(c1));
  EXPECT_TRUE(std::filesystem::exists(c2));
  EXPECT_TRUE(std::filesystem::exists(c3));
}

TEST_F(JobCheckpointsTest, AnOlderCheckpointThanTheRestoredOneIsRefused) {
  const std::string restored = ct::make_checkpoint(tmp_.path(), earlier_, 5);
  auto jc = make(1);
  ASSERT_TRUE(jc->add_restored(metadata(restored), restored, true).is_ok());
  const std::string stale = ct::make_checkpoint(tmp_.path(), job_, 3);
  jc->on_checkpoint_completed(metadata(stale), stale);  // logged, not retained
  EXPECT_EQ(jc->latest_checkpoint_id(), 5);
  EXPECT_TRUE(std::filesystem::exists(restored));
}

TEST_F(JobCheckpointsTest, RestorePointCheckNamesAMissingOrDamagedFile) {
  auto jc = make(1);
  // Nothing retained and no fallback: nothing to check.
  EXPECT_TRUE(jc->check_restore_point(std::nullopt, Status::internal("boom")).is_ok());

  // The fallback (the restore point of the running attempt) is checked while nothing is retained.
  const std::string restored = ct::make_checkpoint(tmp_.path(), earlier_, 5);
  RestorePoint fallback{metadata(restored), restored, false};
  EXPECT_TRUE(jc->check_restore_point(fallback, Status::internal("boom")).is_ok());
  const std::string restored_file = ct::state_file_of(restored);
  ASSERT_FALSE(restored_file.empty());
  std::filesystem::remove(restored_file);
  Status missing = jc->check_restore_point(fallback, Status::internal("boom"));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.to_string();
  EXPECT_NE(missing.to_string().find("checkpoint 5 (" + restored + ")"), std::string::npos) << missing.to_string();

  // Once the job has a checkpoint of its own, that one is what the next attempt restores and what is checked.
  const std::string own = complete(*jc, 6);
  EXPECT_TRUE(jc->check_restore_point(fallback, Status::internal("boom")).is_ok());
  // Same size, other bytes: only a check of the checksums (after a failure that may come from damaged bytes) sees
  // it.
  const std::string file = ct::state_file_of(own);
  ASSERT_FALSE(file.empty());
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  EXPECT_TRUE(jc->check_restore_point(fallback, Status::internal("boom")).is_ok());
  Status damaged = jc->check_restore_point(fallback, Status::corruption("bad block"));
  EXPECT_EQ(damaged.code(), StatusCode::kCorruption) << damaged.to_string();
  EXPECT_NE(damaged.to_string().find("checkpoint 6"), std::string::npos) << damaged.to_string();
}

TEST_F(JobCheckpointsTest, AJobThatFailedOnAnUnusableRestorePointDeletesNothing) {
  auto jc = make(2);
  const std::string c1 = complete(*jc, 1), c2 = complete(*jc, 2);
  jc->cleanup_on_job_end(JobTerminalStatus::kFailedUnusableRestorePoint);
  EXPECT_TRUE(std::filesystem::exists(c1));
  EXPECT_TRUE(std::filesystem::exists(c2));
}

TEST_F(JobCheckpointsTest, AJobFolderWithoutACheckpointGoesAtJobEndInEveryMode) {
  for (JobTerminalStatus status : {JobTerminalStatus::kFailedUnusableRestorePoint, JobTerminalStatus::kFailed,
                                   JobTerminalStatus::kCanceled}) {
    SCOPED_TRACE(std::string(checkpoint::to_string(status)));
    const std::string restored = ct::make_checkpoint(tmp_.path(), earlier_, 5);
    auto jc = make(1, ExternalizedCheckpointRetention::kRetainOnCancellation);
    ASSERT_TRUE(std::filesystem::is_directory(tmp_ / job_.to_hex()));
    ASSERT_TRUE(jc->add_restored(metadata(restored), restored, true).is_ok());
    jc->cleanup_on_job_end(status);
    EXPECT_FALSE(std::filesystem::exists(tmp_ / job_.to_hex()));
    EXPECT_TRUE(std::filesystem::exists(restored));
    std::filesystem::remove_all(tmp_ / earlier_.to_hex());
  }
}

TEST_F(JobCheckpointsTest, ARefusedJobsEmptyFolderIsRemovedAndAFolderWithContentStays) {
  auto jc = make(1);
  jc->remove_job_folder_if_empty();
  EXPECT_FALSE(std::filesystem::exists(tmp_ / job_.to_hex()));

  auto again = make(1);
  const std::string own = complete(*again, 1);
  again->remove_job_folder_if_empty();
  EXPECT_TRUE(std::filesystem::exists(own));
}

TEST_F(JobCheckpointsTest, AFinishedJobDeletesItsCheckpointsAndFolderButNotANoClaimRestorePoint) {
  const std::string restored = ct::make_checkpoint(tmp_.path(), earlier_, 5);
  auto jc = make(2);
  ASSERT_TRUE(jc->add_restored(metadata(restored), restored, false).is_ok());
  const std::string own = complete(*jc, 6);
  jc->cleanup_on_job_end(JobTerminalStatus::kFinished);
  EXPECT_FALSE(std::filesystem::exists(own));
  EXPECT_FALSE(std::filesystem::exists(tmp_ / job_.to_hex()));
  EXPECT_TRUE(std::filesystem::exists(restored));
}

}  // namespace
}  // namespace sluice::cluster
