// Scenario tests of the CheckpointCoordinator on fakes, without the timer thread: every call runs its actions
// before it returns, so the event log is complete after each call.
#include <gtest/gtest.h>

#include "fakes.h"
#include "coordinator/checkpoint_stats_json.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::coordinator {
namespace {

using checkpoint::SnapshotType;
using testing::config_with;
using testing::Event;
using testing::Harness;
using K = Event::Kind;
using R = CheckpointFailureReason;

std::vector<K> kinds(const std::vector<Event>& events) {
  std::vector<K> out;
  for (const Event& e : events) out.push_back(e.kind);
  return out;
}

CheckpointId trigger(Harness& h, SnapshotType type = SnapshotType::kCheckpoint) {
  Result<CheckpointId> id = h.coordinator->trigger_checkpoint(type);
  EXPECT_TRUE(id.is_ok()) << id.status().to_string();
  return id.is_ok() ? id.value() : CheckpointId(-1);
}

TEST(CheckpointCoordinator, CreateValidates) {
  testing::EventLog log(std::make_shared<ManualClock>());
  auto storage = std::make_shared<testing::FakeCheckpointStorage>(&log);
  testing::RecordingTarget target(&log, storage.get());
  auto setup = [&] {
    CheckpointCoordinatorSetup s;
    s.config = config_with(100);
    s.tasks = testing::make_tasks(1, 1);
    s.storage = storage;
    s.target = &target;
    return s;
  };
  EXPECT_TRUE(CheckpointCoordinator::create(setup()).is_ok());
  CheckpointCoordinatorSetup s = setup();
  s.config.interval = std::chrono::milliseconds(5);
  EXPECT_NE(CheckpointCoordinator::create(std::move(s)).status().message().find("interval"), std::string::npos);
  s = setup();
  s.storage = nullptr;
  EXPECT_NE(CheckpointCoordinator::create(std::move(s)).status().message().find("storage"), std::string::npos);
  s = setup();
  s.target = nullptr;
  EXPECT_NE(CheckpointCoordinator::create(std::move(s)).status().message().find("target"), std::string::npos);
  s = setup();
  s.tasks.clear();
  EXPECT_NE(CheckpointCoordinator::create(std::move(s)).status().message().find("at least one task"),
            std::string::npos);
  s = setup();
  s.restored_checkpoint_id = CheckpointId(-1);
  EXPECT_NE(CheckpointCoordinator::create(std::move(s)).status().message().find("restored"), std::string::npos);
}

// Incremental handles: acknowledgements register their shared files; an abort deletes the files only the aborted
// checkpoint referred to; a completed checkpoint keeps its files until released.
TEST(CheckpointCoordinator, SharedFilesOfAbortedCheckpointsAreDeletedCompletedOnesKept) {
  Harness h(testing::config_with());
  auto incremental = [](std::vector<std::string> files) {
    checkpoint::OperatorSubtaskState s;
    checkpoint::IncrementalKeyedStateHandle ih;
    ih.range = KeyGroupRange(0, 127);
    ih.backend_id = std::string(32, 'a');
    for (size_t i = 0; i < files.size(); ++i) {
      ih.shared_files.push_back({std::to_string(i) + ".sst", checkpoint::StreamStateHandle{files[i], {}, 10, 1}, false});
    }
    s.incremental_keyed_state = ih;
    return s;
  };
  auto ack_with = [&](CheckpointId id, const TaskToAck& t, std::vector<std::string> files) {
    std::map<std::string, checkpoint::OperatorSubtaskState> state;
    state[t.operators.front().operator_id] = incremental(std::move(files));
    return h.coordinator->acknowledge(id, JobVertexId(t.vertex), SubtaskIndex(t.subtask), std::move(state), SubtaskCheckpointStats{});
  };
  const CheckpointId c1 = trigger(h);
  for (const TaskToAck& t : h.tasks) {
    EXPECT_EQ(ack_with(c1, t, {"shared/v" + std::to_string(t.vertex) + "s" + std::to_string(t.subtask)}),
              MessageOutcome::kAccepted);
  }
  ASSERT_EQ(h.coordinator->stats().num_completed, 1);
  auto registry = h.coordinator->shared_state_registry();
  EXPECT_EQ(registry->num_files(), h.tasks.size());
  // Checkpoint 2: one task reuses its file of checkpoint 1 and uploads one more, then another task declines.
  const CheckpointId c2 = trigger(h);
  EXPECT_EQ(ack_with(c2, h.tasks[0], {"shared/v0s0", "shared/new"}), MessageOutcome::kAccepted);
  EXPECT_EQ(h.coordinator->decline(c2, JobVertexId(h.tasks[1].vertex), SubtaskIndex(h.tasks[1].subtask), Status::io_error("disk full")),
            MessageOutcome::kAccepted);
  EXPECT_EQ(h.storage->deleted_shared(), std::vector<std::string>{"shared/new"});
  EXPECT_EQ(registry->reference_count("shared/v0s0"), 1);
  // The owner releases checkpoint 1 (subsumed): all its files go.
  EXPECT_EQ(registry->release(c1).size(), h.tasks.size());
}

TEST(CheckpointCoordinator, IdsStartAtOneAndSavepointsShareTheCounter) {
  CheckpointCoordinatorConfig c = config_with();
  c.max_concurrent = 5;
  Harness h(c);
  EXPECT_EQ(h.coordinator->next_checkpoint_id(), CheckpointId(1));
  EXPECT_EQ(trigger(h), CheckpointId(1));
  EXPECT_EQ(trigger(h, SnapshotType::kSavepoint), CheckpointId(2));
  EXPECT_EQ(trigger(h), CheckpointId(3));
  EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1, 2, 3}));
}

