#include "checkpoint/filesystem_checkpoint_storage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fs/fault_injection_file_system.h"
#include "checkpoint/restore_path.h"
#include "checkpoint/checkpoint_verify.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using sluice::fs::FaultInjectionFileSystem;
using sluice::fs::FileOp;
using testing::pattern;
using testing::TempDir;

const JobId kJob(0xaaaa, 0xbbbb);

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

std::string owner(int subtask) { return "operator 'per-auction' subtask " + std::to_string(subtask); }

// A checkpoint with one operator whose subtask 0 has keyed state `keyed_bytes` and operator state `op_bytes`.
Result<CheckpointMetadata> try_checkpoint(CheckpointStorage& storage, CheckpointId id,
                                          const std::vector<uint8_t>& keyed_bytes,
                                          const std::vector<uint8_t>& op_bytes) {
  SLUICE_ASSIGN_OR_RETURN(auto factory, storage.stream_factory(id));
  SLUICE_ASSIGN_OR_RETURN(StreamStateHandle k, factory->write_state(owner(0), "keyed-0", keyed_bytes));
  SLUICE_ASSIGN_OR_RETURN(StreamStateHandle o, factory->write_state(owner(0), "operator-0", op_bytes));
  CheckpointMetadata m;
  m.checkpoint_id = id;
  m.job_id = kJob;
  m.trigger_timestamp_ms = 1000 + id.value();
  OperatorState op;
  op.operator_id = "per-auction";
  op.parallelism = 1;
  op.max_parallelism = 128;
  OperatorSubtaskState st;
  st.keyed_state = testing::keyed(KeyGroupRange(0, 127), k);
  st.operator_state = o;
  op.subtasks = {st};
  m.operators = {op};
  return m;
}

CheckpointMetadata write_checkpoint(CheckpointStorage& storage, CheckpointId id,
                                    const std::vector<uint8_t>& keyed_bytes, const std::vector<uint8_t>& op_bytes) {
  auto m = try_checkpoint(storage, id, keyed_bytes, op_bytes);
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  return m.is_ok() ? *m : CheckpointMetadata{};
}

TEST(FileSystemStorage, InitializeCreatesTheSeedsLayout) {
  TempDir tmp;
  const std::string base = tmp / "a/b/checkpoints";  // missing levels are created
  FileSystemCheckpointStorage storage(base);
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  const std::string job_dir = base + "/" + kJob.to_hex();
  EXPECT_EQ(*storage.job_dir(), job_dir);
  EXPECT_EQ(entries(job_dir), (std::set<std::string>{"shared", "taskowned"}));
  EXPECT_TRUE(fs::is_directory(job_dir + "/shared"));
  EXPECT_TRUE(fs::is_directory(job_dir + "/taskowned"));
  // Idempotent: a second initialize of the same job is fine.
  EXPECT_TRUE(storage.initialize(kJob).is_ok());
  EXPECT_NE(storage.describe().find("filesystem:" + base), std::string::npos);
  EXPECT_NE(storage.describe().find("20 KiB"), std::string::npos) << storage.describe();
}

TEST(FileSystemStorage, StreamFactoryCreatesTheCheckpointFolderLazily) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path());
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  const std::string job_dir = tmp / kJob.to_hex();
  EXPECT_FALSE(fs::exists(job_dir + "/chk-1"));
  ASSERT_TRUE(storage.stream_factory(CheckpointId(1)).is_ok());
  EXPECT_TRUE(fs::is_directory(job_dir + "/chk-1"));
  EXPECT_EQ(*storage.checkpoint_dir(CheckpointId(1)), job_dir + "/chk-1");
}

