// make_checkpoint_barrier_handler picks the handler of the task's checkpointing mode, and what the task needs
// through the interface alone: the barrier to snapshot for, when alignment started, the overtaken data to
// persist, the alignment timeout.
#include "runtime/checkpointing/checkpoint_barrier_handler.h"

#include <gtest/gtest.h>

#include "runtime/checkpointing/aligned_barrier_handler.h"
#include "runtime/checkpointing/checkpoint_barrier_tracker.h"
#include "runtime/checkpointing/unaligned_barrier_handler.h"

namespace sluice::runtime {
namespace {

using HandlerKind = BarrierAction::Kind;

std::vector<HandlerKind> action_kinds(const std::vector<BarrierAction>& actions) {
  std::vector<HandlerKind> out;
  for (const auto& a : actions) out.push_back(a.kind);
  return out;
}

UnalignedCheckpointConfig unaligned_with_timeout(int64_t timeout_ms) {
  return UnalignedCheckpointConfig{true, std::chrono::milliseconds(timeout_ms)};
}

TEST(MakeCheckpointBarrierHandler, PicksTheHandlerOfTheCheckpointingMode) {
  const std::vector<bool> channels{false, true};
  auto exactly_once = make_checkpoint_barrier_handler({}, channels);
  EXPECT_NE(dynamic_cast<AlignedBarrierHandler*>(exactly_once.get()), nullptr);
  EXPECT_FALSE(exactly_once->barriers_overtake_data());

  auto unaligned = make_checkpoint_barrier_handler({false, unaligned_with_timeout(0)}, channels);
  EXPECT_NE(dynamic_cast<UnalignedBarrierHandler*>(unaligned.get()), nullptr);
  EXPECT_TRUE(unaligned->barriers_overtake_data());

  // AT_LEAST_ONCE never aligns, so unaligned checkpoints do not apply to it.
  for (bool unaligned_enabled : {false, true}) {
    auto at_least_once = make_checkpoint_barrier_handler(
        {true, unaligned_enabled ? unaligned_with_timeout(0) : UnalignedCheckpointConfig{}}, channels);
    EXPECT_NE(dynamic_cast<CheckpointBarrierTracker*>(at_least_once.get()), nullptr);
    EXPECT_FALSE(at_least_once->barriers_overtake_data());
  }
}

TEST(MakeCheckpointBarrierHandler, TriggerCarriesTheFirstBarrierAndItsArrivalInEveryMode) {
  const CheckpointBarrier first{CheckpointId(3), 1000, checkpoint::SnapshotType::kSavepoint};
  const CheckpointBarrier second{CheckpointId(3), 1000, checkpoint::SnapshotType::kSavepoint};
  for (const BarrierHandlingConfig& config :
       {BarrierHandlingConfig{}, BarrierHandlingConfig{true, {}}, BarrierHandlingConfig{false, unaligned_with_timeout(0)}}) {
    auto h = make_checkpoint_barrier_handler(config, {false, false});
    h->on_barrier(0, first, BarrierArrival{/*now_ns=*/50, /*now_ms=*/1001, 0});
    auto actions = h->on_barrier(1, second, BarrierArrival{/*now_ns=*/90, /*now_ms=*/1002, 0});
    ASSERT_EQ(action_kinds(actions), (std::vector<HandlerKind>{HandlerKind::kTriggerCheckpoint}));
    EXPECT_EQ(actions[0].barrier, first);
    EXPECT_EQ(actions[0].first_barrier_ns, 50);
    EXPECT_EQ(h->pending_barrier_of(0), CheckpointId(0));
  }
}

TEST(MakeCheckpointBarrierHandler, UnalignedPersistsOvertakenDataAfterTheAbortAndBeforeTheSnapshot) {
  auto h = make_checkpoint_barrier_handler({false, unaligned_with_timeout(100)}, {false, false});
  // Aligned at first (the timeout has not passed): barrier 1 blocks its channel.
  auto actions = h->on_barrier(0, CheckpointBarrier{CheckpointId(1), 1000, {}}, BarrierArrival{0, 1010, 0});
  EXPECT_EQ(action_kinds(actions), (std::vector<HandlerKind>{HandlerKind::kBlockChannel}));
  EXPECT_EQ(h->alignment_timeout_at_ms(), 1101);
  // Barrier 2 overtook data on channel 1: checkpoint 1 is aborted, the data persisted for 2, and 2 snapshots
  // unaligned at once (its channel 0 barrier is still to come).
  actions = h->on_barrier(1, CheckpointBarrier{CheckpointId(2), 1020, {}}, BarrierArrival{0, 1030, 4});
  ASSERT_EQ(action_kinds(actions), (std::vector<HandlerKind>{HandlerKind::kAbortCheckpoint, HandlerKind::kPersistOvertaken,
                                                       HandlerKind::kTriggerCheckpoint}));
  EXPECT_EQ(actions[0].checkpoint, CheckpointId(1));
  EXPECT_EQ(actions[1].checkpoint, CheckpointId(2));
  EXPECT_EQ(actions[1].channel, 1);
  EXPECT_EQ(actions[1].buffers, 4);
  EXPECT_TRUE(actions[2].unaligned);
  EXPECT_EQ(h->alignment_timeout_at_ms(), INT64_MAX);  // no longer aligning
  EXPECT_TRUE(h->persist_buffer(0));
  // A late barrier of the aborted checkpoint is dropped, and so is what it overtook.
  EXPECT_TRUE(h->on_barrier(0, CheckpointBarrier{CheckpointId(1), 1000, {}}, BarrierArrival{0, 1040, 2}).empty());
}

TEST(MakeCheckpointBarrierHandler, UnalignedTurnsUnalignedWhenTheTimeoutPasses) {
  auto h = make_checkpoint_barrier_handler({false, unaligned_with_timeout(100)}, {false, false});
  h->on_barrier(0, CheckpointBarrier{CheckpointId(1), 1000, {}}, BarrierArrival{0, 1010, 0});
  ASSERT_EQ(h->alignment_timeout_at_ms(), 1101);
  auto actions = h->on_alignment_timeout();
  ASSERT_EQ(action_kinds(actions), (std::vector<HandlerKind>{HandlerKind::kTriggerCheckpoint}));
  EXPECT_TRUE(actions[0].unaligned);
  EXPECT_EQ(h->alignment_timeout_at_ms(), INT64_MAX);
}

}  // namespace
}  // namespace sluice::runtime
