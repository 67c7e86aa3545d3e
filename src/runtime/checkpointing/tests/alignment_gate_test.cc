// Barrier alignment over a real InputGate: the AlignedBarrierHandler's decisions applied to the gate the way
// StreamTask applies them (block the channel that delivered the barrier, snapshot + forward + unblock all when
// the last one arrives, unblock all and forward a cancellation marker on an abort). Two input channels A and
// B, fed through ResultPartitions; single-threaded, so every interleaving is chosen by the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/checkpointing/aligned_barrier_handler.h"
#include "runtime/checkpointing/checkpoint_barrier.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"

namespace sluice::runtime {
namespace {

constexpr int32_t kA = 0;
constexpr int32_t kB = 1;

// A record is 8 bytes: [channel u32][seq u32].
struct Rec {
  uint32_t channel = 0;
  uint32_t seq = 0;
  bool operator==(const Rec&) const = default;
};

std::string name(const Rec& r) { return std::string(r.channel == kA ? "a" : "b") + std::to_string(r.seq); }

// What the consumer task did, in order: records processed, snapshots taken, aborts.
struct Step {
  enum class Kind { kRecord, kSnapshot, kAbort } kind;
  Rec rec;
  CheckpointId id{0};
};

// Two producers (one subpartition each) and a consumer task with a two-channel gate, the handler and one
// output partition (where the barrier / cancellation marker is forwarded).
class AlignmentHarness {
 public:
  AlignmentHarness() {
    NetworkConfig config;
    config.buffer_size_bytes = 64;  // a few records per buffer: flushes decide what is in flight
    config.credits_per_channel = 100;
    config.max_buffers_per_channel = 100;
    for (int i = 0; i < 2; ++i) producers_.push_back(std::make_unique<ResultPartition>(1, config, nullptr));
    gate_ = std::make_unique<InputGate>(
        std::vector<std::shared_ptr<Channel>>{producers_[kA]->channel(0), producers_[kB]->channel(0)}, &notifier_);
    output_ = std::make_unique<ResultPartition>(1, config, nullptr);
    downstream_ = std::make_unique<InputGate>(std::vector<std::shared_ptr<Channel>>{output_->channel(0)}, nullptr);
  }

  void emit(int32_t channel, uint32_t seq) {
    uint32_t bytes[2] = {static_cast<uint32_t>(channel), seq};
    producers_[static_cast<size_t>(channel)]->emit_record(0, reinterpret_cast<const uint8_t*>(bytes), sizeof(bytes));
  }
  void flush(int32_t channel) { producers_[static_cast<size_t>(channel)]->flush_all(); }
  void barrier(int32_t channel, int64_t id) {
    producers_[static_cast<size_t>(channel)]->broadcast_event(encode_barrier(CheckpointBarrier{CheckpointId(id), 1000 + id, {}}));
  }
  void finish(int32_t channel) { producers_[static_cast<size_t>(channel)]->finish(); }
  void cancel_marker(int32_t channel, int64_t id) {
    producers_[static_cast<size_t>(channel)]->broadcast_event(encode_cancel_marker(CheckpointId(id)));
  }

  // The task's input loop: polls until the gate has nothing it may deliver (blocked channels are skipped).
  void run_until_idle() {
    while (auto next = gate_->poll_next()) {
      if (next->is_buffer()) {
        const Buffer& b = next->buffer();
        for (size_t off = 0; off + 8 <= b.bytes.size(); off += 8) {
          Rec r;
          std::memcpy(&r.channel, b.bytes.data() + off, 4);
          std::memcpy(&r.seq, b.bytes.data() + off + 4, 4);
          EXPECT_EQ(static_cast<int32_t>(r.channel), next->channel_index) << "record on the wrong channel";
          EXPECT_FALSE(gate_->is_channel_blocked(next->channel_index)) << "a record from a blocked channel";
          steps_.push_back(Step{Step::Kind::kRecord, r, {}});
          // Forward it, as a map would.
          uint32_t bytes[2] = {r.channel, r.seq};
          output_->emit_record(0, reinterpret_cast<const uint8_t*>(bytes), sizeof(bytes));
        }
        gate_->recycle(std::move(next->buffer()));
        continue;
      }
      const RuntimeEvent& e = next->event();
      if (e.type == EventType::kCheckpointBarrier) {
        auto b = decode_barrier(e);
        ASSERT_TRUE(b.is_ok());
        apply(handler_.on_barrier(next->channel_index, b->id));
      } else if (e.type == EventType::kCancelCheckpointMarker) {
        auto id = decode_cancel_marker(e);
        ASSERT_TRUE(id.is_ok());
        apply(handler_.on_cancellation_marker(*id));
      } else if (e.type == EventType::kEndOfPartition) {
        apply(handler_.on_channel_finished(next->channel_index));
      }
    }
  }

