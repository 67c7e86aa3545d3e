// Shared by the channel-state assignment tests (channel_state_assignment_test, channel_state_partitioning_test):
// int64 channel-state buffers, a job's graphs as a restore sees them, and checkpoint metadata holding channel state.
#pragma once

#include <gtest/gtest.h>

#include <xxhash.h>

#include <climits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/channel_state_assignment.h"
#include "sluice/sluice.h"

namespace sluice::cluster::channel_state_test {

using checkpoint::ChannelStateBuffer;
using checkpoint::CheckpointMetadata;
using checkpoint::SubtaskChannelState;

constexpr int32_t kMaxParallelism = 128;

inline checkpoint::StreamStateHandle inline_handle(const std::vector<uint8_t>& bytes) {
  checkpoint::StreamStateHandle h;
  h.inline_bytes = bytes;
  h.size_bytes = bytes.size();
  h.checksum = XXH3_64bits(bytes.data(), bytes.size());
  return h;
}

// A buffer of int64 records, framed as on an edge without timestamps.
inline ChannelStateBuffer buffer_of(const std::vector<int64_t>& records) {
  ChannelStateBuffer b;
  DataOutputView out(&b.bytes);
  for (int64_t r : records) TypeSerializer<int64_t>::serialize(r, out);
  b.num_records = static_cast<int32_t>(records.size());
  return b;
}

// The int64 records of `inputs` on channels [channel_from, channel_to), in order.
inline std::vector<int64_t> records_of(const std::vector<checkpoint::InputChannelState>& inputs,
                                       int32_t channel_from = 0, int32_t channel_to = INT32_MAX) {
  std::vector<int64_t> out;
  for (const auto& in : inputs) {
    if (in.channel < channel_from || in.channel >= channel_to) continue;
    for (const auto& b : in.buffers) {
      DataInputView view(b.bytes.data(), b.bytes.size());
      int32_t n = 0;
      while (!view.at_end()) {
        out.push_back(TypeSerializer<int64_t>::deserialize(view));
        ++n;
      }
      EXPECT_EQ(n, b.num_records);
    }
  }
  return out;
}

// A job as a test restores it: its graphs and the operator id of each vertex's head.
struct Job {
  std::shared_ptr<StreamGraph> sg;
  graph::JobGraph jg;
  std::map<std::string, int32_t> vertex;  // by head name
  std::string id(const std::string& name) const {
    return graph::operator_id(sg->node(jg.vertices[static_cast<size_t>(vertex.at(name))].head_node));
  }
};

inline Job make_job(StreamExecutionEnvironment& env) {
  Job j;
  j.sg = std::make_shared<StreamGraph>(env.stream_graph());
  auto jg = graph::build_job_graph(*j.sg, graph::JobGraphOptions{"t", env.parallelism(), kMaxParallelism});
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  j.jg = std::move(jg).value();
  for (const auto& v : j.jg.vertices) j.vertex[j.sg->node(v.head_node).name] = v.id;
  return j;
}

// Checkpoint 7: `parallelism` of each head by id, and the channel state of (id, subtask).
inline CheckpointMetadata checkpoint_of(const std::vector<std::pair<std::string, int32_t>>& parallelism,
                                        const std::map<std::pair<std::string, int32_t>, SubtaskChannelState>& states) {
  CheckpointMetadata md;
  md.checkpoint_id = CheckpointId(7);
  for (const auto& [id, p] : parallelism) {
    checkpoint::OperatorState op;
    op.operator_id = id;
    op.operator_name = id;
    op.parallelism = p;
    op.max_parallelism = kMaxParallelism;
    for (const auto& [key, state] : states) {
      if (key.first != id) continue;
      checkpoint::OperatorSubtaskState st;
      st.subtask_index = key.second;
      st.channel_state = inline_handle(checkpoint::encode_channel_state(state));
      op.subtasks.push_back(st);
    }
    md.operators.push_back(op);
  }
  return md;
}

}  // namespace sluice::cluster::channel_state_test