TEST(CheckpointCoordinator, IdsContinueAfterTheRestoredCheckpoint) {
  Harness h(config_with(), 2, 2, CheckpointId(41));
  EXPECT_EQ(trigger(h), CheckpointId(42));
  h.ack_all(CheckpointId(42));
  EXPECT_EQ(trigger(h, SnapshotType::kSavepoint), CheckpointId(43));
}

TEST(CheckpointCoordinator, CompletesOnlyWhenEveryTaskAcknowledgedAndMetadataIsDurable) {
  Harness h(config_with());
  const CheckpointId id = trigger(h);
  for (size_t i = 0; i + 1 < h.tasks.size(); ++i) {
    EXPECT_EQ(h.ack(id, h.tasks[i]), MessageOutcome::kAccepted);
  }
  EXPECT_EQ(h.log.count(K::kWriteOk), 0u);
  EXPECT_EQ(h.coordinator->num_pending(), 1);
  h.clock->advance_ms(25);
  EXPECT_EQ(h.ack(id, h.tasks.back()), MessageOutcome::kAccepted);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kTrigger, K::kWriteOk, K::kOnCompleted, K::kNotifyComplete}));
  EXPECT_EQ(h.target.violations(), 0);
  EXPECT_EQ(h.coordinator->num_pending(), 0);
  EXPECT_EQ(h.log.events()[2].text, "mem://chk-1");

  const checkpoint::CheckpointMetadata md = h.storage->written().at(1);
  EXPECT_EQ(md.checkpoint_id, id);
  EXPECT_EQ(md.job_id, JobId(0xabc, 0xdef));
  EXPECT_EQ(md.type, SnapshotType::kCheckpoint);
  EXPECT_EQ(md.trigger_timestamp_ms, 1'000'000);
  EXPECT_EQ(md.properties.at("test.property"), "yes");
  ASSERT_EQ(md.operators.size(), 3u);  // op-0, op-1, sink
  for (const auto& op : md.operators) EXPECT_EQ(op.subtasks.size(), 2u);

  CheckpointStatsSnapshot s = h.coordinator->stats();
  EXPECT_EQ(s.num_completed, 1);
  ASSERT_TRUE(s.latest_completed);
  EXPECT_EQ(s.latest_completed->end_to_end_duration_ms, 25);
  EXPECT_EQ(s.latest_completed->state_size_bytes, 6u * 100u);  // 6 operator subtasks of 100 bytes
  EXPECT_EQ(s.latest_completed->subtasks.size(), 4u);
  EXPECT_EQ(s.latest_completed->subtasks.back().ack_duration_ms, 25);
  EXPECT_EQ(s.latest_completed->location, "mem://chk-1");
}

TEST(CheckpointCoordinator, RefusesPastMaxConcurrentWithoutCountingAFailure) {
  Harness h(config_with());
  trigger(h);
  Result<CheckpointId> refused = h.coordinator->trigger_checkpoint(SnapshotType::kCheckpoint);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("max-concurrent-checkpoints allows 1"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(h.coordinator->next_checkpoint_id(), CheckpointId(2));  // no id consumed
  EXPECT_EQ(h.log.count(K::kFailJob), 0u);
  EXPECT_EQ(h.coordinator->stats().num_failed, 0);
  // A savepoint is forced.
  EXPECT_EQ(trigger(h, SnapshotType::kSavepoint), CheckpointId(2));
}

TEST(CheckpointCoordinator, MinPauseCountsFromTheLastCompletion) {
  CheckpointCoordinatorConfig c = config_with();
  c.min_pause = std::chrono::milliseconds(100);
  c.max_concurrent = 3;  // ignored: min pause means one at a time
  Harness h(c);
  const CheckpointId first = trigger(h);
  EXPECT_FALSE(h.coordinator->trigger_checkpoint(SnapshotType::kCheckpoint).is_ok());
  h.clock->advance_ms(500);
  h.ack_all(first);
  h.clock->advance_ms(99);
  Result<CheckpointId> refused = h.coordinator->trigger_checkpoint(SnapshotType::kCheckpoint);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("min-pause is 100 ms and the last checkpoint completed 99 ms ago"),
            std::string::npos)
      << refused.status().message();
  h.clock->advance_ms(1);
  EXPECT_EQ(trigger(h), CheckpointId(2));
}