// A savepoint target is any path the storage is asked for: "s3:/x" (one slash) is no local folder named "s3:".
TEST(FileSystemStorage, APathThatLooksLikeAMistypedUriIsRefused) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path());
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  EXPECT_TRUE(storage.file_system(tmp / "savepoints").is_ok());
  for (const std::string bad : {"s3:/x", "file:/tmp/sp", "hdfs:///sp", "file://"}) {
    auto f = storage.file_system(bad);
    ASSERT_FALSE(f.is_ok()) << bad;
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument) << f.status().to_string();
    EXPECT_NE(f.status().message().find("'" + bad + "'"), std::string::npos) << f.status().to_string();
  }
  EXPECT_FALSE(fs::exists("s3:")) << "a folder named after the scheme";
}

TEST(FileSystemStorage, RejectsBadOptionsAndUseBeforeInitialize) {
  TempDir tmp;
  FileSystemCheckpointStorage negative(tmp.path(), testing::threshold(-1));
  EXPECT_EQ(negative.initialize(kJob).code(), StatusCode::kInvalidArgument);
  FileSystemCheckpointStorage huge(tmp.path(), testing::threshold(kMaxInlineThresholdBytes + 1));
  Status st = huge.initialize(kJob);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("execution.checkpointing.data-inline-threshold"), std::string::npos);

  FileSystemCheckpointStorage storage(tmp.path());
  EXPECT_EQ(storage.stream_factory(CheckpointId(1)).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(storage.discard(CheckpointId(1)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(storage.write_metadata(testing::sample_metadata()).status().code(), StatusCode::kFailedPrecondition);
}

TEST(FileSystemStorage, InitializeNamesAnUnwritableDirectory) {
  TempDir tmp;
  testing::write_raw(tmp / "file", {1});
  FileSystemCheckpointStorage storage(tmp / "file/sub");
  Status st = storage.initialize(kJob);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find(tmp / "file"), std::string::npos) << st.message();
}

TEST(FileSystemStorage, InlineThresholdBoundary) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path(), testing::threshold(100));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto factory = *storage.stream_factory(CheckpointId(1));
  auto below = factory->write_state(owner(0), "s", pattern(99));
  auto at = factory->write_state(owner(0), "s", pattern(100));
  ASSERT_TRUE(below.is_ok() && at.is_ok());
  EXPECT_TRUE(below->is_inline());
  EXPECT_EQ(below->inline_bytes, pattern(99));
  EXPECT_EQ(below->size_bytes, 99u);
  EXPECT_FALSE(at->is_inline());
  EXPECT_TRUE(at->inline_bytes.empty());
  EXPECT_EQ(at->size_bytes, 100u);
  EXPECT_EQ(testing::read_raw(tmp / kJob.to_hex() + "/" + at->relative_path), pattern(100));

  // Default: 20 KiB.
  FileSystemCheckpointStorage dflt(tmp / "d");
  ASSERT_TRUE(dflt.initialize(kJob).is_ok());
  auto f2 = *dflt.stream_factory(CheckpointId(1));
  EXPECT_TRUE(f2->write_state(owner(0), "s", pattern(20 * 1024 - 1))->is_inline());
  EXPECT_FALSE(f2->write_state(owner(0), "s", pattern(20 * 1024))->is_inline());

  // 0: every handle is a file, even an empty one.
  FileSystemCheckpointStorage none(tmp / "n", testing::threshold(0));
  ASSERT_TRUE(none.initialize(kJob).is_ok());
  auto empty = (*none.stream_factory(CheckpointId(1)))->write_state(owner(0), "s", {});
  ASSERT_TRUE(empty.is_ok());
  EXPECT_FALSE(empty->is_inline());
  EXPECT_EQ(empty->size_bytes, 0u);
}

