#include "runtime/checkpointing/checkpoint_barrier_tracker.h"

#include <gtest/gtest.h>

namespace sluice::runtime {
namespace {

using Kind = BarrierAction::Kind;
CheckpointId Cp(int64_t i) { return CheckpointId(i); }

bool never_blocks(const std::vector<BarrierAction>& actions) {
  for (const auto& a : actions)
    if (a.kind == Kind::kBlockChannel) return false;
  return true;
}

TEST(CheckpointBarrierTracker, TriggersWhenEveryChannelDeliveredAndNeverBlocks) {
  CheckpointBarrierTracker t(3);
  auto a = t.on_barrier(0, Cp(1), 100);
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(t.channel_past_pending_barrier(0));
  EXPECT_FALSE(t.channel_past_pending_barrier(1));
  EXPECT_EQ(t.pending_barrier_of(0), Cp(1));
  a = t.on_barrier(2, Cp(1), 200);
  EXPECT_TRUE(a.empty());
  a = t.on_barrier(1, Cp(1), 300);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[0].checkpoint, Cp(1));
  EXPECT_EQ(t.last_trigger_first_barrier_ns(), 100);
  EXPECT_EQ(t.num_pending(), 0u);
  EXPECT_FALSE(t.channel_past_pending_barrier(0));
}

TEST(CheckpointBarrierTracker, SingleChannelTriggersAtOnce) {
  CheckpointBarrierTracker t(1);
  auto a = t.on_barrier(0, Cp(7), 1);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[0].checkpoint, Cp(7));
}

TEST(CheckpointBarrierTracker, SeveralCheckpointsPendingAtOnce) {
  CheckpointBarrierTracker t(2);
  EXPECT_TRUE(t.on_barrier(0, Cp(1), 1).empty());
  EXPECT_TRUE(t.on_barrier(0, Cp(2), 2).empty());  // channel 0 runs ahead: no blocking, 2 pending
  EXPECT_EQ(t.num_pending(), 2u);
  auto a = t.on_barrier(1, Cp(1), 3);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[0].checkpoint, Cp(1));
  a = t.on_barrier(1, Cp(2), 4);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].checkpoint, Cp(2));
  EXPECT_EQ(t.last_trigger_first_barrier_ns(), 2);
}

TEST(CheckpointBarrierTracker, NewerCompletingFirstAbortsOlderIncompleteOnes) {
  CheckpointBarrierTracker t(2);
  t.on_barrier(0, Cp(1), 1);
  t.on_barrier(0, Cp(2), 2);
  t.on_barrier(1, Cp(2), 3);  // channel 1 never delivered 1 (e.g. its producer restarted the stream of barriers)
  EXPECT_EQ(t.num_pending(), 0u);
  // The second call triggered 2 and aborted 1, in that order: abort first.
  CheckpointBarrierTracker u(2);
  u.on_barrier(0, Cp(1), 1);
  u.on_barrier(0, Cp(2), 2);
  auto a = u.on_barrier(1, Cp(2), 3);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, Kind::kAbortCheckpoint);
  EXPECT_EQ(a[0].checkpoint, Cp(1));
  EXPECT_EQ(a[1].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[1].checkpoint, Cp(2));
  EXPECT_TRUE(u.on_barrier(1, Cp(1), 4).empty());  // a late barrier of the aborted one is dropped
  EXPECT_EQ(u.num_pending(), 0u);
}

TEST(CheckpointBarrierTracker, CancellationMarkerAbortsThatAndOlderPendingOnes) {
  CheckpointBarrierTracker t(3);
  t.on_barrier(0, Cp(3), 1);
  t.on_barrier(0, Cp(4), 2);
  t.on_barrier(0, Cp(5), 3);
  auto a = t.on_cancellation_marker(Cp(4));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].checkpoint, Cp(3));
  EXPECT_EQ(a[1].checkpoint, Cp(4));
  EXPECT_EQ(a[0].kind, Kind::kAbortCheckpoint);
  EXPECT_EQ(t.num_pending(), 1u);  // 5 is still pending
  EXPECT_TRUE(t.on_barrier(1, Cp(4), 4).empty());
  EXPECT_TRUE(t.on_cancellation_marker(Cp(4)).empty());  // the same marker from another channel
  t.on_barrier(1, Cp(5), 5);
  a = t.on_barrier(2, Cp(5), 6);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
}

