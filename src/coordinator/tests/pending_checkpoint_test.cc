#include <gtest/gtest.h>

#include "coordinator/pending_checkpoint.h"
#include "fakes.h"

namespace sluice::coordinator {
namespace {

using checkpoint::OperatorSubtaskState;
using checkpoint::SnapshotType;
using testing::make_tasks;
using testing::operator_state_of;

std::shared_ptr<const CheckpointPlan> plan_of(std::vector<TaskToAck> tasks) {
  auto plan = CheckpointPlan::create(std::move(tasks));
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  return plan.value();
}

TEST(CheckpointPlan, ValidationTable) {
  struct Case {
    const char* name;
    std::vector<TaskToAck> tasks;
    const char* message_part;  // empty: valid
  };
  const OperatorDescriptor a{"a", "A", 2, 128, ""};
  const Case cases[] = {
      {"valid", {{0, 0, {a}}, {0, 1, {a}}}, ""},
      {"no tasks", {}, "at least one task"},
      {"negative subtask", {{0, -1, {a}}}, "expected vertex and subtask >= 0"},
      {"task twice", {{0, 0, {a}}, {0, 0, {a}}}, "listed twice"},
      {"empty operator id", {{0, 0, {{"", "A", 1, 128, ""}}}}, "empty operator id"},
      {"operator twice in a task", {{0, 0, {a, a}}}, "lists operator 'a' twice"},
      {"parallelism 0", {{0, 0, {{"a", "A", 0, 128, ""}}}}, "expected 1 <= parallelism"},
      {"max parallelism below parallelism", {{0, 0, {{"a", "A", 4, 2, ""}}}}, "expected 1 <= parallelism"},
      {"subtask beyond parallelism", {{0, 2, {a}}}, "expected subtask < parallelism"},
      {"operator in two vertices", {{0, 0, {a}}, {1, 0, {a}}}, "appears in vertex 0 and vertex 1"},
      {"operator described twice", {{0, 0, {a}}, {0, 1, {{"a", "other name", 2, 128, ""}}}}, "described differently"},
      {"task without operators", {{0, 0, {}}}, ""},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto plan = CheckpointPlan::create(tc.tasks);
    if (std::string(tc.message_part).empty()) {
      EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
    } else {
      ASSERT_FALSE(plan.is_ok());
      EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(plan.status().message().find(tc.message_part), std::string::npos) << plan.status().message();
    }
  }
}

TEST(CheckpointPlan, IndexesTasksAndOrdersOperatorsByFirstAppearance) {
  auto plan = plan_of(make_tasks(2, 3));
  EXPECT_EQ(plan->num_tasks(), 6);
  EXPECT_EQ(plan->task_index(0, 0), 0);
  EXPECT_EQ(plan->task_index(1, 2), 5);
  EXPECT_EQ(plan->task_index(2, 0), -1);
  ASSERT_EQ(plan->operators().size(), 3u);
  EXPECT_EQ(plan->operators()[0].operator_id, "op-0");
  EXPECT_EQ(plan->operators()[1].operator_id, "op-1");
  EXPECT_EQ(plan->operators()[2].operator_id, "sink");
}

SubtaskStateMap states(std::initializer_list<std::pair<std::string, uint64_t>> items) {
  SubtaskStateMap m;
  for (const auto& [id, bytes] : items) m[id] = operator_state_of(bytes);
  return m;
}

TEST(PendingCheckpoint, CompleteOnlyWhenEveryTaskAcknowledged) {
  PendingCheckpoint p(CheckpointId(4), SnapshotType::kCheckpoint, 111, 222, plan_of(make_tasks(2, 2)));
  EXPECT_EQ(p.num_tasks(), 4);
  EXPECT_FALSE(p.is_complete());
  const std::pair<int, int> order[] = {{1, 1}, {0, 0}, {1, 0}, {0, 1}};
  int acked = 0;
  for (auto [v, s] : order) {
    EXPECT_FALSE(p.is_acknowledged(JobVertexId(v), SubtaskIndex(s)));
    SubtaskStateMap m = v == 0 ? states({{"op-0", 10}}) : states({{"op-1", 20}, {"sink", 5}});
    EXPECT_EQ(p.acknowledge(JobVertexId(v), SubtaskIndex(s), m), PendingCheckpoint::AckResult::kAccepted);
    EXPECT_TRUE(p.is_acknowledged(JobVertexId(v), SubtaskIndex(s)));
    EXPECT_EQ(p.num_acknowledged(), ++acked);
    EXPECT_EQ(p.is_complete(), acked == 4);
  }
  EXPECT_EQ(p.state_size_bytes(), 10u + 10u + 25u + 25u);
}

TEST(PendingCheckpoint, DuplicateUnknownAndUnexpectedAcknowledgements) {
  PendingCheckpoint p(CheckpointId(1), SnapshotType::kCheckpoint, 0, 0, plan_of(make_tasks(1, 2)));
  SubtaskStateMap m = states({{"op-0", 1}});
  EXPECT_EQ(p.acknowledge(JobVertexId(0), SubtaskIndex(0), m), PendingCheckpoint::AckResult::kAccepted);
  SubtaskStateMap again = states({{"op-0", 1}});
  EXPECT_EQ(p.acknowledge(JobVertexId(0), SubtaskIndex(0), again), PendingCheckpoint::AckResult::kDuplicate);
  EXPECT_EQ(p.acknowledge(JobVertexId(0), SubtaskIndex(7), again), PendingCheckpoint::AckResult::kUnknownTask);
  EXPECT_EQ(p.acknowledge(JobVertexId(3), SubtaskIndex(0), again), PendingCheckpoint::AckResult::kUnknownTask);
  SubtaskStateMap wrong = states({{"op-0", 1}, {"not-mine", 1}});
  std::string error;
  EXPECT_EQ(p.acknowledge(JobVertexId(0), SubtaskIndex(1), wrong, &error), PendingCheckpoint::AckResult::kUnexpectedOperator);
  EXPECT_NE(error.find("operator 'not-mine', which it does not run"), std::string::npos) << error;
  EXPECT_FALSE(p.is_acknowledged(JobVertexId(0), SubtaskIndex(1)));
  EXPECT_EQ(p.num_acknowledged(), 1);
  EXPECT_EQ(p.state_size_bytes(), 1u);
}

TEST(PendingCheckpoint, FinalizeBuildsMetadataGroupedByOperatorWithSortedSubtasks) {
  std::vector<TaskToAck> tasks = make_tasks(2, 3);
  // A third operator, stateless, chained in vertex 0.
  for (TaskToAck& t : tasks) {
    if (t.vertex == 0) t.operators.push_back({"filter", "a filter", 3, 128, ""});
  }
  PendingCheckpoint p(CheckpointId(9), SnapshotType::kSavepoint, 1234, 5, plan_of(tasks));
  // Acknowledge in reverse order; subtask 1 of vertex 1 reports an empty state for the sink.
  for (auto it = tasks.rbegin(); it != tasks.rend(); ++it) {
    SubtaskStateMap m;
    if (it->vertex == 0) {
      m = states({{"op-0", 100u + static_cast<uint64_t>(it->subtask)}});
    } else {
      m = states({{"op-1", 200u + static_cast<uint64_t>(it->subtask)}});
      m["sink"] = it->subtask == 1 ? OperatorSubtaskState{} : operator_state_of(7);
      m["sink"].subtask_index = 99;  // overwritten by the acknowledging subtask's index
    }
    ASSERT_EQ(p.acknowledge(JobVertexId(it->vertex), SubtaskIndex(it->subtask), m), PendingCheckpoint::AckResult::kAccepted);
  }
  ASSERT_TRUE(p.is_complete());
  EXPECT_FALSE(p.is_finalizing());
  const checkpoint::CheckpointMetadata md = p.finalize(JobId(1, 2), {{"k", "v"}});
  EXPECT_TRUE(p.is_finalizing());
  EXPECT_EQ(md.checkpoint_id, CheckpointId(9));
  EXPECT_EQ(md.job_id, JobId(1, 2));
  EXPECT_EQ(md.trigger_timestamp_ms, 1234);
  EXPECT_EQ(md.type, SnapshotType::kSavepoint);
  EXPECT_EQ(md.properties.at("k"), "v");
  ASSERT_EQ(md.operators.size(), 4u);
  EXPECT_EQ(md.operators[0].operator_id, "op-0");
  EXPECT_EQ(md.operators[1].operator_id, "filter");
  EXPECT_EQ(md.operators[2].operator_id, "op-1");
  EXPECT_EQ(md.operators[3].operator_id, "sink");
  EXPECT_EQ(md.operators[1].operator_name, "a filter");
  EXPECT_EQ(md.operators[1].parallelism, 3);
  EXPECT_EQ(md.operators[1].max_parallelism, 128);
  EXPECT_TRUE(md.operators[1].subtasks.empty());  // stateless operators are listed, without subtask states
  for (size_t o : {size_t{0}, size_t{2}}) {
    ASSERT_EQ(md.operators[o].subtasks.size(), 3u);
    for (int32_t s = 0; s < 3; ++s) {
      EXPECT_EQ(md.operators[o].subtasks[static_cast<size_t>(s)].subtask_index, s);
      EXPECT_EQ(md.operators[o].subtasks[static_cast<size_t>(s)].operator_state->size_bytes,
                (o == 0 ? 100u : 200u) + static_cast<uint64_t>(s));
    }
  }
  ASSERT_EQ(md.operators[3].subtasks.size(), 2u);  // subtask 1 had no state
  EXPECT_EQ(md.operators[3].subtasks[0].subtask_index, 0);
  EXPECT_EQ(md.operators[3].subtasks[1].subtask_index, 2);
}

// A stateless chain head of an unaligned checkpoint has channel state only: it must stay in the metadata (dropping
// it lost that head's in-flight records on restore).
TEST(PendingCheckpoint, FinalizeKeepsASubtaskWhoseOnlyStateIsChannelState) {
  PendingCheckpoint p(CheckpointId(3), SnapshotType::kCheckpoint, 0, 0, plan_of(make_tasks(1, 2)));
  for (int32_t s = 0; s < 2; ++s) {
    SubtaskStateMap m;
    m["op-0"] = OperatorSubtaskState{};
    if (s == 1) {
      checkpoint::StreamStateHandle h;
      h.inline_bytes = {1, 2, 3};
      h.size_bytes = 3;
      m["op-0"].channel_state = h;
    }
    ASSERT_EQ(p.acknowledge(JobVertexId(0), SubtaskIndex(s), m), PendingCheckpoint::AckResult::kAccepted);
  }
  const checkpoint::CheckpointMetadata md = p.finalize(JobId(1, 2), {});
  ASSERT_EQ(md.operators[0].operator_id, "op-0");
  ASSERT_EQ(md.operators[0].subtasks.size(), 1u);  // subtask 0 had nothing at all
  EXPECT_EQ(md.operators[0].subtasks[0].subtask_index, 1);
  EXPECT_TRUE(md.operators[0].subtasks[0].channel_state.has_value());
}

TEST(PendingCheckpoint, SavepointsAreNeverSubsumed) {
  auto plan = plan_of(make_tasks(1, 1));
  EXPECT_TRUE(PendingCheckpoint(CheckpointId(1), SnapshotType::kCheckpoint, 0, 0, plan).can_be_subsumed());
  EXPECT_FALSE(PendingCheckpoint(CheckpointId(1), SnapshotType::kSavepoint, 0, 0, plan).can_be_subsumed());
}

TEST(StateHandleBytes, SumsKeyedAndOperatorState) {
  OperatorSubtaskState s = operator_state_of(30);
  EXPECT_EQ(state_handle_bytes(s), 30u);
  checkpoint::KeyGroupsStateHandle keyed;
  keyed.stream.size_bytes = 12;
  s.keyed_state = keyed;
  EXPECT_EQ(state_handle_bytes(s), 42u);
  EXPECT_EQ(state_handle_bytes(OperatorSubtaskState{}), 0u);
}

}  // namespace
}  // namespace sluice::coordinator
