// The source coordinator's event valve (sluice/source/source_operator.h): a split assignment is in the
// enumerator's snapshot of a checkpoint or in the reader's, never in neither - also when the checkpoint is
// triggered while the reader's task is still opening (the reader asked for a split, but has not registered); and
// what the enumerator assigns at a registration comes back with it.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/source/generator_source.h"
#include "sluice/source/source_operator.h"

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
  const std::vector<OperatorEvent> initial = coordinator.register_reader(1, &sink);
  std::vector<int32_t> indices;
  for (const OperatorEvent& e : initial) {
    if (e.kind == OperatorEvent::Kind::kNoMoreSplits) continue;  // the Nexmark enumerator says so at once
    ASSERT_EQ(e.kind, OperatorEvent::Kind::kAddSplits);
    auto splits = deserialize_bytes<std::vector<nexmark::NexmarkSplit>>(e.payload.data(), e.payload.size(), "splits");
    ASSERT_TRUE(splits.is_ok()) << splits.status().to_string();
    for (const auto& split : *splits) indices.push_back(split.index);
  }
  EXPECT_EQ(indices, (std::vector<int32_t>{1, 3, 5, 7}));
  EXPECT_TRUE(sink.events.empty()) << sink.events.size() << " events went through the sink";
  coordinator.close();
}

}  // namespace
}  // namespace sluice
