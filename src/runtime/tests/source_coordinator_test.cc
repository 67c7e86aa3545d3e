// The source coordinator's event valve (sluice/operators/source_operator.h): a split assignment is in the
// enumerator's snapshot of a checkpoint or in the reader's, never in neither - also when the checkpoint is
// triggered while the reader's task is still opening (the reader asked for a split, but has not registered); and
// what the enumerator assigns at a registration comes back with it.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/operators/source_operator.h"
#include "sluice/source/generator_source.h"

namespace sluice {
namespace {

struct RecordingSink final : OperatorEventSink {
  std::vector<OperatorEvent> events;
  void send(OperatorEvent event) override { events.push_back(std::move(event)); }
};

auto hundred_numbers() {
  auto identity = [](int64_t i) { return i; };
  return std::make_shared<const GeneratorSource<int64_t, decltype(identity)>>(100, identity);
}

std::vector<IndexRangeSplit> splits_of(const std::vector<uint8_t>& bytes) {
  auto splits = deserialize_bytes<std::vector<IndexRangeSplit>>(bytes.data(), bytes.size(), "splits");
  EXPECT_TRUE(splits.is_ok()) << splits.status().to_string();
  return splits.is_ok() ? *splits : std::vector<IndexRangeSplit>{};
}

const std::vector<IndexRangeSplit> kTheSplit = {IndexRangeSplit{0, 100, 0}};

// The indices of the Nexmark splits `events` assign, in order; the enumerator's no-more-splits events are skipped.
std::vector<int32_t> nexmark_split_indices(const std::vector<OperatorEvent>& events) {
  std::vector<int32_t> indices;
  for (const OperatorEvent& e : events) {
    if (e.kind == OperatorEvent::Kind::kNoMoreSplits) continue;  // the Nexmark enumerator says so at once
    EXPECT_EQ(e.kind, OperatorEvent::Kind::kAddSplits);
    auto splits = deserialize_bytes<std::vector<nexmark::NexmarkSplit>>(e.payload.data(), e.payload.size(), "splits");
    EXPECT_TRUE(splits.is_ok()) << splits.status().to_string();
    if (splits.is_ok())
      for (const auto& split : *splits) indices.push_back(split.index);
  }
  return indices;
}

// The reader's task asks for a split while it opens; a checkpoint is triggered before the task registered its
// reader. The split is no longer in the enumerator's snapshot, so the reader must have it before the trigger
// (which is in its task's mailbox already) runs: registration hands it over instead of mailing it.
TEST(SourceCoordinator, AnAssignmentMadeBeforeTheReaderRegisteredIsHandedOverAtRegistration) {
  SourceCoordinator<int64_t, IndexRangeSplit> coordinator(hundred_numbers());
  coordinator.start(1, nullptr);
  coordinator.handle_split_request(0);
  EXPECT_TRUE(splits_of(coordinator.snapshot_enumerator(CheckpointId(1))).empty()) << "assigned before the snapshot";
  RecordingSink sink;
  const std::vector<OperatorEvent> earlier = coordinator.register_reader(0, &sink);
  ASSERT_EQ(earlier.size(), 1u);
  EXPECT_EQ(earlier[0].kind, OperatorEvent::Kind::kAddSplits);
  EXPECT_EQ(splits_of(earlier[0].payload), kTheSplit);
  EXPECT_TRUE(sink.events.empty()) << "mailed, it would run after the checkpoint's trigger";

  coordinator.reader_snapshot_done(0, CheckpointId(1));
  coordinator.handle_split_request(0);
  ASSERT_EQ(sink.events.size(), 1u) << "once registered, events go to the reader's mailbox";
  EXPECT_EQ(sink.events[0].kind, OperatorEvent::Kind::kNoMoreSplits);
  coordinator.close();
}

// The other order: the checkpoint's enumerator snapshot comes first, so the split is in it; the assignment made
// after it is held until the reader took its own snapshot of that checkpoint.
TEST(SourceCoordinator, AnAssignmentAfterTheEnumeratorSnapshotWaitsForTheReadersSnapshot) {
  SourceCoordinator<int64_t, IndexRangeSplit> coordinator(hundred_numbers());
  coordinator.start(1, nullptr);
  EXPECT_EQ(splits_of(coordinator.snapshot_enumerator(CheckpointId(1))), kTheSplit) << "not assigned yet";
  coordinator.handle_split_request(0);
  RecordingSink sink;
  EXPECT_TRUE(coordinator.register_reader(0, &sink).empty());
  EXPECT_TRUE(sink.events.empty()) << "held behind the valve of checkpoint 1";
  coordinator.reader_snapshot_done(0, CheckpointId(1));
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(splits_of(sink.events[0].payload), kTheSplit);
  coordinator.close();
}

// An enumerator that assigns when a reader registers (the Nexmark source: all of a reader's splits at once): the
// whole initial assignment comes back with the registration, none of it through the sink. In a TaskManager the
// sink is one network call per event; a reader that polled its first split while the rest were on their way
// emitted records whose watermark made the later splits' records late (a wrong windowed result).
TEST(SourceCoordinator, TheSplitsAssignedAtRegistrationComeBackWithIt) {
  nexmark::NexmarkSourceOptions options;
  options.num_splits = 8;
  SourceCoordinator<nexmark::Event, nexmark::NexmarkSplit> coordinator(
      std::make_shared<const nexmark::NexmarkSource>(options));
  coordinator.start(2, nullptr);
  RecordingSink sink;
  EXPECT_EQ(nexmark_split_indices(coordinator.register_reader(1, &sink)), (std::vector<int32_t>{1, 3, 5, 7}));
  EXPECT_TRUE(sink.events.empty()) << sink.events.size() << " events went through the sink";
  coordinator.close();
}

// Region failover restarts one reader from the latest completed checkpoint: what was assigned to it after that
// checkpoint's enumerator snapshot is in neither snapshot, so it goes back to the enumerator, which hands it out
// again; what the checkpoint covers stays with the reader's restored state.
TEST(SourceCoordinator, AResetReaderGetsBackWhatWasAssignedAfterTheRestoredCheckpoint) {
  auto identity = [](int64_t i) { return i; };
  auto source = std::make_shared<const GeneratorSource<int64_t, decltype(identity)>>(300, identity);
  SourceCoordinator<int64_t, IndexRangeSplit> coordinator(source);
  coordinator.start(3, nullptr);  // three splits: 0-100, 100-200, 200-300
  RecordingSink old_reader;
  EXPECT_TRUE(coordinator.register_reader(0, &old_reader).empty());
  coordinator.handle_split_request(0);  // 0-100, before checkpoint 1
  EXPECT_EQ(splits_of(coordinator.snapshot_enumerator(CheckpointId(1))).size(), 2u);
  coordinator.reader_snapshot_done(0, CheckpointId(1));
  coordinator.handle_split_request(0);  // 100-200, after it
  coordinator.snapshot_enumerator(CheckpointId(2));
  coordinator.handle_split_request(0);  // 200-300, held behind the valve of checkpoint 2
  ASSERT_EQ(old_reader.events.size(), 2u);

  coordinator.reset_subtask(0, CheckpointId(1));
  EXPECT_EQ(splits_of(coordinator.snapshot_enumerator(CheckpointId(3))),
            (std::vector<IndexRangeSplit>{{100, 200, 100}, {200, 300, 200}}))
      << "the two splits assigned after checkpoint 1 are the enumerator's again; 0-100 is in checkpoint 1";
  coordinator.abort_checkpoint(CheckpointId(3));

  RecordingSink new_reader;
  EXPECT_TRUE(coordinator.register_reader(0, &new_reader).empty()) << "nothing queued for the old reader survives";
  coordinator.handle_split_request(0);
  coordinator.handle_split_request(0);
  coordinator.handle_split_request(0);
  ASSERT_EQ(new_reader.events.size(), 3u);
  EXPECT_EQ(splits_of(new_reader.events[0].payload), (std::vector<IndexRangeSplit>{{100, 200, 100}}));
  EXPECT_EQ(splits_of(new_reader.events[1].payload), (std::vector<IndexRangeSplit>{{200, 300, 200}}));
  EXPECT_EQ(new_reader.events[2].kind, OperatorEvent::Kind::kNoMoreSplits);
  EXPECT_EQ(old_reader.events.size(), 2u) << "the old reader's sink is not used after the reset";
  coordinator.close();
}

// A completed checkpoint covers what was assigned before it; a reset from no checkpoint gives back everything the
// reader was ever assigned; other readers' assignments are not touched.
TEST(SourceCoordinator, AResetFromACompletedCheckpointOrFromNoneGivesBackOnlyWhatItDoesNotCover) {
  auto identity = [](int64_t i) { return i; };
  auto source = std::make_shared<const GeneratorSource<int64_t, decltype(identity)>>(300, identity);
  {
    SourceCoordinator<int64_t, IndexRangeSplit> coordinator(source);
    coordinator.start(3, nullptr);
    RecordingSink r0, r1;
    (void)coordinator.register_reader(0, &r0);
    (void)coordinator.register_reader(1, &r1);
    coordinator.handle_split_request(0);  // 0-100
    coordinator.handle_split_request(1);  // 100-200
    coordinator.snapshot_enumerator(CheckpointId(1));
    coordinator.reader_snapshot_done(0, CheckpointId(1));
    coordinator.reader_snapshot_done(1, CheckpointId(1));
    coordinator.checkpoint_complete(CheckpointId(1));
    coordinator.reset_subtask(0, CheckpointId(1));
    EXPECT_EQ(splits_of(coordinator.snapshot_enumerator(CheckpointId(2))),
              (std::vector<IndexRangeSplit>{{200, 300, 200}}))
        << "checkpoint 1 holds 0-100 in reader 0's state";
    coordinator.close();
  }
  {
    SourceCoordinator<int64_t, IndexRangeSplit> coordinator(source);
    coordinator.start(3, nullptr);
    RecordingSink r0, r1;
    (void)coordinator.register_reader(0, &r0);
    (void)coordinator.register_reader(1, &r1);
    coordinator.handle_split_request(0);  // 0-100
    coordinator.handle_split_request(1);  // 100-200
    coordinator.snapshot_enumerator(CheckpointId(1));
    coordinator.abort_checkpoint(CheckpointId(1));
    coordinator.reset_subtask(0, CheckpointId(0));
    EXPECT_EQ(splits_of(coordinator.snapshot_enumerator(CheckpointId(2))),
              (std::vector<IndexRangeSplit>{{200, 300, 200}, {0, 100, 0}}))
        << "no checkpoint: reader 0's split goes back, reader 1's stays with it";
    EXPECT_THROW(coordinator.reset_subtask(3, CheckpointId(0)), std::out_of_range);
    coordinator.close();
  }
}

// An enumerator that assigns on registration (Nexmark's) hands the splits given back to the reader at once; the
// new reader gets them with its registration.
TEST(SourceCoordinator, SplitsGivenBackToAnAssigningEnumeratorComeWithTheNewRegistration) {
  nexmark::NexmarkSourceOptions options;
  options.num_splits = 4;
  SourceCoordinator<nexmark::Event, nexmark::NexmarkSplit> coordinator(
      std::make_shared<const nexmark::NexmarkSource>(options));
  coordinator.start(2, nullptr);
  RecordingSink old_reader;
  (void)coordinator.register_reader(1, &old_reader);
  coordinator.reset_subtask(1, CheckpointId(0));
  RecordingSink new_reader;
  EXPECT_EQ(nexmark_split_indices(coordinator.register_reader(1, &new_reader)), (std::vector<int32_t>{1, 3}));
  EXPECT_TRUE(new_reader.events.empty());
  coordinator.close();
}

}  // namespace
}  // namespace sluice
