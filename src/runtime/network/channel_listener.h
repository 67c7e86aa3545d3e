// Channel listeners: how a Channel tells the side across from it that something changed.
//
// In-process, a Channel's receiver is an InputGate and its sender a ResultPartition whose task sleeps on a
// TaskNotifier. A remote channel (tcp/ in this folder) is two Channels joined by a TCP connection: on the
// producer's TaskManager the network sender is the receiver of the ResultPartition's Channel, and on the
// consumer's TaskManager the network receiver is the sender of the InputGate's Channel. These interfaces are
// what lets both ends plug in without the partition, the gate or the task knowing.
//
// Every method is called with the channel's mutex held, from whatever thread changed the channel. An
// implementation must return quickly, must never block on a condition variable (the network's IO thread
// implements them) and must not call back into the channel. Lock order: channel mutex, then the listener's.
#pragma once

#include <cstdint>

namespace sluice::runtime {

// Where a channel's receiver is. A priority event overtakes data differently (Channel::enqueue_priority_event):
// for a local receiver the data it overtook at the receiver is counted for the consumer to persist, for a
// remote receiver the producer persists all it overtook and the consumer's TaskManager counts its own side.
enum class ReceiverLocation : uint8_t { kLocal, kRemote };

// The reading side of a Channel (InputGate, or the network sender of a remote channel).
class ChannelReceiverListener {
 public:
  virtual ~ChannelReceiverListener() = default;
  // The receiver queue of input channel `channel_index` became non-empty, or got a priority event at its head.
  virtual void on_channel_available(int32_t channel_index, bool priority) = 0;
  // An event that may be promoted from `at_ms` (wall clock, Buffer::promote_at_ms) was queued.
  virtual void note_promotion_deadline(int64_t at_ms) = 0;
  // The sender cancelled (Channel::cancel): what it had not yet delivered is dropped and nothing follows.
  virtual void on_sender_cancelled(int32_t channel_index) = 0;
};

// The writing side's wake-ups for a sender that is not a task thread (the network receiver of a remote
// channel). A ResultPartition uses its task's TaskNotifier instead, which is told when space frees up.
class ChannelSenderListener {
 public:
  virtual ~ChannelSenderListener() = default;
  // The consumer recycled a data buffer: one credit came back (Flink's ADD_CREDIT for a remote channel).
  virtual void on_credit_returned() = 0;
  // The receiver detached (its gate was destroyed): whatever is sent from now on is dropped.
  virtual void on_receiver_released() = 0;
};

}  // namespace sluice::runtime