  // What went downstream: record names, "|barrier n" and "|cancel n".
  std::vector<std::string> downstream() {
    output_->flush_all();
    std::vector<std::string> out;
    while (auto next = downstream_->poll_next()) {
      if (next->is_buffer()) {
        const Buffer& b = next->buffer();
        for (size_t off = 0; off + 8 <= b.bytes.size(); off += 8) {
          Rec r;
          std::memcpy(&r.channel, b.bytes.data() + off, 4);
          std::memcpy(&r.seq, b.bytes.data() + off + 4, 4);
          out.push_back(name(r));
        }
        downstream_->recycle(std::move(next->buffer()));
      } else if (next->event().type == EventType::kCheckpointBarrier) {
        out.push_back("|barrier " + std::to_string(decode_barrier(next->event())->id.value()));
      } else if (next->event().type == EventType::kCancelCheckpointMarker) {
        out.push_back("|cancel " + std::to_string(decode_cancel_marker(next->event())->value()));
      }
    }
    return out;
  }

  // Records processed so far, as names.
  std::vector<std::string> processed() const {
    std::vector<std::string> out;
    for (const Step& s : steps_) {
      if (s.kind == Step::Kind::kRecord) out.push_back(name(s.rec));
      if (s.kind == Step::Kind::kSnapshot) out.push_back("|snapshot " + std::to_string(s.id.value()));
      if (s.kind == Step::Kind::kAbort) out.push_back("|abort " + std::to_string(s.id.value()));
    }
    return out;
  }

  bool blocked(int32_t channel) const { return gate_->is_channel_blocked(channel); }
  const AlignedBarrierHandler& handler() const { return handler_; }

 private:
  // StreamTask::apply_barrier_actions, with the snapshot reduced to a marker in the step log.
  void apply(const std::vector<BarrierAction>& actions) {
    for (const BarrierAction& a : actions) {
      switch (a.kind) {
        case BarrierAction::Kind::kNone:
        case BarrierAction::Kind::kChannelStateComplete:  // unaligned checkpoints only
        case BarrierAction::Kind::kPersistOvertaken:
          break;
        case BarrierAction::Kind::kBlockChannel:
          gate_->block_channel(a.channel);
          break;
        case BarrierAction::Kind::kTriggerCheckpoint:
          steps_.push_back(Step{Step::Kind::kSnapshot, {}, a.checkpoint});
          output_->broadcast_event(encode_barrier(CheckpointBarrier{a.checkpoint, 0, {}}));
          gate_->unblock_all();
          break;
        case BarrierAction::Kind::kAbortCheckpoint:
          steps_.push_back(Step{Step::Kind::kAbort, {}, a.checkpoint});
          gate_->unblock_all();
          output_->broadcast_event(encode_cancel_marker(a.checkpoint));
          break;
      }
    }
  }

