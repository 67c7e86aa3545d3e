#include "checkpoint/restore_path.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "fs/file_system.h"
#include "fs/path.h"
#include "checkpoint/tests/checkpoint_fixture.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using sluice::fs::local_file_system;
using testing::make_checkpoint;
using testing::TempDir;

const JobId kRunA(1, 1), kRunB(2, 2);

TEST(RestorePath, LatestIsTheHighestCompletedIdAcrossJobFolders) {
  TempDir tmp;
  for (int i = 1; i <= 3; ++i) make_checkpoint(tmp.path(), kRunA, i);
  make_checkpoint(tmp.path(), kRunB, 4);  // run B restored from A's chk-3 and continued
  const std::string b5 = make_checkpoint(tmp.path(), kRunB, 5);
  auto p = resolve_restore_path("latest", tmp.path());
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->location, b5);
  EXPECT_EQ(p->metadata.checkpoint_id, CheckpointId(5));
  EXPECT_EQ(p->metadata.job_id, kRunB);
}

TEST(RestorePath, LatestSkipsIncompleteFoldersAndNoise) {
  TempDir tmp;
  make_checkpoint(tmp.path(), kRunA, 2);
  const std::string seven = make_checkpoint(tmp.path(), kRunA, 7);
  const std::string job = tmp / kRunA.to_hex();
  fs::create_directories(job + "/chk-10");  // in progress when the process died: no _metadata
  testing::write_raw(job + "/chk-10/keyed-0-0000", {1, 2, 3});
  testing::write_raw(job + "/chk-11", {1});  // a file, not a folder
  fs::create_directories(job + "/chk-012/");  // not a canonical name
  fs::create_directories(job + "/chk-x");
  testing::write_raw(tmp / "stray-file", {1});
  auto p = resolve_restore_path("latest", tmp.path());
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->location, seven);
}

// Run B restored A's chk-4 (latest) and FINISHED, its own checkpoints deleted at the end: `latest` must not pick
// A's chk-4 again (a third run would process B's input a second time), however B was given the path.
TEST(RestorePath, LatestRefusesACheckpointARunRestoredAndFinishedWith) {
  for (const std::string form : {"", "./", "/"}) {
    TempDir tmp;
    make_checkpoint(tmp.path(), kRunA, 3);
    const std::string a4 = make_checkpoint(tmp.path(), kRunA, 4);
    const std::string b_job = tmp / kRunB.to_hex();
    fs::create_directories(b_job);
    std::string given = form == "/" ? a4 + "/" : form == "./" ? fs::relative(a4).string() : a4;
    const std::string record = format_finished_restore(FinishedRestore{given, 1'700'000'000'000});
    testing::write_raw(b_job + "/" + std::string(kFinishedRestoreFileName),
                       std::vector<uint8_t>(record.begin(), record.end()));
    auto p = resolve_restore_path("latest", tmp.path());
    ASSERT_FALSE(p.is_ok()) << "picked " << p->location << " again";
    EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(p.status().message().find(a4), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find(kRunB.to_hex()), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find("FINISHED"), std::string::npos) << p.status().message();
    // Named explicitly, it restores (processing it again on purpose).
    EXPECT_TRUE(resolve_restore_path(a4, tmp.path()).is_ok());
    // A newer checkpoint of another chain is not affected.
    const std::string b7 = make_checkpoint(tmp.path(), kRunB, 7);
    p = resolve_restore_path("latest", tmp.path());
    ASSERT_TRUE(p.is_ok()) << p.status().to_string();
    EXPECT_EQ(p->location, b7);
  }
}

TEST(RestorePath, AFinishedRestoreRecordThatDoesNotParseFailsLatestNamingIt) {
  TempDir tmp;
  make_checkpoint(tmp.path(), kRunA, 4);
  const std::string b_job = tmp / kRunB.to_hex();
  fs::create_directories(b_job);
  testing::write_raw(b_job + "/" + std::string(kFinishedRestoreFileName), {'x', 'y'});
  auto p = resolve_restore_path("latest", tmp.path());
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kCorruption);
  EXPECT_NE(p.status().message().find(b_job + "/" + std::string(kFinishedRestoreFileName)), std::string::npos)
      << p.status().message();
}

