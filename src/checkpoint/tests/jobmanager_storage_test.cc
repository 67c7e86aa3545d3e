#include "checkpoint/jobmanager_checkpoint_storage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

using testing::pattern;
using testing::TempDir;

const JobId kJob(0x1234, 0x5678);
const std::string kOwner = "operator 'per-auction' subtask 2";

CheckpointMetadata inline_metadata(CheckpointId id, const StreamStateHandle& h) {
  CheckpointMetadata m;
  m.checkpoint_id = id;
  m.job_id = kJob;
  OperatorState op;
  op.operator_id = "per-auction";
  op.parallelism = 3;
  op.max_parallelism = 128;
  OperatorSubtaskState st;
  st.subtask_index = 2;
  st.operator_state = h;
  op.subtasks = {st};
  m.operators = {op};
  return m;
}

TEST(JobManagerStorage, StateAtMaxSizeIsInlineAndOneByteMoreFailsNamingOwnerAndSizes) {
  JobManagerCheckpointStorage storage({.max_state_size_bytes = 1000});
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto factory = *storage.stream_factory(CheckpointId(1));
  auto at = factory->write_state(kOwner, "s", pattern(1000));
  ASSERT_TRUE(at.is_ok());
  EXPECT_TRUE(at->is_inline());
  EXPECT_EQ(at->inline_bytes, pattern(1000));

  auto over = factory->write_state(kOwner, "s", pattern(1001));
  ASSERT_FALSE(over.is_ok());
  const std::string& msg = over.status().message();
  EXPECT_NE(msg.find(kOwner), std::string::npos) << msg;
  EXPECT_NE(msg.find("1001 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1000 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max state size"), std::string::npos) << msg;
}

TEST(JobManagerStorage, DefaultMaxIsFiveMebibytes) {
  JobManagerCheckpointStorage storage;
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  EXPECT_EQ(storage.describe(), "jobmanager (max state size 5 MiB)");
  auto factory = *storage.stream_factory(CheckpointId(1));
  EXPECT_TRUE(factory->write_state(kOwner, "s", std::vector<uint8_t>(5 * 1024 * 1024)).is_ok());
  auto over = factory->write_state(kOwner, "s", std::vector<uint8_t>(6'396'313));
  ASSERT_FALSE(over.is_ok());
  EXPECT_NE(over.status().message().find("state of 6.1 MiB"), std::string::npos) << over.status().message();
  EXPECT_NE(over.status().message().find("5 MiB"), std::string::npos);
}