  TaskNotifier notifier_;
  std::vector<std::unique_ptr<ResultPartition>> producers_;
  std::unique_ptr<InputGate> gate_;
  std::unique_ptr<ResultPartition> output_;
  std::unique_ptr<InputGate> downstream_;
  AlignedBarrierHandler handler_{2};
  std::vector<Step> steps_;
};

using V = std::vector<std::string>;

// After barrier 1 arrives on A, B keeps flowing while A's later records wait behind the barrier; B's barrier
// completes the alignment: the snapshot covers exactly the records before barrier 1 on both channels, the
// barrier is forwarded after them, and A's queued records follow.
TEST(BarrierAlignment, SecondChannelFlowsWhileFirstIsBlocked) {
  AlignmentHarness h;
  h.emit(kA, 0);
  h.emit(kA, 1);
  h.barrier(kA, 1);  // flushes a0 a1 first
  h.emit(kA, 2);
  h.emit(kA, 3);
  h.flush(kA);
  h.emit(kB, 0);
  h.flush(kB);
  h.run_until_idle();
  EXPECT_TRUE(h.blocked(kA));
  EXPECT_FALSE(h.blocked(kB));
  EXPECT_TRUE(h.handler().is_aligning());
  // a2 a3 are queued behind the barrier; b0 was processed (in any order relative to a0 a1).
  V got = h.processed();
  EXPECT_EQ(got.size(), 3u);
  EXPECT_EQ(std::count(got.begin(), got.end(), "b0"), 1);
  EXPECT_EQ(std::count(got.begin(), got.end(), "a2"), 0);

  // B goes on delivering records before its barrier: processed at once, A still blocked.
  h.emit(kB, 1);
  h.emit(kB, 2);
  h.flush(kB);
  h.emit(kA, 4);  // more data on A queues up behind the barrier too
  h.flush(kA);
  h.run_until_idle();
  EXPECT_TRUE(h.blocked(kA));
  got = h.processed();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[3], "b1");
  EXPECT_EQ(got[4], "b2");

  // Barrier 1 on B: snapshot, forward, unblock; then A's queued records and B's next ones.
  h.barrier(kB, 1);
  h.emit(kB, 3);
  h.flush(kB);
  h.run_until_idle();
  EXPECT_FALSE(h.blocked(kA));
  EXPECT_FALSE(h.handler().is_aligning());
  got = h.processed();
  ASSERT_EQ(got.size(), 10u);
  const V before(got.begin(), got.begin() + 5);
  EXPECT_EQ(got[5], "|snapshot 1");
  V pre = before;
  std::sort(pre.begin(), pre.end());
  EXPECT_EQ(pre, (V{"a0", "a1", "b0", "b1", "b2"})) << "the snapshot covers exactly the pre-barrier records";
  V post(got.begin() + 6, got.end());
  std::sort(post.begin(), post.end());
  EXPECT_EQ(post, (V{"a2", "a3", "a4", "b3"}));

