// Restoring an unaligned checkpoint's channel state into a job whose topology differs: refused at submission,
// naming the operator and the index, never a silent drop of in-flight records (state_assignment.h).
#include <gtest/gtest.h>

#include <xxhash.h>

#include "checkpoint/jobmanager_checkpoint_storage.h"
#include "cluster/state_assignment.h"

namespace sluice::cluster {
namespace {

using checkpoint::CheckpointMetadata;
using checkpoint::SubtaskChannelState;

checkpoint::StreamStateHandle inline_handle(const std::vector<uint8_t>& bytes) {
  checkpoint::StreamStateHandle h;
  h.inline_bytes = bytes;
  h.size_bytes = bytes.size();
  h.checksum = XXH3_64bits(bytes.data(), bytes.size());
  return h;
}

// Checkpoint 7 with one operator "head" (parallelism 1) whose subtask 0 holds `state` as channel state.
CheckpointMetadata with_channel_state(const SubtaskChannelState& state, const std::string& op_id = "head") {
  CheckpointMetadata md;
  md.checkpoint_id = CheckpointId(7);
  checkpoint::OperatorState op;
  op.operator_id = op_id;
  op.operator_name = "keyed sum";
  checkpoint::OperatorSubtaskState st;
  st.subtask_index = 0;
  st.channel_state = inline_handle(checkpoint::encode_channel_state(state));
  op.subtasks.push_back(st);
  md.operators.push_back(op);
  return md;
}

SubtaskChannelState one_output(int32_t output, int32_t subpartition) {
  SubtaskChannelState s;
  s.outputs.push_back({output, subpartition, {{1, {1, 2, 3}}}});
  return s;
}

TEST(ChannelStateAssignment, RestoresIntoTheSameTopology) {
  SubtaskChannelState state = one_output(1, 2);
  state.inputs.push_back({3, {{2, {4, 5}}}});
  checkpoint::JobManagerCheckpointStorage storage;
  auto got = assign_channel_state(with_channel_state(state), "jobmanager://x/7", storage, "head", 0,
                                  ChannelTopology{4, {1, 3}});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, state);
}

TEST(ChannelStateAssignment, RefusesAnOutputTheTaskDoesNotHave) {
  checkpoint::JobManagerCheckpointStorage storage;
  auto got = assign_channel_state(with_channel_state(one_output(1, 0)), "jobmanager://x/7", storage, "head", 0,
                                  ChannelTopology{0, {2}});
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  const std::string m = got.status().message();
  EXPECT_NE(m.find("operator 'keyed sum' (head)"), std::string::npos) << m;
  EXPECT_NE(m.find("output 1"), std::string::npos) << m;
  EXPECT_NE(m.find("1 outputs"), std::string::npos) << m;
}

TEST(ChannelStateAssignment, RefusesASubpartitionTheOutputDoesNotHave) {
  checkpoint::JobManagerCheckpointStorage storage;
  auto got = assign_channel_state(with_channel_state(one_output(0, 2)), "jobmanager://x/7", storage, "head", 0,
                                  ChannelTopology{0, {2}});
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("output 0 subpartition 2"), std::string::npos) << got.status().message();
}

TEST(ChannelStateAssignment, RefusesAnInputChannelTheTaskDoesNotHave) {
  SubtaskChannelState state;
  state.inputs.push_back({2, {{1, {9}}}});
  checkpoint::JobManagerCheckpointStorage storage;
  auto got = assign_channel_state(with_channel_state(state), "jobmanager://x/7", storage, "head", 0,
                                  ChannelTopology{2, {}});
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  const std::string m = got.status().message();
  EXPECT_NE(m.find("input channel 2"), std::string::npos) << m;
  EXPECT_NE(m.find("operator 'keyed sum'"), std::string::npos) << m;
}

TEST(ChannelStateAssignment, RefusesChannelStateOfAnOperatorThatIsNoLongerAChainHead) {
  const CheckpointMetadata md = with_channel_state(one_output(0, 0), "chained");
  EXPECT_TRUE(check_channel_state_heads(md, {"src", "chained"}).is_ok());
  Status s = check_channel_state_heads(md, {"src", "head"});
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("operator 'keyed sum' (chained)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not the head of an operator chain"), std::string::npos) << s.message();
}

TEST(ChannelStateAssignment, RescalingRefusalPromisesNoFeature) {
  const CheckpointMetadata md = with_channel_state(one_output(0, 0));
  Status s = check_channel_state_parallelism(md, {{"head", 2}});
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("not supported yet"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("rescale from a savepoint"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sluice::cluster