TEST(JobManagerStorage, MetadataRoundTripDiscardAndLocations) {
  JobManagerCheckpointStorage storage;
  EXPECT_EQ(storage.stream_factory(CheckpointId(1)).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto h = *(*storage.stream_factory(CheckpointId(1)))->write_state(kOwner, "s", pattern(300));
  CheckpointMetadata m = inline_metadata(CheckpointId(1), h);
  auto location = storage.write_metadata(m);
  ASSERT_TRUE(location.is_ok()) << location.status().to_string();
  EXPECT_EQ(*location, "jobmanager://" + kJob.to_hex() + "/1");
  EXPECT_EQ(*storage.read_metadata(*location), m);
  EXPECT_EQ(*storage.read_state(*location, h), pattern(300));
  EXPECT_EQ(storage.write_metadata(m).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(*storage.remove_job_dir_if_empty());

  StreamStateHandle damaged = h;
  damaged.inline_bytes[0] ^= 1;
  EXPECT_EQ(storage.read_state(*location, damaged).status().code(), StatusCode::kCorruption);

  EXPECT_TRUE(storage.discard(CheckpointId(1)).is_ok());
  EXPECT_TRUE(storage.discard(CheckpointId(1)).is_ok());
  EXPECT_EQ(storage.read_metadata(*location).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(storage.read_metadata("/not/a/location").status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(*storage.remove_job_dir_if_empty());
}

TEST(JobManagerStorage, RefusesFileHandlesAndForeignJobs) {
  JobManagerCheckpointStorage storage;
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  CheckpointMetadata with_file = inline_metadata(CheckpointId(1), testing::file_handle("chk-1/x", 10, 1));
  auto r = storage.write_metadata(with_file);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("chk-1/x"), std::string::npos);
  EXPECT_EQ(storage.read_state("jobmanager://x/1", testing::file_handle("chk-1/x", 10, 1)).status().code(),
            StatusCode::kInvalidArgument);

  CheckpointMetadata foreign = inline_metadata(CheckpointId(2), testing::inline_handle({1, 2}));
  foreign.job_id = JobId(9, 9);
  EXPECT_EQ(storage.write_metadata(foreign).status().code(), StatusCode::kFailedPrecondition);

  JobManagerCheckpointStorage bad({.max_state_size_bytes = 0});
  EXPECT_EQ(bad.initialize(kJob).code(), StatusCode::kInvalidArgument);
}

// Flink's JobManagerCheckpointStorage writes savepoints to their target folder: checkpoints stay in memory, a
// savepoint's state files and _metadata go to files, and a restore reads them back through the same storage.
TEST(JobManagerStorage, SavepointsGoToTheirFolderWhileCheckpointsStayInMemory) {
  TempDir tmp;
  const std::string folder = tmp.path() + "/savepoint-1";
  std::filesystem::create_directories(folder);
  auto files = std::make_shared<FileSystemCheckpointStorage>("", FileSystemStorageOptions{});
  JobManagerCheckpointStorage storage({}, files);
  EXPECT_TRUE(storage.supports_savepoints());
  EXPECT_TRUE(storage.keeps_checkpoints_in_memory());
  ASSERT_TRUE(storage.initialize(kJob).is_ok());

  auto checkpoint_handle = *(*storage.stream_factory(CheckpointId(1)))->write_state(kOwner, "s", pattern(300));
  auto checkpoint = storage.write_metadata(inline_metadata(CheckpointId(1), checkpoint_handle));
  ASSERT_TRUE(checkpoint.is_ok()) << checkpoint.status().to_string();
  EXPECT_EQ(*checkpoint, "jobmanager://" + kJob.to_hex() + "/1");

  ASSERT_TRUE(storage.begin_savepoint(CheckpointId(2), folder).is_ok());
  auto handle = (*storage.stream_factory(CheckpointId(2)))->write_state(kOwner, "s", pattern(100'000));
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();  // over the 20 KiB inline threshold: a file
  EXPECT_FALSE(handle->is_inline());
  CheckpointMetadata savepoint_metadata = inline_metadata(CheckpointId(2), *handle);
  savepoint_metadata.type = SnapshotType::kSavepoint;
  auto savepoint = storage.write_metadata(savepoint_metadata);
  ASSERT_TRUE(savepoint.is_ok()) << savepoint.status().to_string();
  EXPECT_TRUE(std::filesystem::exists(*savepoint + "/_metadata")) << *savepoint;
  EXPECT_TRUE(std::filesystem::equivalent(*savepoint, folder)) << *savepoint;
  EXPECT_EQ(storage.read_metadata(*savepoint)->checkpoint_id, CheckpointId(2));
  EXPECT_EQ(*storage.read_state(*savepoint, *handle), pattern(100'000));
  // The checkpoint is still the memory's.
  EXPECT_EQ(*storage.read_state(*checkpoint, checkpoint_handle), pattern(300));

  // Without a file storage a savepoint is refused, naming the key that gives one.
  JobManagerCheckpointStorage plain;
  ASSERT_TRUE(plain.initialize(kJob).is_ok());
  EXPECT_FALSE(plain.supports_savepoints());
  const Status refused = plain.begin_savepoint(CheckpointId(3), tmp.path() + "/other");
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("execution.checkpointing.dir"), std::string::npos) << refused.to_string();
}

}  // namespace
}  // namespace sluice::checkpoint