// The periodic scheduler with max-concurrent-checkpoints 2: two checkpoints pending at once, never three; with a
// min pause above 0 as well, one at a time (Flink's docs), the next one a min pause after the
// previous completion even though the interval passed long before.
TEST(CheckpointCoordinator, PeriodicSchedulingHonoursMaxConcurrentAndMinPause) {
  {
    CheckpointCoordinatorConfig c = config_with(10);
    c.max_concurrent = 2;
    Harness h(c);
    h.coordinator->start_periodic_scheduling();
    for (int i = 0; i < 10; ++i) {
      h.clock->advance_ms(10);
      h.coordinator->tick();
      EXPECT_LE(h.coordinator->num_pending(), 2);
    }
    EXPECT_EQ(h.coordinator->num_pending(), 2);
    EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1, 2}));
    h.ack_all(CheckpointId(1));
    h.coordinator->tick();  // the overdue periodic checkpoint goes at once
    EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(h.coordinator->num_pending(), 2);
  }
  {
    CheckpointCoordinatorConfig c = config_with(10);
    c.max_concurrent = 2;
    c.min_pause = std::chrono::milliseconds(50);
    Harness h(c);
    h.coordinator->start_periodic_scheduling();
    for (int i = 0; i < 10; ++i) {
      h.clock->advance_ms(10);
      h.coordinator->tick();
      EXPECT_EQ(h.coordinator->num_pending(), 1) << "tick " << i;
    }
    EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1}));
    h.ack_all(CheckpointId(1));
    h.clock->advance_ms(49);
    h.coordinator->tick();
    EXPECT_EQ(h.coordinator->num_pending(), 0) << "the min pause has not passed";
    h.clock->advance_ms(1);
    h.coordinator->tick();
    EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1, 2}));
    for (int i = 0; i < 10; ++i) {
      h.clock->advance_ms(10);
      h.coordinator->tick();
      EXPECT_EQ(h.coordinator->num_pending(), 1) << "tick " << i;
    }
    EXPECT_EQ(h.coordinator->next_checkpoint_id(), CheckpointId(3));
  }
}

TEST(CheckpointCoordinator, SavepointCompletesWithoutNotifyingTasksAndIsNotSubsumed) {
  CheckpointCoordinatorConfig c = config_with();
  c.max_concurrent = 3;
  Harness h(c);
  const CheckpointId sp = trigger(h, SnapshotType::kSavepoint);
  const CheckpointId cp = trigger(h);
  h.ack_all(cp);  // checkpoint 2 completes; savepoint 1 stays pending
  EXPECT_EQ(h.coordinator->num_pending(), 1);
  EXPECT_EQ(h.log.count(K::kNotifyAborted), 0u);
  h.ack_all(sp);
  EXPECT_EQ(h.storage->written().at(1).type, SnapshotType::kSavepoint);
  EXPECT_EQ(h.log.ids(K::kOnCompleted), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(h.log.ids(K::kNotifyComplete), (std::vector<int64_t>{2}));  // not for the savepoint
}

TEST(CheckpointCoordinator, SavepointIntoAFolderIsRoutedBeforeItsTriggerAndAFailedRouteAbortsIt) {
  Harness h(config_with());
  auto sp = h.coordinator->trigger_savepoint("/sp/savepoint-1");
  ASSERT_TRUE(sp.is_ok()) << sp.status().to_string();
  std::vector<Event> events = h.log.events();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0].kind, K::kBeginSavepoint);
  EXPECT_EQ(events[0].text, "/sp/savepoint-1");
  EXPECT_EQ(events[1].kind, K::kTrigger);
  EXPECT_EQ(events[1].text, "savepoint");  // the barrier type reaches the target
  h.ack_all(*sp);
  EXPECT_EQ(h.log.ids(K::kOnCompleted), (std::vector<int64_t>{sp->value()}));
  EXPECT_TRUE(h.log.ids(K::kNotifyComplete).empty());

  h.storage->fail_savepoints();
  auto failed = h.coordinator->trigger_savepoint("/readonly/savepoint-2");
  ASSERT_TRUE(failed.is_ok());  // triggered; the route fails in the trigger action
  EXPECT_EQ(h.log.ids(K::kOnAborted), (std::vector<int64_t>{failed->value()}));
  EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{sp->value()})) << "a savepoint without a folder never starts";
  EXPECT_EQ(h.log.count(K::kFailJob), 0u) << "a savepoint's storage failure is not counted";
  EXPECT_EQ(h.coordinator->num_pending(), 0);
}

