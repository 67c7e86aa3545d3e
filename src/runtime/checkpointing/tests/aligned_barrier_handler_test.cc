#include "runtime/checkpointing/aligned_barrier_handler.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "runtime/checkpointing/checkpoint_barrier.h"

namespace sluice::runtime {
namespace {

using Kind = BarrierAction::Kind;
CheckpointId C(int64_t i) { return CheckpointId(i); }

TEST(AlignedBarrierHandler, BlocksEachChannelUntilAllDelivered) {
  AlignedBarrierHandler h(3);
  auto a = h.on_barrier(0, C(1));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kBlockChannel);
  EXPECT_EQ(a[0].channel, 0);
  a = h.on_barrier(2, C(1));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kBlockChannel);
  a = h.on_barrier(1, C(1));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[0].checkpoint, C(1));
  EXPECT_FALSE(h.is_aligning());
}

TEST(AlignedBarrierHandler, SingleChannelTriggersAtOnce) {
  AlignedBarrierHandler h(1);
  auto a = h.on_barrier(0, C(5));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
}

TEST(AlignedBarrierHandler, OldBarriersAreDropped) {
  AlignedBarrierHandler h(2);
  h.on_barrier(0, C(3));
  h.on_barrier(1, C(3));  // triggers 3
  EXPECT_TRUE(h.on_barrier(0, C(2)).empty());
  EXPECT_TRUE(h.on_barrier(0, C(3)).empty());
}

TEST(AlignedBarrierHandler, NewerBarrierAbortsCurrentAlignment) {
  AlignedBarrierHandler h(2);
  h.on_barrier(0, C(1));
  auto a = h.on_barrier(1, C(2));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, Kind::kAbortCheckpoint);
  EXPECT_EQ(a[0].checkpoint, C(1));
  EXPECT_EQ(a[1].kind, Kind::kBlockChannel);
  EXPECT_EQ(h.current_checkpoint(), C(2));
  EXPECT_TRUE(h.on_barrier(0, C(1)).empty());  // the late barrier of the aborted checkpoint
  a = h.on_barrier(0, C(2));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
}

TEST(AlignedBarrierHandler, CancellationMarkerEndsAlignment) {
  AlignedBarrierHandler h(2);
  h.on_barrier(0, C(4));
  auto a = h.on_cancellation_marker(C(4));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kAbortCheckpoint);
  EXPECT_FALSE(h.is_aligning());
  EXPECT_TRUE(h.on_barrier(1, C(4)).empty());
  EXPECT_TRUE(h.on_cancellation_marker(C(4)).empty());
}

// A marker that arrives before any barrier of its checkpoint: the checkpoint is aborted here (the marker is
// forwarded) and its barriers, arriving later on the other channels, are dropped without blocking anything.
TEST(AlignedBarrierHandler, CancellationMarkerBeforeAnyBarrierDropsThatCheckpoint) {
  AlignedBarrierHandler h(3);
  auto a = h.on_cancellation_marker(C(2));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kAbortCheckpoint);
  EXPECT_EQ(a[0].checkpoint, C(2));
  EXPECT_FALSE(h.is_aligning());
  EXPECT_EQ(h.last_handled(), C(2));
  EXPECT_TRUE(h.on_barrier(0, C(2)).empty());
  EXPECT_TRUE(h.on_barrier(1, C(2)).empty());
  EXPECT_FALSE(h.is_aligning());
  EXPECT_TRUE(h.on_cancellation_marker(C(2)).empty()) << "a second marker for it is not forwarded again";
  // The next checkpoint needs all three channels again.
  EXPECT_EQ(h.on_barrier(0, C(3))[0].kind, Kind::kBlockChannel);
  EXPECT_EQ(h.on_barrier(1, C(3))[0].kind, Kind::kBlockChannel);
  a = h.on_barrier(2, C(3));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[0].checkpoint, C(3));
}

// A marker for an older checkpoint (already triggered or aborted here) changes nothing, also mid-alignment.
TEST(AlignedBarrierHandler, MarkerForAnOlderCheckpointIsIgnored) {
  AlignedBarrierHandler h(2);
  h.on_barrier(0, C(1));
  h.on_barrier(1, C(1));  // triggers 1
  h.on_barrier(0, C(2));  // aligning 2, channel 0 blocked
  EXPECT_TRUE(h.on_cancellation_marker(C(1)).empty());
  EXPECT_TRUE(h.is_aligning());
  EXPECT_EQ(h.current_checkpoint(), C(2));
  auto a = h.on_barrier(1, C(2));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[0].checkpoint, C(2));
}

