// UnalignedBarrierHandler's decisions: snapshot on the first barrier when unaligned, persist what arrives before
// each channel's barrier and what a priority barrier overtook, stay aligned on forward/broadcast channels, switch
// on the alignment timeout, and abort on newer barriers and markers.
#include "runtime/checkpointing/unaligned_barrier_handler.h"

#include <gtest/gtest.h>

namespace sluice::runtime {
namespace {

using Kind = BarrierAction::Kind;
const CheckpointId k1{1};
const CheckpointId k2{2};

std::vector<Kind> kinds(const std::vector<BarrierAction>& actions) {
  std::vector<Kind> out;
  for (const auto& a : actions) out.push_back(a.kind);
  return out;
}

TEST(UnalignedBarrierHandler, SnapshotsOnTheFirstBarrierAndPersistsUntilEachChannelsBarrier) {
  UnalignedBarrierHandler h({false, false, false});
  // Aligned by the clock, but the barrier overtook data: unaligned.
  auto a = h.on_barrier(0, k1, /*unaligned_now=*/false, /*overtaken=*/2);
  ASSERT_EQ(kinds(a), (std::vector<Kind>{Kind::kTriggerCheckpoint}));
  EXPECT_TRUE(a[0].unaligned);
  EXPECT_TRUE(h.is_collecting());
  EXPECT_FALSE(h.persist_buffer(0));  // after its barrier (what it overtook the task copied itself)
  // Channels 1 and 2 have not delivered barrier 1: everything they deliver is persisted.
  EXPECT_TRUE(h.persist_buffer(1));
  EXPECT_TRUE(h.persist_buffer(2));
  EXPECT_TRUE(h.on_barrier(1, k1, true, 0).empty());
  EXPECT_FALSE(h.persist_buffer(1));
  EXPECT_TRUE(h.persist_buffer(2));
  EXPECT_EQ(kinds(h.on_barrier(2, k1, true, 1)), (std::vector<Kind>{Kind::kChannelStateComplete}));
  EXPECT_FALSE(h.is_collecting());
  EXPECT_FALSE(h.persist_buffer(2));
  EXPECT_EQ(h.last_handled(), k1);
}

TEST(UnalignedBarrierHandler, LastBarrierWithoutOvertakenDataCompletesTheChannelState) {
  UnalignedBarrierHandler h({false, false});
  EXPECT_EQ(kinds(h.on_barrier(1, k1, true, 0)), (std::vector<Kind>{Kind::kTriggerCheckpoint}));
  EXPECT_EQ(kinds(h.on_barrier(0, k1, true, 0)), (std::vector<Kind>{Kind::kChannelStateComplete}));
  // A single channel: trigger and completion at once.
  UnalignedBarrierHandler single({false});
  EXPECT_EQ(kinds(single.on_barrier(0, k1, true, 0)),
            (std::vector<Kind>{Kind::kTriggerCheckpoint, Kind::kChannelStateComplete}));
}

TEST(UnalignedBarrierHandler, AlignedUntilTheTimeoutThenSwitches) {
  UnalignedBarrierHandler h({false, false, false});
  EXPECT_EQ(kinds(h.on_barrier(0, k1, /*unaligned_now=*/false, 0)), (std::vector<Kind>{Kind::kBlockChannel}));
  EXPECT_TRUE(h.is_aligning());
  EXPECT_FALSE(h.persist_buffer(1));  // aligning: nothing is persisted
  auto a = h.on_alignment_timeout();
  ASSERT_EQ(kinds(a), (std::vector<Kind>{Kind::kTriggerCheckpoint}));
  EXPECT_TRUE(a[0].unaligned);
  EXPECT_TRUE(h.persist_buffer(1));
  EXPECT_FALSE(h.persist_buffer(0));  // its barrier came before the snapshot
}

TEST(UnalignedBarrierHandler, AllBarriersBeforeTheTimeoutMeansAnAlignedCheckpoint) {
  UnalignedBarrierHandler h({false, false});
  EXPECT_EQ(kinds(h.on_barrier(0, k1, false, 0)), (std::vector<Kind>{Kind::kBlockChannel}));
  auto a = h.on_barrier(1, k1, false, 0);
  ASSERT_EQ(kinds(a), (std::vector<Kind>{Kind::kTriggerCheckpoint}));
  EXPECT_FALSE(a[0].unaligned);
  EXPECT_FALSE(h.is_collecting());
  EXPECT_TRUE(h.on_alignment_timeout().empty());
}

TEST(UnalignedBarrierHandler, ForwardAndBroadcastChannelsStayAligned) {
  // Channel 0 is a forward input, 1 and 2 come from a hash exchange.
  UnalignedBarrierHandler h({true, false, false});
  EXPECT_EQ(kinds(h.on_barrier(1, k1, true, 3)), (std::vector<Kind>{Kind::kBlockChannel}));
  EXPECT_FALSE(h.persist_buffer(0));     // still aligning: the forward channel's data is processed
  auto a = h.on_barrier(0, k1, true, 0);  // the forward barrier arrives in order
  ASSERT_EQ(kinds(a), (std::vector<Kind>{Kind::kTriggerCheckpoint}));
  EXPECT_TRUE(a[0].unaligned);
  EXPECT_FALSE(h.persist_buffer(0));  // never the forward channel's data
  EXPECT_FALSE(h.persist_buffer(1));  // after its barrier
  EXPECT_TRUE(h.persist_buffer(2));
  EXPECT_EQ(kinds(h.on_barrier(2, k1, true, 0)), (std::vector<Kind>{Kind::kChannelStateComplete}));
}

TEST(UnalignedBarrierHandler, NewerBarrierOrMarkerAbortsWhileCollecting) {
  UnalignedBarrierHandler h({false, false});
  EXPECT_EQ(kinds(h.on_barrier(0, k1, true, 0)), (std::vector<Kind>{Kind::kTriggerCheckpoint}));
  auto a = h.on_barrier(0, k2, true, 0);
  EXPECT_EQ(kinds(a), (std::vector<Kind>{Kind::kAbortCheckpoint, Kind::kTriggerCheckpoint}));
  EXPECT_EQ(a[0].checkpoint, k1);
  EXPECT_EQ(a[1].checkpoint, k2);
  EXPECT_TRUE(h.on_barrier(1, k1, true, 0).empty());  // the old one's late barrier is dropped
  EXPECT_EQ(kinds(h.on_cancellation_marker(k2)), (std::vector<Kind>{Kind::kAbortCheckpoint}));
  EXPECT_FALSE(h.is_collecting());
}

TEST(UnalignedBarrierHandler, FinishedChannelIsNotWaitedFor) {
  UnalignedBarrierHandler h({false, false});
  EXPECT_EQ(kinds(h.on_barrier(0, k1, true, 0)), (std::vector<Kind>{Kind::kTriggerCheckpoint}));
  EXPECT_EQ(kinds(h.on_channel_finished(1)), (std::vector<Kind>{Kind::kChannelStateComplete}));
}

}  // namespace
}  // namespace sluice::runtime

