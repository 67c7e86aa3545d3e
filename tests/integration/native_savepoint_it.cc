// Native-format savepoints end to end (docs/savepoints.md "Native format"), on the main job (per-auction
// count/sum/max into the exactly-once file sink) and the in-process cluster:
// - RocksDB, taken while the job runs: `_metadata` records NATIVE and rocksdb; the keyed state is the database's
//   own files, all in the savepoint folder under plain names; it commits nothing; restored at the same
//   parallelism (2) and rescaled (2 -> 3), each exactly once against the single-threaded oracle;
// - RocksDB with incremental checkpoints, stopped with a native savepoint after several incremental checkpoints:
//   the checkpoint directory (shared/ included) is deleted and the savepoint folder moved, then the restore is
//   exactly once - the savepoint never refers to a checkpoint's shared files;
// - heap: a native savepoint holds the heap backend's full snapshot; it restores into the heap backend;
// - a native savepoint restored into the other backend fails before anything runs, naming the savepoint, the
//   backend it was taken with and the configured one (both directions).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/restore_path.h"
#include "savepoint_it_util.h"

namespace sluice {
namespace {

using namespace savepoint_it;  // NOLINT: the helpers of this suite
namespace fs = std::filesystem;
using checkpoint::SavepointFormatType;

constexpr int64_t kNativeEvents = 600'000;

checkpoint::CheckpointMetadata read_metadata(const std::string& folder) {
  auto& lfs = *sluice::fs::local_file_system();
  auto loc = checkpoint::locate_checkpoint(lfs, folder);
  EXPECT_TRUE(loc.is_ok()) << loc.status().to_string();
  if (!loc.is_ok()) return {};
  auto md = checkpoint::read_checkpoint_metadata(lfs, *loc);
  EXPECT_TRUE(md.is_ok()) << md.status().to_string();
  return md.is_ok() ? *md : checkpoint::CheckpointMetadata{};
}

// A native RocksDB savepoint: NATIVE and rocksdb recorded, the keyed operator's state as RocksDB files (none reused,
// every one a plain name present in the folder), no full keyed state; the folder holds files only.
void expect_native_rocksdb(const std::string& folder) {
  const checkpoint::CheckpointMetadata md = read_metadata(folder);
  EXPECT_EQ(md.type, checkpoint::SnapshotType::kSavepoint);
  EXPECT_EQ(md.savepoint_format, SavepointFormatType::kNative);
  EXPECT_EQ(md.state_backend, "rocksdb");
  EXPECT_TRUE(md.shared_files().empty()) << "a native savepoint shares no file";
  int64_t sst = 0, handles = 0;
  for (const auto& op : md.operators) {
    for (const auto& st : op.subtasks) {
      EXPECT_FALSE(st.keyed_state.has_value()) << op.operator_id << ": full keyed state in a native RocksDB savepoint";
      if (!st.incremental_keyed_state) continue;
      ++handles;
      for (const auto* list : {&st.incremental_keyed_state->shared_files, &st.incremental_keyed_state->private_files}) {
        for (const auto& f : *list) {
          EXPECT_FALSE(f.reused) << f.local_name;
          EXPECT_EQ(f.file.relative_path.find('/'), std::string::npos) << f.file.relative_path;
          EXPECT_TRUE(fs::exists(folder + "/" + f.file.relative_path)) << f.file.relative_path;
          if (list == &st.incremental_keyed_state->shared_files) ++sst;
        }
      }
    }
  }
  EXPECT_EQ(handles, 2) << "one RocksDB handle per subtask of the keyed operator";
  EXPECT_GT(sst, 0) << "SST files in the savepoint";
  for (const auto& e : fs::recursive_directory_iterator(folder)) EXPECT_TRUE(e.is_regular_file()) << e.path();
}

// Restores `savepoint` at `parallelism` on `backend` into `output` and checks exactly-once.
void restore_exactly_once(const std::string& base, const std::string& job, const std::string& savepoint,
                          int32_t parallelism, const std::string& backend, const std::string& output) {
  auto r = start(base, job, parallelism, backend, output, savepoint, false, {}, kNativeEvents);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto done = r->client->wait();
  ASSERT_EQ(done.status, JobStatus::kFinished) << done.error.to_string();
  ASSERT_TRUE(r->cp->initial_restore().has_value());
  EXPECT_EQ(r->cp->initial_restore()->second, savepoint);
  r->client.reset();
  expect_exactly_once(output, kNativeEvents);
}

// Restoring `savepoint` on `backend` fails at submission, naming the savepoint and both backends.
void expect_refused(const std::string& base, const std::string& savepoint, const std::string& taken_with,
                    const std::string& backend) {
  auto r = start(base, "native-refused", 2, backend, base + "/out-refused", savepoint, false, {}, kNativeEvents);
  ASSERT_FALSE(r.is_ok()) << "a native " << taken_with << " savepoint restored into " << backend;
  const std::string msg = r.status().to_string();
  EXPECT_NE(msg.find("NATIVE format of the " + taken_with + " state backend"), std::string::npos) << msg;
  EXPECT_NE(msg.find("state.backend.type " + backend), std::string::npos) << msg;
  EXPECT_NE(msg.find(savepoint), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(base + "/out-refused") && !fs::is_empty(base + "/out-refused")) << "nothing ran";
}

TEST(NativeSavepointIT, RocksDBWhileRunningRestoresAtTheSameAndAnotherParallelismAndNotIntoTheHeap) {
  const std::string base = temp_base("native-running");
  auto first = start(base, "native-running", 2, "rocksdb", base + "/out", "", false, {}, kNativeEvents);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  wait_for_events(*first, "native-running", kNativeEvents / 5);
  auto trigger = first->cp->trigger_savepoint(base + "/savepoints", SavepointFormatType::kNative);
  ASSERT_TRUE(trigger.is_ok()) << trigger.status().to_string();
  auto st = first->cp->wait_savepoint(*trigger, 60'000);
  ASSERT_TRUE(st.has_value());
  ASSERT_EQ(st->state, cluster::SavepointRequestStatus::State::kCompleted) << st->cause.to_string();
  EXPECT_EQ(first->client->status(), JobStatus::kRunning) << "a savepoint does not stop the job";
  first->client->cancel();
  EXPECT_EQ(first->client->wait().status, JobStatus::kCanceled);
  first->client.reset();
  EXPECT_TRUE(committed_lines(base + "/out").empty()) << "a native savepoint commits no side effects either";
  expect_native_rocksdb(st->location);

  expect_refused(base, st->location, "rocksdb", "hashmap");
  fs::copy(base + "/out", base + "/out-rescaled", fs::copy_options::recursive);
  restore_exactly_once(base, "native-same", st->location, 2, "rocksdb", base + "/out");
  restore_exactly_once(base, "native-rescaled", st->location, 3, "rocksdb", base + "/out-rescaled");
  EXPECT_EQ(final_lines(base + "/out"), final_lines(base + "/out-rescaled"));
  EXPECT_TRUE(fs::exists(st->location + "/_metadata")) << "a savepoint is never deleted by the job";
  fs::remove_all(base);
}

TEST(NativeSavepointIT, StopAfterIncrementalCheckpointsIsSelfContainedAndRestoresAfterTheCheckpointsAreGone) {
  const std::string base = temp_base("native-stop");
  // The sources hold at half of the events (idle, checkpoints go on) however fast the job is.
  auto gate = std::make_shared<nexmark::NexmarkEmitGate>();
  gate->limit = kNativeEvents / 2;
  auto first = start(base, "native-stop", 2, "rocksdb", base + "/out", "", false,
                     {{"execution.checkpointing.incremental", "true"}, {"execution.checkpointing.interval", "150ms"}},
                     kNativeEvents, gate);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  // Several incremental checkpoints complete first: the later ones reuse SST files of the earlier ones in shared/.
  while (first->client->status() == JobStatus::kRunning && first->cp->checkpoint_stats().num_completed < 3) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(first->client->status(), JobStatus::kRunning) << "the job ended before 3 checkpoints completed";
  const std::string savepoint = stop(*first, base + "/savepoints", /*drain=*/false, SavepointFormatType::kNative);
  ASSERT_FALSE(savepoint.empty());
  first->client.reset();
  expect_native_rocksdb(savepoint);
  EXPECT_GT(committed_lines(base + "/out").size(), 0u) << "the stop's savepoint committed the sink's output";

  // Nothing of the checkpoints is needed: delete them all (shared/ included), move the savepoint, restore it.
  fs::remove_all(base + "/ck");
  const std::string moved = base + "/elsewhere/renamed-native-savepoint";
  fs::create_directories(base + "/elsewhere");
  fs::rename(savepoint, moved);
  restore_exactly_once(base, "native-after-stop", moved, 2, "rocksdb", base + "/out");
  fs::remove_all(base);
}

TEST(NativeSavepointIT, HeapNativeSavepointRestoresIntoTheHeapOnlyAndAtAnotherParallelism) {
  const std::string base = temp_base("native-heap");
  auto first = start(base, "native-heap", 2, "hashmap", base + "/out", "", false, {}, kNativeEvents);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  wait_for_events(*first, "native-heap", kNativeEvents / 5);
  const std::string savepoint = stop(*first, base + "/savepoints", /*drain=*/false, SavepointFormatType::kNative);
  ASSERT_FALSE(savepoint.empty());
  first->client.reset();
  const checkpoint::CheckpointMetadata md = read_metadata(savepoint);
  EXPECT_EQ(md.savepoint_format, SavepointFormatType::kNative);
  EXPECT_EQ(md.state_backend, "hashmap");
  EXPECT_FALSE(md.has_incremental_state()) << "the heap backend's own snapshot is the full key-group format";

  expect_refused(base, savepoint, "hashmap", "rocksdb");
  restore_exactly_once(base, "native-heap-restored", savepoint, 3, "hashmap", base + "/out");
  fs::remove_all(base);
}

}  // namespace
}  // namespace sluice