  // Downstream sees the pre-barrier records, then the barrier, then the rest.
  V down = h.downstream();
  ASSERT_EQ(down.size(), 10u);
  EXPECT_EQ(down[5], "|barrier 1");
  EXPECT_EQ(V(down.begin(), down.begin() + 5), before);
}

// Barriers of consecutive checkpoints: a channel that already delivered barrier 2 (after barrier 1 completed)
// stays blocked for 2 only; records between barriers 1 and 2 belong to checkpoint 2.
TEST(BarrierAlignment, ConsecutiveCheckpointsSplitTheStream) {
  AlignmentHarness h;
  h.emit(kA, 0);
  h.barrier(kA, 1);
  h.emit(kA, 1);
  h.barrier(kA, 2);
  h.emit(kA, 2);
  h.flush(kA);
  h.emit(kB, 0);
  h.barrier(kB, 1);
  h.emit(kB, 1);
  h.flush(kB);
  h.run_until_idle();
  h.emit(kB, 2);
  h.barrier(kB, 2);
  h.emit(kB, 3);
  h.flush(kB);
  h.run_until_idle();
  V got = h.processed();
  auto pos = [&](const std::string& s) { return std::find(got.begin(), got.end(), s) - got.begin(); };
  ASSERT_EQ(got.size(), 9u);
  EXPECT_LT(pos("a0"), pos("|snapshot 1"));
  EXPECT_LT(pos("b0"), pos("|snapshot 1"));
  EXPECT_GT(pos("a1"), pos("|snapshot 1"));
  EXPECT_GT(pos("b1"), pos("|snapshot 1"));
  EXPECT_LT(pos("a1"), pos("|snapshot 2"));
  EXPECT_LT(pos("b2"), pos("|snapshot 2"));
  EXPECT_GT(pos("a2"), pos("|snapshot 2"));
  EXPECT_GT(pos("b3"), pos("|snapshot 2"));
  EXPECT_FALSE(h.blocked(kA));
  EXPECT_FALSE(h.blocked(kB));
}

// A cancellation marker on B while A is blocked for checkpoint 3: the alignment ends without a snapshot, A is
// unblocked at once, the marker goes downstream; a late barrier 3 is dropped; checkpoint 4 aligns normally.
TEST(BarrierAlignment, CancellationMarkerEndsTheAlignmentAndUnblocks) {
  AlignmentHarness h;
  h.barrier(kA, 3);
  h.emit(kA, 0);
  h.flush(kA);
  h.run_until_idle();
  EXPECT_TRUE(h.blocked(kA));
  EXPECT_TRUE(h.processed().empty());
  h.cancel_marker(kB, 3);
  h.emit(kB, 0);
  h.flush(kB);
  h.run_until_idle();
  EXPECT_FALSE(h.blocked(kA));
  EXPECT_FALSE(h.handler().is_aligning());
  V got = h.processed();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "|abort 3");
  V rest(got.begin() + 1, got.end());
  std::sort(rest.begin(), rest.end());
  EXPECT_EQ(rest, (V{"a0", "b0"}));
  V down = h.downstream();
  ASSERT_FALSE(down.empty());
  EXPECT_EQ(down[0], "|cancel 3");

  // A late barrier 3 (a producer that had sent both) is dropped: it blocks nothing and snapshots nothing.
  h.barrier(kB, 3);
  h.emit(kB, 1);
  h.flush(kB);
  h.run_until_idle();
  EXPECT_FALSE(h.blocked(kB));
  EXPECT_EQ(h.processed().back(), "b1");

  // Checkpoint 4 aligns as usual.
  h.barrier(kA, 4);
  h.barrier(kB, 4);
  h.run_until_idle();
  EXPECT_EQ(h.processed().back(), "|snapshot 4");
  V down2 = h.downstream();
  EXPECT_EQ(down2.back(), "|barrier 4");
}

// A barrier of a checkpoint that a cancellation marker already aborted before any of its barriers arrived is
// dropped on every channel: nothing blocks, nothing is snapshotted.
TEST(BarrierAlignment, BarrierOfACheckpointCancelledBeforehandIsDropped) {
  AlignmentHarness h;
  h.cancel_marker(kB, 5);
  h.run_until_idle();
  V got = h.processed();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "|abort 5");
  h.barrier(kA, 5);
  h.emit(kA, 0);
  h.flush(kA);
  h.run_until_idle();
  EXPECT_FALSE(h.blocked(kA));
  EXPECT_FALSE(h.handler().is_aligning());
  EXPECT_EQ(h.processed().back(), "a0");
  EXPECT_EQ(h.downstream(), (V{"|cancel 5", "a0"}));
}

// A channel that ends while the other is blocked completes the alignment (it is no longer waited for).
TEST(BarrierAlignment, EndOfPartitionOnTheMissingChannelCompletesTheAlignment) {
  AlignmentHarness h;
  h.barrier(kA, 1);
  h.emit(kA, 0);
  h.flush(kA);
  h.emit(kB, 0);
  h.flush(kB);
  h.run_until_idle();
  EXPECT_TRUE(h.blocked(kA));
  h.finish(kB);  // B's producer ends without barrier 1 (EndOfPartition)
  h.run_until_idle();
  V got = h.processed();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "b0");
  EXPECT_EQ(got[1], "|snapshot 1");
  EXPECT_EQ(got[2], "a0");
}

}  // namespace
}  // namespace sluice::runtime
