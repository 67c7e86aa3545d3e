// Writes real checkpoints through FileSystemCheckpointStorage for the restore-path and verify tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint::testing {

// Checkpoint `id` of `job` under `base`: one operator, subtask 0 with a file (4000 bytes) and an inline (10 bytes)
// handle; returns the chk-<n> folder.
inline std::string make_checkpoint(const std::string& base, const JobId& job, int64_t id,
                                   int64_t trigger_timestamp_ms = 0) {
  FileSystemCheckpointStorage storage(base, testing::threshold(100));
  EXPECT_TRUE(storage.initialize(job).is_ok());
  auto factory = storage.stream_factory(CheckpointId(id));
  EXPECT_TRUE(factory.is_ok());
  auto file = (*factory)->write_state("op subtask 0", "keyed-0", pattern(4000, static_cast<uint8_t>(id)));
  auto inl = (*factory)->write_state("op subtask 0", "operator-0", pattern(10));
  EXPECT_TRUE(file.is_ok() && inl.is_ok());
  CheckpointMetadata m;
  m.checkpoint_id = CheckpointId(id);
  m.job_id = job;
  m.trigger_timestamp_ms = trigger_timestamp_ms;
  OperatorState op;
  op.operator_id = "op";
  op.parallelism = 1;
  op.max_parallelism = 128;
  OperatorSubtaskState st;
  st.keyed_state = keyed(KeyGroupRange(0, 127), *file);
  st.operator_state = *inl;
  op.subtasks = {st};
  m.operators = {op};
  auto loc = storage.write_metadata(m);
  EXPECT_TRUE(loc.is_ok()) << loc.status().to_string();
  return loc.is_ok() ? *loc : "";
}

// The one state file of a make_checkpoint folder.
inline std::string state_file_of(const std::string& chk_dir) {
  for (const auto& e : std::filesystem::directory_iterator(chk_dir)) {
    if (e.path().filename().string().rfind("keyed-0-", 0) == 0) return e.path().string();
  }
  return "";
}

}  // namespace sluice::checkpoint::testing