TEST(CheckpointCoordinator, DeclineAbortsCountsAndFailsTheJobPastTolerable) {
  Harness h(config_with());  // tolerable 0
  const CheckpointId id = trigger(h);
  h.ack(id, h.tasks[0]);
  EXPECT_EQ(h.coordinator->decline(id, JobVertexId(1), SubtaskIndex(1), Status::io_error("disk gone")), MessageOutcome::kAccepted);
  EXPECT_EQ(kinds(h.log.events()),
            (std::vector<K>{K::kTrigger, K::kDiscard, K::kNotifyAborted, K::kOnAborted, K::kFailJob}));
  const std::vector<Event> events = h.log.events();
  EXPECT_EQ(events[3].reason, R::kDeclined);
  EXPECT_NE(events[4].text.find("checkpoint 1 (declined)"), std::string::npos) << events[4].text;
  EXPECT_NE(events[4].text.find("disk gone"), std::string::npos) << events[4].text;
  EXPECT_NE(events[4].text.find("tolerable-failed-checkpoints (0)"), std::string::npos) << events[4].text;
  // Later messages for it are ignored.
  EXPECT_EQ(h.coordinator->decline(id, JobVertexId(0), SubtaskIndex(0), Status::io_error("again")), MessageOutcome::kCheckpointEnded);
  CheckpointStatsSnapshot s = h.coordinator->stats();
  EXPECT_EQ(s.num_failed, 1);
  ASSERT_TRUE(s.latest_failed);
  EXPECT_EQ(*s.latest_failed->failure_reason, R::kDeclined);
  EXPECT_NE(s.latest_failed->failure_message.find("declined by task (vertex 1, subtask index 1)"), std::string::npos);
}

TEST(CheckpointCoordinator, TolerableFailuresAndResetOnSuccess) {
  CheckpointCoordinatorConfig c = config_with();
  c.tolerable_failures = 2;
  Harness h(c);
  auto fail_one = [&] {
    const CheckpointId id = trigger(h);
    EXPECT_EQ(h.coordinator->decline(id, JobVertexId(0), SubtaskIndex(0), Status::internal("boom"), R::kAsyncFailure), MessageOutcome::kAccepted);
  };
  fail_one();
  fail_one();
  EXPECT_EQ(h.log.count(K::kFailJob), 0u);
  EXPECT_EQ(h.coordinator->stats().consecutive_failures, 2);
  h.ack_all(trigger(h));  // success resets
  EXPECT_EQ(h.coordinator->stats().consecutive_failures, 0);
  fail_one();
  fail_one();
  EXPECT_EQ(h.log.count(K::kFailJob), 0u);
  fail_one();  // the third consecutive: past 2 tolerable
  EXPECT_EQ(h.log.count(K::kFailJob), 1u);
  fail_one();  // counting restarted
  EXPECT_EQ(h.log.count(K::kFailJob), 1u);
}

TEST(CheckpointCoordinator, NotCountedAbortsNeverFailTheJob) {
  Harness h(config_with());  // tolerable 0
  CheckpointId id = trigger(h);
  EXPECT_EQ(h.coordinator->decline(id, JobVertexId(0), SubtaskIndex(0), Status::failed_precondition("not running"), R::kTaskNotReady),
            MessageOutcome::kAccepted);
  trigger(h);
  h.coordinator->abort_pending(R::kJobFailover, Status::cancelled("task failed"));
  EXPECT_EQ(h.log.count(K::kNotifyAborted), 2u);
  EXPECT_EQ(h.log.count(K::kFailJob), 0u);
  EXPECT_EQ(h.coordinator->stats().num_failed, 2);
}