TEST(FileSystemStorage, StateFilesAreUniqueSanitizedAndComplete) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path(), testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto factory = *storage.stream_factory(CheckpointId(3));
  auto a = factory->write_state(owner(0), "keyed-0", pattern(10));
  auto b = factory->write_state(owner(0), "keyed-0", pattern(10, 7));
  auto c = factory->write_state(owner(0), "../a b/.x", pattern(10));
  ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok());
  EXPECT_NE(a->relative_path, b->relative_path);
  EXPECT_EQ(a->relative_path.rfind("chk-3/keyed-0-", 0), 0u) << a->relative_path;
  EXPECT_EQ(a->relative_path.size(), std::string("chk-3/keyed-0-").size() + 16);
  EXPECT_EQ(c->relative_path.rfind("chk-3/_._a_b_.x-", 0), 0u) << c->relative_path;
  EXPECT_NE(a->checksum, b->checksum);
  for (const std::string& name : entries(tmp / kJob.to_hex() + "/chk-3")) {
    EXPECT_EQ(name.find(".inprogress"), std::string::npos) << name;
  }
  EXPECT_EQ(entries(tmp / kJob.to_hex() + "/chk-3").size(), 3u);
}

TEST(FileSystemStorage, MetadataRoundTripAndStateReads) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path(), testing::threshold(64));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  CheckpointMetadata m = write_checkpoint(storage, CheckpointId(1), pattern(5000), pattern(10));
  auto location = storage.write_metadata(m);
  ASSERT_TRUE(location.is_ok()) << location.status().to_string();
  EXPECT_EQ(*location, tmp / kJob.to_hex() + "/chk-1");
  EXPECT_TRUE(fs::is_regular_file(*location + "/_metadata"));

  for (const std::string& where : {*location, *location + "/_metadata"}) {
    auto back = storage.read_metadata(where);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(*back, m);
  }
  const auto& st = m.operators[0].subtasks[0];
  EXPECT_FALSE(st.keyed_state->stream.is_inline());
  EXPECT_TRUE(st.operator_state->is_inline());
  EXPECT_EQ(*storage.read_state(*location, st.keyed_state->stream), pattern(5000));
  EXPECT_EQ(*storage.read_state(*location, *st.operator_state), pattern(10));

  // A fresh storage object (another process) reads it by path, before initialize.
  FileSystemCheckpointStorage other(tmp / "elsewhere");
  EXPECT_EQ(*other.read_state(*location + "/_metadata", st.keyed_state->stream), pattern(5000));

  // Completing twice is a bug in the caller.
  EXPECT_EQ(storage.write_metadata(m).status().code(), StatusCode::kFailedPrecondition);
  // So is metadata of another job.
  CheckpointMetadata foreign = m;
  foreign.checkpoint_id = CheckpointId(2);
  foreign.job_id = JobId(1, 2);
  EXPECT_EQ(storage.write_metadata(foreign).status().code(), StatusCode::kFailedPrecondition);
}

TEST(FileSystemStorage, CorruptOrMissingStateFileNamesTheFile) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path(), testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  CheckpointMetadata m = write_checkpoint(storage, CheckpointId(1), pattern(4096), pattern(100));
  auto location = *storage.write_metadata(m);
  const StreamStateHandle keyed = m.operators[0].subtasks[0].keyed_state->stream;
  const std::string file = tmp / kJob.to_hex() + "/" + keyed.relative_path;

  testing::flip_byte(file, 1000);
  auto flipped = storage.read_state(location, keyed);
  EXPECT_EQ(flipped.status().code(), StatusCode::kCorruption);
  EXPECT_NE(flipped.status().message().find(file), std::string::npos) << flipped.status().message();
  EXPECT_NE(flipped.status().message().find("checksum"), std::string::npos);

  auto bytes = pattern(4096);
  bytes.resize(4000);
  testing::write_raw(file, bytes);
  auto truncated = storage.read_state(location, keyed);
  EXPECT_EQ(truncated.status().code(), StatusCode::kCorruption);
  EXPECT_NE(truncated.status().message().find(file), std::string::npos);
  EXPECT_NE(truncated.status().message().find("4000 bytes"), std::string::npos) << truncated.status().message();

  fs::remove(file);
  auto missing = storage.read_state(location, keyed);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(file), std::string::npos);
}