TEST(RestorePath, FinishedRestoreRecordRoundTrips) {
  const FinishedRestore r{"s3://bucket/ck/0123/chk-9", 1'765'000'000'123};
  auto back = parse_finished_restore(format_finished_restore(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->restored_location, r.restored_location);
  EXPECT_EQ(back->finished_at_ms, r.finished_at_ms);
  for (const char* bad : {"", "restored \nfinished_at_ms 1\n", "restored x\nfinished_at_ms \n",
                          "restored x\nfinished_at_ms 12a\n", "chk x\nfinished_at_ms 1\n",
                          "restored x\nfinished_at_ms -5\n", "restored x\nfinished_at_ms 99999999999999999999\n"}) {
    EXPECT_FALSE(parse_finished_restore(bad).has_value()) << bad;
  }
}

TEST(RestorePath, CorruptHighestFailsLoudlyNamingTheFile) {
  TempDir tmp;
  make_checkpoint(tmp.path(), kRunA, 8);
  const std::string nine = make_checkpoint(tmp.path(), kRunA, 9);
  testing::flip_byte(nine + "/_metadata", 30);
  auto p = resolve_restore_path("latest", tmp.path());
  ASSERT_FALSE(p.is_ok()) << "must not fall back to chk-8";
  EXPECT_EQ(p.status().code(), StatusCode::kCorruption);
  EXPECT_NE(p.status().message().find(nine + "/_metadata"), std::string::npos) << p.status().message();

  testing::write_raw(nine + "/_metadata", {});  // truncated to nothing
  p = resolve_restore_path("latest", tmp.path());
  EXPECT_EQ(p.status().code(), StatusCode::kCorruption);
  EXPECT_NE(p.status().message().find(nine + "/_metadata"), std::string::npos);
}

TEST(RestorePath, NothingToRestoreIsALoudError) {
  TempDir tmp;
  auto empty = resolve_restore_path("latest", tmp.path());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_NE(empty.status().message().find(tmp.path()), std::string::npos);
  EXPECT_EQ(resolve_restore_path("latest", tmp / "missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(resolve_restore_path("latest", "").status().code(), StatusCode::kInvalidArgument);
  fs::create_directories(tmp / "job/chk-1");  // only incomplete
  EXPECT_EQ(resolve_restore_path("latest", tmp.path()).status().code(), StatusCode::kNotFound);
}

TEST(RestorePath, ExplicitFolderOrMetadataFile) {
  TempDir tmp;
  const std::string three = make_checkpoint(tmp.path(), kRunA, 3);
  make_checkpoint(tmp.path(), kRunA, 4);
  for (const std::string& path : {three, three + "/", three + "/_metadata"}) {
    auto p = resolve_restore_path(path, "/ignored");
    ASSERT_TRUE(p.is_ok()) << path << ": " << p.status().to_string();
    EXPECT_EQ(p->metadata.checkpoint_id, CheckpointId(3));
    EXPECT_EQ(p->location, three);
  }
  auto missing = resolve_restore_path(tmp / "nope/chk-1", "");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(tmp / "nope/chk-1"), std::string::npos);
}

// A job folder or a checkpoint directory named instead of a checkpoint: the error says which it is and what to
// pass instead, rather than "'<folder>/_metadata' does not exist".
TEST(RestorePath, JobFolderOrCheckpointDirectoryIsExplained) {
  TempDir tmp;
  make_checkpoint(tmp.path(), kRunA, 3);
  make_checkpoint(tmp.path(), kRunA, 4);
  const std::string job = tmp / kRunA.to_hex();
  auto job_dir = resolve_restore_path(job, "");
  EXPECT_EQ(job_dir.status().code(), StatusCode::kInvalidArgument);
  const std::string jm = job_dir.status().message();
  EXPECT_NE(jm.find("is a job folder"), std::string::npos) << jm;
  EXPECT_NE(jm.find(job + "/chk-4"), std::string::npos) << jm;
  EXPECT_NE(jm.find("'latest'"), std::string::npos) << jm;
  EXPECT_EQ(jm.find("does not exist"), std::string::npos) << jm;

  auto top = resolve_restore_path(tmp.path(), "");
  EXPECT_EQ(top.status().code(), StatusCode::kInvalidArgument);
  const std::string tm = top.status().message();
  EXPECT_NE(tm.find("is a checkpoint directory"), std::string::npos) << tm;
  EXPECT_NE(tm.find("'latest'"), std::string::npos) << tm;

  // A plain folder that holds no checkpoints at all keeps the plain message.
  fs::create_directories(tmp / "empty");
  auto plain = resolve_restore_path(tmp / "empty", "");
  EXPECT_EQ(plain.status().code(), StatusCode::kNotFound);
  EXPECT_NE(plain.status().message().find("_metadata"), std::string::npos);
}

// An explicitly empty path is an error naming the flag, the key and what is expected (not a fresh start).
TEST(RestorePath, EmptyPathIsAnError) {
  auto p = resolve_restore_path("", "/some/dir");
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  const std::string m = p.status().message();
  for (const char* part : {"--restore", "execution.state-recovery.path", "chk-<n>", "_metadata", "latest"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  }
}

TEST(RestorePath, PropertiesMustMatch) {
  CheckpointMetadata m;
  m.checkpoint_id = CheckpointId(12);
  m.properties = {{"demo.events", "1000"}, {"demo.seed", "1"}, {"demo.splits", "8"}};
  EXPECT_TRUE(check_restore_properties(m, m.properties).is_ok());
  Status s = check_restore_properties(m, {{"demo.events", "2000"}, {"demo.seed", "1"}, {"demo.splits", "4"},
                                          {"demo.rate", "10"}});
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  const std::string msg = s.message();
  EXPECT_NE(msg.find("checkpoint 12"), std::string::npos) << msg;
  EXPECT_NE(msg.find("demo.events: checkpoint '1000', this job '2000'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("demo.splits: checkpoint '8', this job '4'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("demo.rate: checkpoint (not recorded), this job '10'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("demo.seed"), std::string::npos) << msg;
  // A checkpoint without properties restores into a job without properties.
  EXPECT_TRUE(check_restore_properties(CheckpointMetadata{}, {}).is_ok());
}

TEST(RestorePath, MetadataInTheWrongFolderIsCorruption) {
  TempDir tmp;
  const std::string three = make_checkpoint(tmp.path(), kRunA, 3);
  fs::create_directories(tmp / kRunA.to_hex() + "/chk-4");
  fs::copy_file(three + "/_metadata", tmp / kRunA.to_hex() + "/chk-4/_metadata");
  auto p = resolve_restore_path("latest", tmp.path());
  EXPECT_EQ(p.status().code(), StatusCode::kCorruption);
  EXPECT_NE(p.status().message().find("chk-4"), std::string::npos) << p.status().message();
}

TEST(RestorePath, ARenamedCheckpointFolderIsRefusedSayingWhy) {
  TempDir tmp;
  const std::string three = make_checkpoint(tmp.path(), kRunA, 3);
  const std::string renamed = tmp / kRunA.to_hex() + "/my-copy";
  fs::rename(three, renamed);
  auto p = resolve_restore_path(renamed, "");
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
  const std::string msg = p.status().message();
  EXPECT_NE(msg.find(renamed), std::string::npos) << msg;
  EXPECT_NE(msg.find("folder named chk-3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("savepoint"), std::string::npos) << msg;

  // Moved elsewhere under its own name, it still resolves (its files are found from its new parent).
  fs::create_directories(tmp / "elsewhere");
  const std::string moved = tmp / "elsewhere/chk-3";
  fs::rename(renamed, moved);
  auto q = resolve_restore_path(moved, "");
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  EXPECT_EQ(q->metadata.checkpoint_id, CheckpointId(3));
  EXPECT_TRUE(check_restore_files(*local_file_system(), q->location, q->metadata, RestoreFileCheck::kChecksums)
                  .is_ok());
}

TEST(RestorePath, SameHighestIdInTwoRunsPicksTheLaterTrigger) {
  TempDir tmp;
  const std::string b = make_checkpoint(tmp.path(), kRunB, 3, /*trigger_timestamp_ms=*/100);
  const std::string a = make_checkpoint(tmp.path(), kRunA, 3, /*trigger_timestamp_ms=*/200);
  auto p = resolve_restore_path("latest", tmp.path());
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->location, a);
}

// What a restore in CLAIM mode claims: the checkpoint directory the checkpoint was written in.
TEST(CheckpointDirOf, TheDirectoryAboveTheJobFolderOrTheFolderHoldingACopy) {
  const std::string job = "0123456789abcdef0123456789abcdef";
  EXPECT_EQ(checkpoint_dir_of("/data/ck/" + job + "/chk-12"), "/data/ck");
  EXPECT_EQ(checkpoint_dir_of("/data/ck/" + job + "/chk-12/"), "/data/ck");
  EXPECT_EQ(checkpoint_dir_of("ck/" + job + "/chk-3"), "ck");
  EXPECT_EQ(checkpoint_dir_of(job + "/chk-3"), ".");
  EXPECT_EQ(checkpoint_dir_of("file:///data/ck/" + job + "/chk-1"), "file:///data/ck");
  EXPECT_EQ(checkpoint_dir_of("s3://bucket/ck/" + job + "/chk-1"), "s3://bucket/ck");
  // Outside the layout: the folder holding it.
  EXPECT_EQ(checkpoint_dir_of("/backup/chk-12"), "/backup");
  EXPECT_EQ(checkpoint_dir_of("/data/ck/not-a-job-id/chk-12"), "/data/ck/not-a-job-id");
  EXPECT_EQ(checkpoint_dir_of("/data/ck/" + job + "/savepoint-7"), "/data/ck/" + job);
  EXPECT_EQ(checkpoint_dir_of("chk-3"), ".");
}

}  // namespace
}  // namespace sluice::checkpoint