TEST(CheckpointCoordinator, TimeoutAbortsOnTick) {
  CheckpointCoordinatorConfig c = config_with();
  c.timeout = std::chrono::milliseconds(200);
  c.tolerable_failures = 1;
  Harness h(c);
  const CheckpointId id = trigger(h);
  h.ack(id, h.tasks[0]);
  h.clock->advance_ms(199);
  h.coordinator->tick();
  EXPECT_EQ(h.coordinator->num_pending(), 1);
  h.clock->advance_ms(1);
  h.coordinator->tick();
  EXPECT_EQ(h.coordinator->num_pending(), 0);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kTrigger, K::kDiscard, K::kNotifyAborted, K::kOnAborted}));
  EXPECT_EQ(h.log.events()[3].reason, R::kTimeout);
  CheckpointStatsSnapshot s = h.coordinator->stats();
  EXPECT_NE(s.latest_failed->failure_message.find("expired after 200 ms"), std::string::npos)
      << s.latest_failed->failure_message;
  EXPECT_NE(s.latest_failed->failure_message.find("1 of 4 tasks acknowledged"), std::string::npos);
  EXPECT_EQ(s.consecutive_failures, 1);
  // A late acknowledgement of the expired checkpoint is ignored and discards what it wrote.
  h.log.clear();
  EXPECT_EQ(h.ack(id, h.tasks[1]), MessageOutcome::kCheckpointEnded);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kDiscard}));
}

// A task whose snapshot started after the abort may write files and then fail: its late decline discards the
// checkpoint again, as a late acknowledgement does. A late message about a completed checkpoint discards nothing.
TEST(CheckpointCoordinator, LateDeclineOfAnAbortedCheckpointDiscardsItAgain) {
  CheckpointCoordinatorConfig c = config_with();
  c.tolerable_failures = 5;
  Harness h(c);
  const CheckpointId aborted = trigger(h);
  EXPECT_EQ(h.coordinator->decline(aborted, JobVertexId(0), SubtaskIndex(0), Status::io_error("disk full")), MessageOutcome::kAccepted);
  h.log.clear();
  EXPECT_EQ(h.coordinator->decline(aborted, JobVertexId(1), SubtaskIndex(0), Status::io_error("disk full")), MessageOutcome::kCheckpointEnded);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kDiscard}));
  EXPECT_EQ(h.log.events()[0].id, aborted.value());
  EXPECT_EQ(h.coordinator->stats().consecutive_failures, 1) << "counted once";

  const CheckpointId completed = trigger(h);
  h.ack_all(completed);
  h.log.clear();
  EXPECT_EQ(h.coordinator->decline(completed, JobVertexId(1), SubtaskIndex(1), Status::io_error("late")), MessageOutcome::kCheckpointEnded);
  EXPECT_EQ(h.ack(completed, h.tasks[0]), MessageOutcome::kCheckpointEnded);
  EXPECT_TRUE(h.log.events().empty());
  EXPECT_TRUE(h.storage->is_durable(completed));
}

TEST(CheckpointCoordinator, StorageFailureAbortsAndCounts) {
  Harness h(config_with());
  h.storage->fail_next_writes(1);
  const CheckpointId id = trigger(h);
  h.ack_all(id);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kTrigger, K::kWriteFailed, K::kDiscard, K::kNotifyAborted,
                                                   K::kOnAborted, K::kFailJob}));
  EXPECT_EQ(h.log.events()[4].reason, R::kStorageFailure);
  EXPECT_NE(h.log.events()[5].text.find("disk full"), std::string::npos) << h.log.events()[5].text;
  EXPECT_EQ(h.log.count(K::kNotifyComplete), 0u);
  // The next one completes.
  h.log.clear();
  h.ack_all(trigger(h));
  EXPECT_EQ(h.log.ids(K::kNotifyComplete), (std::vector<int64_t>{2}));
}

TEST(CheckpointCoordinator, NewerCompletionSubsumesOlderPendingCheckpoints) {
  CheckpointCoordinatorConfig c = config_with();
  c.max_concurrent = 3;
  Harness h(c);  // tolerable 0: a counted subsumption would fail the job
  const CheckpointId one = trigger(h);
  const CheckpointId two = trigger(h);
  const CheckpointId three = trigger(h);
  h.ack(one, h.tasks[0]);
  h.ack_all(two);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kTrigger, K::kTrigger, K::kTrigger, K::kWriteOk,
                                                   K::kOnCompleted, K::kNotifyComplete, K::kDiscard,
                                                   K::kNotifyAborted, K::kOnAborted}));
  EXPECT_EQ(h.log.ids(K::kNotifyAborted), (std::vector<int64_t>{1}));
  EXPECT_EQ(h.log.events().back().reason, R::kSubsumed);
  EXPECT_EQ(h.coordinator->num_pending(), 1);  // three is newer
  EXPECT_EQ(h.ack(one, h.tasks[1]), MessageOutcome::kCheckpointEnded);
  h.ack_all(three);
  EXPECT_EQ(h.log.ids(K::kNotifyComplete), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h.log.count(K::kFailJob), 0u);
}