TEST(FileSystemStorage, CorruptOrMissingMetadataNamesTheFile) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path());
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto location = *storage.write_metadata(write_checkpoint(storage, CheckpointId(4), pattern(10), pattern(10)));
  const std::string meta = location + "/_metadata";
  testing::flip_byte(meta, 20);
  auto r = storage.read_metadata(location);
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find(meta), std::string::npos) << r.status().message();

  ASSERT_TRUE(storage.stream_factory(CheckpointId(5)).is_ok());  // a folder, never completed
  auto missing = storage.read_metadata(*storage.checkpoint_dir(CheckpointId(5)));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("chk-5/_metadata"), std::string::npos) << missing.status().message();
}

TEST(FileSystemStorage, DiscardIsIdempotentAndJobFolderGoesWhenEmpty) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path(), testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  const std::string job_dir = tmp / kJob.to_hex();
  ASSERT_TRUE(storage.write_metadata(write_checkpoint(storage, CheckpointId(1), pattern(10), pattern(10))).is_ok());
  EXPECT_FALSE(*storage.remove_job_dir_if_empty());  // chk-1 is still there
  EXPECT_TRUE(storage.discard(CheckpointId(1)).is_ok());
  EXPECT_FALSE(fs::exists(job_dir + "/chk-1"));
  EXPECT_TRUE(storage.discard(CheckpointId(1)).is_ok());
  EXPECT_TRUE(storage.discard(CheckpointId(99)).is_ok());  // never existed

  testing::write_raw(job_dir + "/shared/sst-1", {1});
  EXPECT_FALSE(*storage.remove_job_dir_if_empty());  // shared state left
  fs::remove(job_dir + "/shared/sst-1");
  EXPECT_TRUE(*storage.remove_job_dir_if_empty());
  EXPECT_FALSE(fs::exists(job_dir));
  EXPECT_TRUE(fs::exists(tmp.path()));  // the checkpoint directory itself stays
  EXPECT_FALSE(*storage.remove_job_dir_if_empty());  // already gone
}

// An aborted checkpoint's subtask may still be writing when the coordinator discards it: its later writes
// fail with kCancelled and neither resurrect the folder nor leave files in it.
TEST(FileSystemStorage, WritesToADiscardedCheckpointAreRefusedAndLeaveNothing) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path(), testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto late_writer = storage.stream_factory(CheckpointId(3));
  ASSERT_TRUE(late_writer.is_ok());
  ASSERT_TRUE((*late_writer)->write_state("keyed op subtask 0", "keyed-0", pattern(100)).is_ok());
  const std::string chk3 = tmp / kJob.to_hex() + "/chk-3";
  ASSERT_TRUE(fs::exists(chk3));
  ASSERT_TRUE(storage.discard(CheckpointId(3)).is_ok());
  EXPECT_FALSE(fs::exists(chk3));

  auto late = (*late_writer)->write_state("keyed op subtask 1", "keyed-1", pattern(100));
  EXPECT_EQ(late.status().code(), StatusCode::kCancelled);
  EXPECT_NE(late.status().message().find("keyed op subtask 1"), std::string::npos) << late.status().message();
  auto reopened = storage.stream_factory(CheckpointId(3));
  EXPECT_EQ(reopened.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(fs::exists(chk3)) << "a late writer resurrected the discarded folder";
  EXPECT_TRUE(storage.stream_factory(CheckpointId(4)).is_ok());  // other checkpoints are unaffected
}

