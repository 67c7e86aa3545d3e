// Helpers shared by the checkpoint tests: a temporary directory, sample metadata, raw file edits.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "fs/tests/fs_test_util.h"

namespace sluice::checkpoint::testing {

// A fresh directory under $TMPDIR, removed with everything in it when the object dies; bytes of a string; a file's
// raw bytes.
using sluice::fs::testing::TempDir;

inline FileSystemStorageOptions threshold(int64_t inline_threshold_bytes) {
  FileSystemStorageOptions o;
  o.inline_threshold_bytes = inline_threshold_bytes;
  return o;
}

using sluice::fs::testing::bytes_of;

inline std::vector<uint8_t> pattern(size_t n, uint8_t seed = 1) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 8));
  return out;
}

inline StreamStateHandle inline_handle(std::vector<uint8_t> bytes) {
  StreamStateHandle h;
  h.size_bytes = bytes.size();
  h.checksum = XXH3_64bits(bytes.data(), bytes.size());
  h.inline_bytes = std::move(bytes);
  return h;
}

inline StreamStateHandle file_handle(std::string relative_path, uint64_t size, uint64_t checksum) {
  StreamStateHandle h;
  h.relative_path = std::move(relative_path);
  h.size_bytes = size;
  h.checksum = checksum;
  return h;
}

inline KeyGroupsStateHandle keyed(KeyGroupRange range, StreamStateHandle stream) {
  KeyGroupsStateHandle k;
  k.range = range;
  // Spread the stream evenly over the key groups (the last offset is the stream's size).
  const uint64_t n = static_cast<uint64_t>(range.num_key_groups());
  for (uint64_t i = 0; i <= n; ++i) k.offsets.push_back(n == 0 ? stream.size_bytes : stream.size_bytes * i / n);
  k.stream = std::move(stream);
  return k;
}

// Metadata of checkpoint `id` of `job` with one operator `operator_id` (max parallelism 128) of which only `st`
// has state.
inline CheckpointMetadata single_subtask_metadata(CheckpointId id, JobId job, OperatorSubtaskState st,
                                                  std::string operator_id = "op", int32_t parallelism = 1) {
  CheckpointMetadata m;
  m.checkpoint_id = id;
  m.job_id = job;
  OperatorState op;
  op.operator_id = std::move(operator_id);
  op.parallelism = parallelism;
  op.max_parallelism = 128;
  op.subtasks = {std::move(st)};
  m.operators = {std::move(op)};
  return m;
}

// Metadata with every optional part: keyed and operator state, inline and file handles, an empty key-group
// range, a subtask with no state, an operator without subtasks, properties, non-UTF-8 text.
inline CheckpointMetadata sample_metadata(CheckpointId id = CheckpointId(7)) {
  CheckpointMetadata m;
  m.checkpoint_id = id;
  m.job_id = JobId(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
  m.lineage = {JobId(0x1111111111111111ULL, 0x2222222222222222ULL), JobId(0x3333333333333333ULL, 0x4444444444444444ULL)};
  m.trigger_timestamp_ms = 1'700'000'000'123;
  m.type = SnapshotType::kCheckpoint;

  OperatorState source;
  source.operator_id = "source-uid";
  source.operator_name = "Nexmark source";
  source.parallelism = 2;
  source.max_parallelism = 128;
  OperatorSubtaskState s0;
  s0.subtask_index = 0;
  s0.operator_state = inline_handle(bytes_of("split-0 offset 42"));
  OperatorSubtaskState s1;
  s1.subtask_index = 1;  // no state at all
  source.subtasks = {s0, s1};

  OperatorState agg;
  agg.operator_id = "per-auction";
  agg.operator_name = std::string("per \xff\xfe auction");  // not UTF-8
  agg.graph_position = "inputs: source-uid; outputs: auto-3-sink";  // an operator without a uid
  agg.parallelism = 3;
  agg.max_parallelism = 256;
  OperatorSubtaskState a0;
  a0.subtask_index = 0;
  a0.keyed_state = keyed(KeyGroupRange(0, 85), file_handle("chk-7/keyed-0-abc", 300000, 0x1111222233334444ULL));
  a0.operator_state = file_handle("chk-7/opstate-0-def", 25000, 42);
  OperatorSubtaskState a2;
  a2.subtask_index = 2;
  a2.keyed_state = keyed(KeyGroupRange(171, 255), inline_handle(pattern(1000)));
  agg.subtasks = {a0, a2};

  OperatorState sink;
  sink.operator_id = "sink";
  sink.parallelism = 1;
  sink.max_parallelism = 1;
  OperatorSubtaskState k0;
  k0.subtask_index = 0;
  k0.keyed_state = keyed(KeyGroupRange::empty(), inline_handle({}));
  sink.subtasks = {k0};

  OperatorState stateless;
  stateless.operator_id = "map-1";
  stateless.operator_name = "Map";
  stateless.parallelism = 4;
  stateless.max_parallelism = 128;

  m.operators = {source, agg, sink, stateless};
  m.properties = {{"demo.seed", "42"}, {"demo.events", "1000000"}, {"binary", std::string("\x00\x01\xff", 3)}};
  return m;
}

using sluice::fs::testing::read_raw;

inline void write_raw(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void flip_byte(const std::string& path, size_t index, uint8_t mask = 0x01) {
  auto bytes = read_raw(path);
  bytes.at(index) ^= mask;
  write_raw(path, bytes);
}

}  // namespace sluice::checkpoint::testing