TEST(CheckpointCoordinator, IgnoredMessages) {
  Harness h(config_with());
  const CheckpointId id = trigger(h);
  EXPECT_EQ(h.ack(CheckpointId(5), h.tasks[0]), MessageOutcome::kUnknownCheckpoint);
  EXPECT_EQ(h.coordinator->decline(CheckpointId(5), JobVertexId(0), SubtaskIndex(0), Status::internal("x")), MessageOutcome::kUnknownCheckpoint);
  EXPECT_EQ(h.ack(id, h.tasks[0]), MessageOutcome::kAccepted);
  EXPECT_EQ(h.ack(id, h.tasks[0]), MessageOutcome::kDuplicate);
  TaskToAck stranger{7, 0, {}};
  EXPECT_EQ(h.ack(id, stranger), MessageOutcome::kUnknownTask);
  EXPECT_EQ(h.coordinator->decline(id, JobVertexId(7), SubtaskIndex(0), Status::internal("x")), MessageOutcome::kUnknownTask);
  EXPECT_EQ(h.coordinator->num_pending(), 1);
  for (size_t i = 1; i < h.tasks.size(); ++i) h.ack(id, h.tasks[i]);
  h.log.clear();
  EXPECT_EQ(h.ack(id, h.tasks[0]), MessageOutcome::kCheckpointEnded);  // completed: no discard
  EXPECT_TRUE(h.log.events().empty());
  EXPECT_EQ(h.coordinator->stats().num_completed, 1);
}

TEST(CheckpointCoordinator, StateForAnOperatorTheTaskDoesNotRunIsRejected) {
  CheckpointCoordinatorConfig c = config_with();
  c.tolerable_failures = 5;
  Harness h(c);
  const CheckpointId id = trigger(h);
  std::map<std::string, checkpoint::OperatorSubtaskState> state;
  state["sink"] = testing::operator_state_of(1);  // vertex 0 runs op-0 only
  EXPECT_EQ(h.coordinator->acknowledge(id, JobVertexId(0), SubtaskIndex(0), state, {}), MessageOutcome::kRejected);
  EXPECT_EQ(h.log.ids(K::kNotifyAborted), (std::vector<int64_t>{1}));
  EXPECT_NE(h.coordinator->stats().latest_failed->failure_message.find("operator 'sink'"), std::string::npos);
}

TEST(CheckpointCoordinator, PeriodicScheduling) {
  CheckpointCoordinatorConfig c = config_with(100);
  Harness h(c);
  h.coordinator->tick();
  EXPECT_EQ(h.log.count(K::kTrigger), 0u);  // not started
  h.coordinator->start_periodic_scheduling();
  h.clock->advance_ms(99);
  h.coordinator->tick();
  EXPECT_EQ(h.log.count(K::kTrigger), 0u);
  h.clock->advance_ms(1);
  h.coordinator->tick();
  EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1}));
  h.clock->advance_ms(150);  // due again at +100, but one is pending
  h.coordinator->tick();
  EXPECT_EQ(h.log.count(K::kTrigger), 1u);
  h.ack_all(CheckpointId(1));
  h.coordinator->tick();  // due and free: triggers now
  EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1, 2}));
  const int64_t second_at = h.log.events().back().time_ms;
  h.ack_all(CheckpointId(2));
  h.clock->advance_ms(99);
  h.coordinator->tick();
  EXPECT_EQ(h.log.count(K::kTrigger), 2u);  // the next is due an interval after the previous trigger
  h.clock->advance_ms(1);
  h.coordinator->tick();
  EXPECT_EQ(h.log.count(K::kTrigger), 3u);
  EXPECT_EQ(h.log.events().back().time_ms - second_at, 100);
  h.coordinator->stop_periodic_scheduling();
  h.ack_all(CheckpointId(3));
  h.clock->advance_ms(1000);
  h.coordinator->tick();
  EXPECT_EQ(h.log.count(K::kTrigger), 3u);
}

TEST(CheckpointCoordinator, ShutdownAbortsPendingAndRefusesTriggers) {
  CheckpointCoordinatorConfig c = config_with();
  c.max_concurrent = 2;
  Harness h(c);
  trigger(h);
  trigger(h, SnapshotType::kSavepoint);
  h.coordinator->shutdown(Status::cancelled("job cancelled"));
  EXPECT_EQ(h.log.ids(K::kNotifyAborted), (std::vector<int64_t>{1, 2}));
  for (const Event& e : h.log.events()) {
    if (e.kind == K::kOnAborted) {
      EXPECT_EQ(e.reason, R::kCoordinatorShutdown);
    }
  }
  EXPECT_EQ(h.log.count(K::kFailJob), 0u);
  Result<CheckpointId> refused = h.coordinator->trigger_checkpoint(SnapshotType::kSavepoint);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("shut down"), std::string::npos);
}

