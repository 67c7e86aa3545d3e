// FileSystemCheckpointStorage: discard(n) racing with a writer of checkpoint n. A writer is
// held at an exact step by the fault-injection filesystem's hook (between its "is it discarded?" check and its
// mkdir or write) while discard(n) runs; when released it must leave nothing behind: no chk-<n>/, no file in it,
// no upload in shared/. Deterministic: the order is forced by the hook, no sleeps. Labelled runtime (tsan).
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "fs/fault_injection_file_system.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "test_util.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using sluice::fs::FaultInjectionFileSystem;
using sluice::fs::FileOp;
using testing::pattern;
using testing::TempDir;

const JobId kJob(0xabcd, 0x1234);

// Holds the first thread that reaches an operation of kind `op` on a path containing `needle` until released.
class Gate {
 public:
  Gate(FileOp op, std::string needle) : op_(op), needle_(std::move(needle)) {}

  void on_op(FileOp op, const std::string& path) {
    if (op != op_ || path.find(needle_) == std::string::npos) return;
    std::unique_lock lock(mu_);
    if (used_) return;
    used_ = true;
    arrived_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
  }
  void wait_arrived() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return arrived_; });
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  const FileOp op_;
  const std::string needle_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool used_ = false, arrived_ = false, released_ = false;
};

struct Fixture {
  TempDir tmp;
  std::shared_ptr<FaultInjectionFileSystem> faults = std::make_shared<FaultInjectionFileSystem>();
  std::unique_ptr<FileSystemCheckpointStorage> storage;
  std::string job_dir;

  Fixture() {
    FileSystemStorageOptions o;
    o.inline_threshold_bytes = 0;  // every state handle is a file
    o.file_system = faults;
    storage = std::make_unique<FileSystemCheckpointStorage>(tmp.path(), o);
    EXPECT_TRUE(storage->initialize(kJob).is_ok());
    job_dir = tmp.path() + "/" + kJob.to_hex();
  }
};

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(DiscardRace, WriterHeldBetweenCheckAndMkdirLeavesNoFolder) {
  Fixture f;
  Gate gate(FileOp::kCreateDir, "chk-1");
  f.faults->set_hook([&](FileOp op, const std::string& path) { gate.on_op(op, path); });
  Result<std::shared_ptr<CheckpointStreamFactory>> factory = Status::internal("not run");
  std::thread writer([&] { factory = f.storage->stream_factory(CheckpointId(1)); });
  gate.wait_arrived();  // the writer passed its discarded check and is about to mkdir chk-1
  EXPECT_TRUE(f.storage->discard(CheckpointId(1)).is_ok());
  gate.release();
  writer.join();
  EXPECT_EQ(factory.status().code(), StatusCode::kCancelled) << "a discarded checkpoint gets no factory";
  EXPECT_FALSE(fs::exists(f.job_dir + "/chk-1")) << "the writer's mkdir after the discard left an orphan folder";
  // And the id stays discarded: a later writer is refused without creating anything.
  EXPECT_EQ(f.storage->stream_factory(CheckpointId(1)).status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(fs::exists(f.job_dir + "/chk-1"));
}

TEST(DiscardRace, StateFileWriterHeldDuringDiscardLeavesNothing) {
  Fixture f;
  auto factory = f.storage->stream_factory(CheckpointId(2));
  ASSERT_TRUE(factory.is_ok()) << factory.status().to_string();
  Gate gate(FileOp::kWriteFile, "/chk-2/");
  f.faults->set_hook([&](FileOp op, const std::string& path) { gate.on_op(op, path); });
  Result<StreamStateHandle> written = Status::internal("not run");
  std::thread writer([&] { written = (*factory)->write_state("op 'x' subtask 0", "keyed", pattern(4096)); });
  gate.wait_arrived();  // past the discarded check, about to write chk-2/keyed-....inprogress
  EXPECT_TRUE(f.storage->discard(CheckpointId(2)).is_ok());
  gate.release();
  writer.join();
  EXPECT_EQ(written.status().code(), StatusCode::kCancelled) << written.status().to_string();
  EXPECT_FALSE(fs::exists(f.job_dir + "/chk-2")) << "the last writer out removes the discarded folder";
}

TEST(DiscardRace, SharedUploadHeldDuringDiscardLeavesNothingInShared) {
  Fixture f;
  const std::string local = f.tmp.path() + "/000012.sst";
  {
    std::ofstream out(local, std::ios::binary);
    out << std::string(10'000, 'r');
  }
  auto factory = f.storage->stream_factory(CheckpointId(3));
  ASSERT_TRUE(factory.is_ok()) << factory.status().to_string();
  Gate gate(FileOp::kWriteFile, "/shared/");
  f.faults->set_hook([&](FileOp op, const std::string& path) { gate.on_op(op, path); });
  Result<StreamStateHandle> uploaded = Status::internal("not run");
  std::thread writer([&] { uploaded = (*factory)->write_shared_file("op 'x' subtask 0", "sst", local); });
  gate.wait_arrived();
  EXPECT_TRUE(f.storage->discard(CheckpointId(3)).is_ok());
  gate.release();
  writer.join();
  EXPECT_EQ(uploaded.status().code(), StatusCode::kCancelled) << uploaded.status().to_string();
  EXPECT_EQ(entries(f.job_dir + "/shared"), 0u) << "an upload finished after the discard must not stay";
  EXPECT_FALSE(fs::exists(f.job_dir + "/chk-3"));
}

// Two writers in flight during the discard: whatever they leave, nothing remains once the last one is out.
TEST(DiscardRace, LastOfTwoWritersRemovesTheFolder) {
  Fixture f;
  auto factory = f.storage->stream_factory(CheckpointId(4));
  ASSERT_TRUE(factory.is_ok());
  Gate first(FileOp::kWriteFile, "/chk-4/a-");
  Gate second(FileOp::kWriteFile, "/chk-4/b-");
  f.faults->set_hook([&](FileOp op, const std::string& path) {
    first.on_op(op, path);
    second.on_op(op, path);
  });
  Result<StreamStateHandle> ra = Status::internal("not run"), rb = Status::internal("not run");
  std::thread a([&] { ra = (*factory)->write_state("subtask 0", "a", pattern(100)); });
  std::thread b([&] { rb = (*factory)->write_state("subtask 1", "b", pattern(100)); });
  first.wait_arrived();
  second.wait_arrived();
  EXPECT_TRUE(f.storage->discard(CheckpointId(4)).is_ok());
  first.release();
  a.join();
  EXPECT_EQ(ra.status().code(), StatusCode::kCancelled);
  second.release();
  b.join();
  EXPECT_EQ(rb.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(fs::exists(f.job_dir + "/chk-4"));
}

}  // namespace
}  // namespace sluice::checkpoint