TEST(FileSystemStorage, ConcurrentWritersGetDistinctFiles) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp.path(), testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto factory = *storage.stream_factory(CheckpointId(1));
  constexpr int kThreads = 4, kPerThread = 25;
  std::vector<std::vector<StreamStateHandle>> handles(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto h = factory->write_state(owner(t), "s", pattern(64, static_cast<uint8_t>(t * 100 + i)));
        if (h.is_ok()) handles[t].push_back(*h);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> names;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(handles[t].size(), static_cast<size_t>(kPerThread));
    for (int i = 0; i < kPerThread; ++i) {
      names.insert(handles[t][i].relative_path);
      EXPECT_EQ(*storage.read_state(*storage.checkpoint_dir(CheckpointId(1)), handles[t][i]),
                pattern(64, static_cast<uint8_t>(t * 100 + i)));
    }
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kThreads * kPerThread));
}

// ---- crash consistency (STYLE.md habit 6) ----

class CrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ffs_ = std::make_shared<FaultInjectionFileSystem>();
    FileSystemStorageOptions options = testing::threshold(64);
    options.file_system = ffs_;
    storage_ = std::make_unique<FileSystemCheckpointStorage>(tmp_.path(), options);
    ASSERT_TRUE(storage_->initialize(kJob).is_ok());
    auto loc = storage_->write_metadata(write_checkpoint(*storage_, CheckpointId(1), pattern(5000), pattern(7000)));
    ASSERT_TRUE(loc.is_ok()) << loc.status().to_string();
  }
  CheckpointId latest() {
    auto p = resolve_restore_path("latest", tmp_.path());
    EXPECT_TRUE(p.is_ok()) << p.status().to_string();
    return p.is_ok() ? p->metadata.checkpoint_id : CheckpointId(-1);
  }
  std::string chk(int n) { return tmp_ / kJob.to_hex() + "/chk-" + std::to_string(n); }
  // A new storage object over the same folders, as after a crash and restart.
  void restart_process() {
    FileSystemStorageOptions options = testing::threshold(64);
    options.file_system = ffs_;
    storage_ = std::make_unique<FileSystemCheckpointStorage>(tmp_.path(), options);
    ASSERT_TRUE(storage_->initialize(kJob).is_ok());
  }

  TempDir tmp_;
  std::shared_ptr<FaultInjectionFileSystem> ffs_;
  std::unique_ptr<FileSystemCheckpointStorage> storage_;
};

TEST_F(CrashTest, CompletedCheckpointSurvivesPowerLoss) {
  auto loc = storage_->write_metadata(write_checkpoint(*storage_, CheckpointId(2), pattern(9000), pattern(10)));
  ASSERT_TRUE(loc.is_ok());
  ASSERT_TRUE(ffs_->drop_unsynced().is_ok());
  EXPECT_EQ(latest(), CheckpointId(2));
  auto report = verify_checkpoint(*loc);
  ASSERT_TRUE(report.is_ok());
  EXPECT_TRUE(report->ok()) << report->to_string();
  EXPECT_EQ(report->checkpoints.at(0).files_checked, 1u);
}

TEST_F(CrashTest, CrashWhileWritingMetadataKeepsThePreviousCheckpointLatest) {
  CheckpointMetadata m2 = write_checkpoint(*storage_, CheckpointId(2), pattern(9000), pattern(10));
  ffs_->inject_failure(FileOp::kWriteFile, "_metadata");
  ffs_->inject_failure(FileOp::kRemove, "_metadata", -1);  // the process is dead: no cleanup either
  auto r = storage_->write_metadata(m2);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("checkpoint 2"), std::string::npos) << r.status().message();
  ASSERT_TRUE(ffs_->drop_unsynced().is_ok());
  EXPECT_FALSE(fs::exists(chk(2) + "/_metadata"));
  EXPECT_EQ(latest(), CheckpointId(1));
}

