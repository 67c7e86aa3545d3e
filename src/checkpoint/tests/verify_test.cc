#include "checkpoint/checkpoint_verify.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "checkpoint/tests/checkpoint_fixture.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::make_checkpoint;
using testing::state_file_of;
using testing::TempDir;

const JobId kJob(3, 3), kOther(4, 4);

bool has_problem(const CheckpointVerification& c, const std::string& file, const std::string& text) {
  for (const VerifyProblem& p : c.problems) {
    if (p.file == file && p.problem.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Verify, IntactCheckpointIsOk) {
  TempDir tmp;
  const std::string chk = make_checkpoint(tmp.path(), kJob, 1);
  for (const std::string& path : {chk, chk + "/_metadata"}) {
    auto r = verify_checkpoint(path);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r->checkpoints.size(), 1u);
    const CheckpointVerification& c = r->checkpoints[0];
    EXPECT_TRUE(r->ok()) << r->to_string();
    EXPECT_EQ(c.checkpoint_id, CheckpointId(1));
    EXPECT_EQ(c.files_checked, 1u);
    EXPECT_EQ(c.inline_handles_checked, 1u);
    EXPECT_EQ(c.state_size_bytes, 4010u);
    EXPECT_NE(r->to_string().find("OK"), std::string::npos) << r->to_string();
  }
}

TEST(Verify, JobFolderReportsEachProblemByFile) {
  TempDir tmp;
  const std::string c1 = make_checkpoint(tmp.path(), kJob, 1);
  const std::string c2 = make_checkpoint(tmp.path(), kJob, 2);
  const std::string c3 = make_checkpoint(tmp.path(), kJob, 3);
  const std::string c4 = make_checkpoint(tmp.path(), kJob, 4);
  const std::string flipped = state_file_of(c2);
  testing::flip_byte(flipped, 17, 0x40);
  const std::string missing = state_file_of(c3);
  fs::remove(missing);
  testing::flip_byte(c4 + "/_metadata", 40);
  fs::create_directories(tmp / kJob.to_hex() + "/chk-5");  // incomplete: not a problem

  auto r = verify_checkpoint(tmp / kJob.to_hex());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->checkpoints.size(), 5u);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->problem_count(), 3u) << r->to_string();
  EXPECT_TRUE(r->checkpoints[0].problems.empty());
  EXPECT_TRUE(has_problem(r->checkpoints[1], flipped, "checksum mismatch")) << r->to_string();
  EXPECT_TRUE(has_problem(r->checkpoints[1], flipped, "operator 'op' subtask index 0 keyed state"));
  EXPECT_TRUE(has_problem(r->checkpoints[2], missing, "does not exist")) << r->to_string();
  EXPECT_TRUE(has_problem(r->checkpoints[3], c4 + "/_metadata", "Corruption")) << r->to_string();
  EXPECT_TRUE(r->checkpoints[4].incomplete);
  EXPECT_TRUE(r->checkpoints[4].problems.empty());

  const std::string text = r->to_string();
  EXPECT_NE(text.find(flipped), std::string::npos);
  EXPECT_NE(text.find(missing), std::string::npos);
  EXPECT_NE(text.find("incomplete"), std::string::npos);
  EXPECT_NE(text.find("4 checkpoints verified, 3 problems"), std::string::npos) << text;
  (void)c1;
}

TEST(Verify, CheckpointDirectoryScansEveryJobFolder) {
  TempDir tmp;
  make_checkpoint(tmp.path(), kJob, 1);
  make_checkpoint(tmp.path(), kOther, 2);
  const std::string bad = make_checkpoint(tmp.path(), kOther, 3);
  std::vector<uint8_t> truncated = testing::read_raw(state_file_of(bad));
  truncated.resize(100);
  testing::write_raw(state_file_of(bad), truncated);
  auto r = verify_checkpoint(tmp.path());
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(r->checkpoints.size(), 3u);
  EXPECT_EQ(r->problem_count(), 1u);
  EXPECT_TRUE(has_problem(r->checkpoints[2], state_file_of(bad), "100 bytes")) << r->to_string();
}

TEST(Verify, NamedIncompleteCheckpointIsAProblem) {
  TempDir tmp;
  fs::create_directories(tmp / "job/chk-9");
  auto r = verify_checkpoint(tmp / "job/chk-9");
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(r->checkpoints.size(), 1u);
  EXPECT_FALSE(r->checkpoints[0].incomplete);
  EXPECT_TRUE(has_problem(r->checkpoints[0], tmp / "job/chk-9/_metadata", "does not exist")) << r->to_string();
}

// Only incomplete checkpoints (chk-<n> without _metadata) under a directory or job folder: nothing was
// verified, so it is an error naming the path, not "0 checkpoints verified, 0 problems".
TEST(Verify, OnlyIncompleteCheckpointsIsAnError) {
  TempDir tmp;
  fs::create_directories(tmp / kJob.to_hex() + "/chk-3");
  fs::create_directories(tmp / kJob.to_hex() + "/chk-4");
  for (const std::string& path : {tmp.path(), tmp / kJob.to_hex()}) {
    auto r = verify_checkpoint(path);
    ASSERT_FALSE(r.is_ok()) << r->to_string();
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
    EXPECT_NE(r.status().message().find("no complete checkpoint (chk-<n> with _metadata) found under '" + path + "'"),
              std::string::npos)
        << r.status().message();
  }
}

// A report line names the checkpoint (its id), also when verifying its _metadata file.
TEST(Verify, ReportLabelsTheCheckpoint) {
  TempDir tmp;
  const std::string chk = make_checkpoint(tmp.path(), kJob, 7);
  auto r = verify_checkpoint(chk + "/_metadata");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->to_string().rfind("checkpoint 7 (" + chk + "): OK", 0), 0u) << r->to_string();
}

TEST(Verify, NothingThereIsAnError) {
  TempDir tmp;
  EXPECT_EQ(verify_checkpoint(tmp / "missing").status().code(), StatusCode::kNotFound);
  auto empty = verify_checkpoint(tmp.path());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_NE(empty.status().message().find(tmp.path()), std::string::npos);
}

}  // namespace
}  // namespace sluice::checkpoint