// A checkpoint pending when the job finished normally is aborted (its files discarded, tasks notified) but is not
// a failed checkpoint of the job; the same shutdown for a cancelled or failed job counts it.
TEST(CheckpointCoordinator, ShutdownAfterJobFinishedDoesNotCountPendingAsFailed) {
  {
    Harness h(config_with());
    trigger(h);
    h.coordinator->shutdown(Status::cancelled("job ended"), /*job_finished=*/true);
    EXPECT_EQ(h.log.ids(K::kNotifyAborted), (std::vector<int64_t>{1}));
    CheckpointStatsSnapshot s = h.coordinator->stats();
    EXPECT_EQ(s.num_failed, 0);
    EXPECT_EQ(s.num_in_progress, 0);
    EXPECT_EQ(s.consecutive_failures, 0);
    EXPECT_FALSE(s.latest_failed);
    ASSERT_EQ(s.history.size(), 1u);  // still in the history: ids stay without gaps
    EXPECT_EQ(s.history[0].id, CheckpointId(1));
    EXPECT_EQ(s.history[0].status, CheckpointStatus::kAbandoned);  // not "failed": num_failed agrees
    EXPECT_EQ(s.history[0].failure_reason, R::kCoordinatorShutdown);
    // The JSON written to _checkpoint_stats.json says so and reads back.
    const nlohmann::json j = to_json(s.history[0]);
    EXPECT_EQ(j.at("status"), "abandoned");
    auto back = checkpoint_stats_entry_from_json(j);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->status, CheckpointStatus::kAbandoned);
  }
  {
    Harness h(config_with());
    trigger(h);
    h.coordinator->shutdown(Status::cancelled("job cancelled"));
    EXPECT_EQ(h.coordinator->stats().num_failed, 1);
    EXPECT_EQ(h.coordinator->stats().history.at(0).status, CheckpointStatus::kFailed);
  }
}

// A target that acknowledges from inside trigger_checkpoint (re-entrance): the checkpoint completes in the same
// call, after the trigger, with notifications in order.
TEST(CheckpointCoordinator, TargetMayCallBackIntoTheCoordinator) {
  Harness h(config_with());
  h.target.set_on_trigger([&](CheckpointId id) { h.ack_all(id); });
  trigger(h);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kTrigger, K::kWriteOk, K::kOnCompleted, K::kNotifyComplete}));
  EXPECT_EQ(h.target.violations(), 0);
}

// While the metadata is written (outside the mutex), a decline and an expired timeout no longer abort it.
TEST(CheckpointCoordinator, FinalizingCheckpointIgnoresDeclinesAndTimeouts) {
  CheckpointCoordinatorConfig c = config_with();
  c.timeout = std::chrono::milliseconds(50);
  Harness h(c);
  MessageOutcome outcome = MessageOutcome::kAccepted;
  h.storage->set_write_hook([&](const checkpoint::CheckpointMetadata& md) {
    outcome = h.coordinator->decline(md.checkpoint_id, JobVertexId(0), SubtaskIndex(0), Status::internal("late decline"));
    h.clock->advance_ms(1000);
    h.coordinator->tick();
  });
  const CheckpointId id = trigger(h);
  h.ack_all(id);
  EXPECT_EQ(outcome, MessageOutcome::kCheckpointFinalizing);
  EXPECT_EQ(h.log.ids(K::kNotifyComplete), (std::vector<int64_t>{1}));
  EXPECT_EQ(h.log.count(K::kNotifyAborted), 0u);
}

// A job failover while the metadata is written: the checkpoint ends aborted and its files are discarded after
// the write.
TEST(CheckpointCoordinator, AbortDuringMetadataWriteWins) {
  Harness h(config_with());
  h.storage->set_write_hook([&](const checkpoint::CheckpointMetadata&) {
    h.coordinator->abort_pending(R::kJobFailover, Status::cancelled("task failed"));
  });
  h.ack_all(trigger(h));
  EXPECT_EQ(kinds(h.log.events()),
            (std::vector<K>{K::kTrigger, K::kWriteOk, K::kDiscard, K::kNotifyAborted, K::kOnAborted}));
  EXPECT_FALSE(h.storage->is_durable(CheckpointId(1)));
  EXPECT_EQ(h.coordinator->stats().num_completed, 0);
}