#include "runtime/checkpointing/unaligned_checkpoint_config.h"

namespace sluice::runtime {
namespace {

TEST(UnalignedCheckpointConfig, SavepointsAreAlwaysAlignedAndTheTimeoutSwitchesCheckpoints) {
  const CheckpointBarrier checkpoint{CheckpointId(3), 10'000, checkpoint::SnapshotType::kCheckpoint};
  const CheckpointBarrier savepoint{CheckpointId(4), 10'000, checkpoint::SnapshotType::kSavepoint};
  UnalignedCheckpointConfig off;
  EXPECT_FALSE(off.unaligned_at(checkpoint, 99'999));
  EXPECT_EQ(off.promote_at_ms(checkpoint), 0);

  UnalignedCheckpointConfig from_start{true, std::chrono::milliseconds(0)};
  EXPECT_TRUE(from_start.unaligned_at(checkpoint, 10'000));
  EXPECT_FALSE(from_start.unaligned_at(savepoint, 99'999));
  EXPECT_EQ(from_start.promote_at_ms(checkpoint), 0);  // never sent aligned

  UnalignedCheckpointConfig timeout{true, std::chrono::milliseconds(500)};
  EXPECT_FALSE(timeout.unaligned_at(checkpoint, 10'500));  // "exceeds" the timeout: strictly more
  EXPECT_TRUE(timeout.unaligned_at(checkpoint, 10'501));
  EXPECT_EQ(timeout.promote_at_ms(checkpoint), 10'501);
  EXPECT_FALSE(timeout.unaligned_at(savepoint, 99'999));
  EXPECT_EQ(timeout.promote_at_ms(savepoint), 0);

  for (Partitioning p : {Partitioning::kHash, Partitioning::kRebalance, Partitioning::kRescale, Partitioning::kShuffle,
                         Partitioning::kGlobal, Partitioning::kCustom}) {
    EXPECT_TRUE(holds_channel_state(p)) << partitioning_name(p);
  }
  EXPECT_FALSE(holds_channel_state(Partitioning::kForward));
  EXPECT_FALSE(holds_channel_state(Partitioning::kBroadcast));
}

}  // namespace
}  // namespace sluice::runtime