// A barrier of the aborted checkpoint on the channel that had delivered it already (a duplicate after the abort)
// and on the one that had not: both dropped, and the handler is idle.
TEST(AlignedBarrierHandler, BarriersOfAnAbortedAlignmentAreDroppedOnEveryChannel) {
  AlignedBarrierHandler h(3);
  h.on_barrier(0, C(7));
  h.on_barrier(1, C(7));
  auto a = h.on_cancellation_marker(C(7));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kAbortCheckpoint);
  for (int32_t ch = 0; ch < 3; ++ch) EXPECT_TRUE(h.on_barrier(ch, C(7)).empty()) << "channel " << ch;
  EXPECT_FALSE(h.is_aligning());
  // A finishing channel does not resurrect it either.
  EXPECT_TRUE(h.on_channel_finished(2).empty());
}

TEST(AlignedBarrierHandler, FinishedChannelIsNotWaitedFor) {
  AlignedBarrierHandler h(3);
  h.on_barrier(0, C(1));
  h.on_barrier(1, C(1));
  auto a = h.on_channel_finished(2);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  // Later checkpoints need only the two open channels.
  h.on_barrier(0, C(2));
  a = h.on_barrier(1, C(2));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
}

// Random interleavings of barrier deliveries from channels that each carry barriers 1..N in order, with
// random cancellations: every checkpoint ends exactly once (trigger or abort), ids of ends increase, and a
// trigger happens only after every open channel delivered that barrier.
TEST(AlignedBarrierHandler, RandomInterleavingsKeepTheInvariants) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    const int32_t channels = 1 + static_cast<int32_t>(rng() % 4);
    const int64_t n = 1 + rng() % 6;
    AlignedBarrierHandler h(channels);
    std::vector<int64_t> next(static_cast<size_t>(channels), 1);
    std::vector<bool> blocked(static_cast<size_t>(channels), false);
    std::vector<std::set<int64_t>> delivered(static_cast<size_t>(channels));
    int64_t last_end = 0;
    std::set<int64_t> ended;
    auto apply = [&](const std::vector<BarrierAction>& actions) {
      for (const auto& a : actions) {
        if (a.kind == Kind::kBlockChannel) blocked[static_cast<size_t>(a.channel)] = true;
        if (a.kind == Kind::kTriggerCheckpoint || a.kind == Kind::kAbortCheckpoint) {
          ASSERT_GT(a.checkpoint.value(), last_end) << "seed " << seed;
          last_end = a.checkpoint.value();
          ASSERT_TRUE(ended.insert(a.checkpoint.value()).second) << "seed " << seed;
          if (a.kind == Kind::kTriggerCheckpoint) {
            for (int32_t c = 0; c < channels; ++c) {
              ASSERT_TRUE(delivered[static_cast<size_t>(c)].count(a.checkpoint.value())) << "seed " << seed;
            }
          }
          blocked.assign(static_cast<size_t>(channels), false);
        }
      }
    };
    for (int step = 0; step < 200; ++step) {
      int32_t c = static_cast<int32_t>(rng() % static_cast<uint32_t>(channels));
      if (rng() % 10 == 0) {
        apply(h.on_cancellation_marker(C(1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(n)))));
        continue;
      }
      if (blocked[static_cast<size_t>(c)] || next[static_cast<size_t>(c)] > n) continue;  // a blocked channel delivers nothing
      int64_t id = next[static_cast<size_t>(c)]++;
      delivered[static_cast<size_t>(c)].insert(id);
      apply(h.on_barrier(c, C(id)));
    }
  }
}

TEST(CheckpointBarrier, EventsRoundTripAndRejectGarbage) {
  CheckpointBarrier b{C(42), 1234567, checkpoint::SnapshotType::kSavepoint};
  auto decoded = decode_barrier(encode_barrier(b));
  ASSERT_TRUE(decoded.is_ok());
  EXPECT_EQ(decoded.value(), b);
  EXPECT_FALSE(decoded->is_native_savepoint());
  // A native savepoint's barrier carries its format to every task (keyed operators write RocksDB files).
  CheckpointBarrier native{C(43), 1234568, checkpoint::SnapshotType::kSavepoint, checkpoint::SavepointFormatType::kNative};
  auto native_decoded = decode_barrier(encode_barrier(native));
  ASSERT_TRUE(native_decoded.is_ok());
  EXPECT_EQ(native_decoded.value(), native);
  EXPECT_TRUE(native_decoded->is_native_savepoint());
  EXPECT_EQ(decode_cancel_marker(encode_cancel_marker(C(7))).value(), C(7));
  RuntimeEvent bad = encode_barrier(b);
  bad.payload.pop_back();
  EXPECT_FALSE(decode_barrier(bad).is_ok());
  EXPECT_FALSE(decode_barrier(encode_cancel_marker(C(1))).is_ok());
}

}  // namespace
}  // namespace sluice::runtime