// Two checkpoints fully acknowledged before either finalizes complete in id order; one that becomes fully
// acknowledged after a newer one completed is subsumed.
TEST(CheckpointCoordinator, CompletionsFollowIdOrder) {
  CheckpointCoordinatorConfig c = config_with();
  c.max_concurrent = 3;
  Harness h(c);
  const CheckpointId one = trigger(h);
  const CheckpointId two = trigger(h);
  // While 2's metadata is written, 1 becomes fully acknowledged: it must not complete after 2.
  h.storage->set_write_hook([&](const checkpoint::CheckpointMetadata& md) {
    if (md.checkpoint_id == two) h.ack_all(one);
  });
  for (size_t i = 1; i < h.tasks.size(); ++i) h.ack(one, h.tasks[i]);
  h.ack_all(two);
  EXPECT_EQ(h.log.ids(K::kNotifyComplete), (std::vector<int64_t>{2}));
  EXPECT_EQ(h.log.ids(K::kNotifyAborted), (std::vector<int64_t>{1}));
  EXPECT_EQ(h.log.ids(K::kWriteOk), (std::vector<int64_t>{2}));
}

// A completion's follow-ups (on_completed, notify, subsumed aborts) and a failed write's abort and fail_job run
// right after the write, before actions queued meanwhile (here: the trigger of a savepoint).
TEST(CheckpointCoordinator, FollowUpsRunBeforeActionsQueuedMeanwhile) {
  CheckpointCoordinatorConfig c = config_with();
  c.max_concurrent = 3;
  Harness h(c);
  const CheckpointId one = trigger(h);
  const CheckpointId two = trigger(h);
  h.storage->set_write_hook([&](const checkpoint::CheckpointMetadata& md) {
    if (md.checkpoint_id.value() <= 3) (void)h.coordinator->trigger_checkpoint(SnapshotType::kSavepoint);
  });
  h.ack(one, h.tasks[0]);
  h.ack_all(two);
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kTrigger, K::kTrigger, K::kWriteOk, K::kOnCompleted,
                                                   K::kNotifyComplete, K::kDiscard, K::kNotifyAborted,
                                                   K::kOnAborted, K::kTrigger}));
  EXPECT_EQ(h.log.ids(K::kTrigger), (std::vector<int64_t>{1, 2, 3}));
  h.log.clear();
  h.storage->fail_next_writes(1);
  h.ack_all(CheckpointId(3));  // savepoint 3's write fails: aborted (not counted), then savepoint 4 triggers
  h.storage->fail_next_writes(1);
  h.ack_all(CheckpointId(4));
  EXPECT_EQ(kinds(h.log.events()),
            (std::vector<K>{K::kWriteFailed, K::kDiscard, K::kNotifyAborted, K::kOnAborted, K::kTrigger,
                            K::kWriteFailed, K::kDiscard, K::kNotifyAborted, K::kOnAborted}));
  // A checkpoint whose write fails fails the job (tolerable 0) right after its abort, before the next trigger.
  h.log.clear();
  h.storage->set_write_hook([&](const checkpoint::CheckpointMetadata&) {
    (void)h.coordinator->trigger_checkpoint(SnapshotType::kSavepoint);
  });
  h.storage->fail_next_writes(1);
  h.ack_all(trigger(h));
  EXPECT_EQ(kinds(h.log.events()), (std::vector<K>{K::kTrigger, K::kWriteFailed, K::kDiscard, K::kNotifyAborted,
                                                   K::kOnAborted, K::kFailJob, K::kTrigger}));
}

TEST(CheckpointCoordinator, Gauges) {
  MetricRegistry registry;
  MetricGroup& job = registry.add_job_group("job");
  {
    Harness h(config_with(), 2, 2, CheckpointId(0), &job);
    h.clock->advance_ms(0);
    const CheckpointId id = trigger(h);
    EXPECT_EQ(registry.find("job", "numberOfInProgressCheckpoints").value_or(-1), 1.0);
    h.clock->advance_ms(30);
    h.ack_all(id);
    trigger(h);
    h.coordinator->abort_pending(R::kJobFailover, Status::cancelled("x"));
    EXPECT_EQ(registry.find("job", "numberOfCompletedCheckpoints").value_or(-1), 1.0);
    EXPECT_EQ(registry.find("job", "numberOfFailedCheckpoints").value_or(-1), 1.0);
    EXPECT_EQ(registry.find("job", "totalNumberOfCheckpoints").value_or(-1), 2.0);
    EXPECT_EQ(registry.find("job", "numberOfInProgressCheckpoints").value_or(-1), 0.0);
    EXPECT_EQ(registry.find("job", "lastCheckpointDuration").value_or(-1), 30.0);
    EXPECT_EQ(registry.find("job", "lastCheckpointSize").value_or(-1), 600.0);  // not incremental: all of it
    EXPECT_EQ(registry.find("job", "lastCheckpointFullSize").value_or(-1), 600.0);
    EXPECT_EQ(registry.find("job", "lastCompletedCheckpointId").value_or(-1), 1.0);
  }
  EXPECT_FALSE(registry.find("job", "numberOfCompletedCheckpoints").has_value());  // removed with the coordinator
}

}  // namespace
}  // namespace sluice::coordinator