TEST(CheckpointBarrierTracker, CancellationMarkerBeforeAnyBarrierDropsItsLateBarriers) {
  CheckpointBarrierTracker t(2);
  auto a = t.on_cancellation_marker(Cp(2));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kAbortCheckpoint);
  EXPECT_EQ(a[0].checkpoint, Cp(2));
  EXPECT_TRUE(t.on_barrier(0, Cp(2), 1).empty());
  EXPECT_TRUE(t.on_barrier(1, Cp(2), 1).empty());
  EXPECT_EQ(t.num_pending(), 0u);
}

TEST(CheckpointBarrierTracker, FinishedChannelsAreNotWaitedFor) {
  CheckpointBarrierTracker t(3);
  t.on_barrier(0, Cp(1), 1);
  t.on_barrier(1, Cp(1), 2);
  auto a = t.on_channel_finished(2);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_EQ(a[0].checkpoint, Cp(1));
  // Later checkpoints need only the two open channels.
  EXPECT_TRUE(t.on_barrier(1, Cp(2), 3).empty());
  a = t.on_barrier(0, Cp(2), 4);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
  EXPECT_TRUE(t.on_channel_finished(2).empty());  // twice: nothing
}

TEST(CheckpointBarrierTracker, AChannelThatDeliveredAndThenFinishedStillCountsOnce) {
  CheckpointBarrierTracker t(2);
  t.on_barrier(0, Cp(1), 1);
  EXPECT_TRUE(t.on_channel_finished(0).empty());  // channel 1 still owes barrier 1
  auto a = t.on_barrier(1, Cp(1), 2);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kTriggerCheckpoint);
}

TEST(CheckpointBarrierTracker, BoundedNumberOfPendingCheckpoints) {
  CheckpointBarrierTracker t(2);
  std::vector<BarrierAction> all;
  for (int64_t i = 1; i <= static_cast<int64_t>(CheckpointBarrierTracker::kMaxPending) + 5; ++i) {
    auto a = t.on_barrier(0, Cp(i), i);
    EXPECT_TRUE(never_blocks(a));
    all.insert(all.end(), a.begin(), a.end());
  }
  EXPECT_EQ(t.num_pending(), CheckpointBarrierTracker::kMaxPending);
  ASSERT_EQ(all.size(), 5u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].kind, Kind::kAbortCheckpoint);
    EXPECT_EQ(all[i].checkpoint, Cp(static_cast<int64_t>(i) + 1));
  }
  EXPECT_TRUE(t.on_barrier(1, Cp(3), 99).empty());  // dropped with the oldest
}

// Randomised: whatever the interleaving, a trigger comes only after every open channel delivered that id, ids
// trigger in increasing order, and nothing is ever blocked.
TEST(CheckpointBarrierTracker, RandomInterleavingsTriggerInOrderOnlyWhenComplete) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    uint32_t x = seed;
    auto rnd = [&] { x = x * 1103515245u + 12345u; return (x >> 16) & 0x7fff; };
    const int32_t channels = 1 + static_cast<int32_t>(rnd() % 4);
    CheckpointBarrierTracker t(channels);
    std::vector<int64_t> next(static_cast<size_t>(channels), 1);
    std::vector<std::vector<int64_t>> delivered(static_cast<size_t>(channels));
    int64_t last_trigger = 0;
    for (int step = 0; step < 200; ++step) {
      int32_t c = static_cast<int32_t>(rnd() % static_cast<uint32_t>(channels));
      int64_t id = next[static_cast<size_t>(c)]++;
      delivered[static_cast<size_t>(c)].push_back(id);
      auto a = t.on_barrier(c, Cp(id), step);
      ASSERT_TRUE(never_blocks(a));
      for (const auto& act : a) {
        if (act.kind != Kind::kTriggerCheckpoint) continue;
        EXPECT_GT(act.checkpoint.value(), last_trigger);
        last_trigger = act.checkpoint.value();
        for (int32_t ch = 0; ch < channels; ++ch) EXPECT_GE(next[static_cast<size_t>(ch)], last_trigger + 1);
      }
    }
  }
}

}  // namespace
}  // namespace sluice::runtime