TEST_F(CrashTest, CrashAfterMetadataWriteBeforeDirectorySyncKeepsThePreviousCheckpointLatest) {
  CheckpointMetadata m2 = write_checkpoint(*storage_, CheckpointId(2), pattern(9000), pattern(10));
  ffs_->inject_failure(FileOp::kSyncDir, "chk-2", 1, /*skip=*/1);  // the sync after `_metadata` was published
  ffs_->inject_failure(FileOp::kRemove, "_metadata", -1);
  ASSERT_FALSE(storage_->write_metadata(m2).is_ok());
  EXPECT_TRUE(fs::exists(chk(2) + "/_metadata")) << "published, but its name is not durable";
  ASSERT_TRUE(ffs_->drop_unsynced().is_ok());
  EXPECT_FALSE(fs::exists(chk(2) + "/_metadata"));
  EXPECT_EQ(latest(), CheckpointId(1));
}

TEST_F(CrashTest, FailedMetadataWriteIsTakenBack) {
  // The process lives on: a failed write_metadata leaves no `_metadata`, so the checkpoint never looks complete.
  CheckpointMetadata m2 = write_checkpoint(*storage_, CheckpointId(2), pattern(9000), pattern(10));
  ffs_->inject_failure(FileOp::kSyncDir, "chk-2", 1, /*skip=*/1);
  ASSERT_FALSE(storage_->write_metadata(m2).is_ok());
  EXPECT_FALSE(fs::exists(chk(2) + "/_metadata"));
  EXPECT_EQ(latest(), CheckpointId(1));
}

TEST_F(CrashTest, StateFileWriteFailureNamesTheOwner) {
  auto factory = *storage_->stream_factory(CheckpointId(2));
  ffs_->inject_failure(FileOp::kWriteFile, "chk-2/keyed");
  auto r = factory->write_state(owner(2), "keyed-2", pattern(1000));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIOError);
  EXPECT_NE(r.status().message().find(owner(2)), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("chk-2/keyed-2-"), std::string::npos) << r.status().message();
}

TEST_F(CrashTest, EveryCrashPointOfASecondCheckpointLeavesAValidLatest) {
  // Fail each filesystem mutation of checkpoint 2 in turn (the process dies there), pull the plug, and check
  // that `latest` is checkpoint 1 or a fully verifiable checkpoint 2.
  int lost = 0, survived = 0;
  for (FileOp op : {FileOp::kCreateDir, FileOp::kWriteFile, FileOp::kSyncDir}) {
    for (int skip = 0; skip < 6; ++skip) {
      SCOPED_TRACE("op " + std::to_string(static_cast<int>(op)) + " skip " + std::to_string(skip));
      ASSERT_TRUE(storage_->discard(CheckpointId(2)).is_ok());
      ffs_->clear_failures();
      restart_process();  // a discarded id stays discarded within one run
      ffs_->inject_failure(op, "chk-2", 1, skip);
      ffs_->inject_failure(FileOp::kRemove, "chk-2", -1);
      auto m = try_checkpoint(*storage_, CheckpointId(2), pattern(3000), pattern(4000));
      bool ok = m.is_ok() && storage_->write_metadata(*m).is_ok();
      ffs_->clear_failures();
      ASSERT_TRUE(ffs_->drop_unsynced().is_ok());
      CheckpointId l = latest();
      if (l == CheckpointId(2)) {
        ++survived;
        EXPECT_TRUE(ok) << "a checkpoint whose write_metadata failed became the latest";
        auto report = verify_checkpoint(chk(2));
        ASSERT_TRUE(report.is_ok());
        EXPECT_TRUE(report->ok()) << report->to_string();
      } else {
        ++lost;
        EXPECT_EQ(l, CheckpointId(1));
        EXPECT_FALSE(ok) << "a completed checkpoint was lost";
      }
    }
  }
  // Checkpoint 2 makes 6 mutations under chk-2 (create the folder; publish two state files and `_metadata`;
  // sync chk-2 before and after `_metadata`): failing any of them loses it, the other 12 runs complete it.
  EXPECT_EQ(lost, 6);
  EXPECT_EQ(survived, 3 * 6 - 6);
}

}  // namespace
}  // namespace sluice::checkpoint
