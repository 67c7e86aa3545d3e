// InputGate: a consumer subtask's input from one upstream operator, one input channel per producer subtask.
//
// poll_next() never blocks: it returns the next buffer or event from a channel with data, round-robin
// across channels (a channel goes to the back of the line after each buffer; a channel that received a
// priority event goes to the front). When it returns nothing, the task waits on its TaskNotifier, which
// every channel notifies when data arrives on an idle channel.
//
// Data buffers must be handed back through recycle() once their records are read: that releases the
// channel's credit, which is what lets the producer send more (back-pressure). Events need no recycling.
//
// Blocking a channel (barrier alignment) makes poll_next skip it; the channel keeps receiving until its
// credits are used up, then its producer backs up. The gate is finished when every channel's
// EndOfPartition has been polled.
//
// Thread-safety: one consumer thread calls every method except the counters (any thread) and
// on_channel_available (producers, through their Channel). Not movable: channels point at it.
// The notifier must outlive the gate.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/network/buffer.h"
#include "runtime/network/channel.h"
#include "runtime/network/channel_listener.h"
#include "runtime/network/ring_queue.h"
#include "runtime/network/task_notifier.h"

namespace sluice::runtime {

class InputGate final : public ChannelReceiverListener {
 public:
  // `channels[i]` is input channel i (ResultPartition::channel(k) of producer i for consumer subtask k).
  InputGate(std::vector<std::shared_ptr<Channel>> channels, TaskNotifier* consumer_notifier);
  InputGate(const InputGate&) = delete;
  InputGate& operator=(const InputGate&) = delete;
  // Detaches from every channel: what is still queued is dropped and the producers stop blocking.
  ~InputGate() override;

  // The next buffer or event from some channel with data, or nothing. A data buffer carries its channel
  // index (buffer().channel_index) and must be recycled; an event is decoded.
  std::optional<BufferOrEvent> poll_next();

  // The next priority event, if the channel first in line has one at its head (channels with priority events
  // are put first in line); nothing otherwise. Lets a task take unaligned barriers while it reads no data
  // (back-pressured output). Never blocks.
  std::optional<BufferOrEvent> poll_priority_event();

  // Copies of the `count` data buffers a priority event just polled from `channel_index` overtook
  // (BufferOrEvent::overtaken_buffers): the unaligned checkpoint's input channel state of that channel. They
  // are still delivered as usual.
  void copy_overtaken(int32_t channel_index, int32_t count, std::vector<Buffer>* out) const {
    channels_[static_cast<size_t>(channel_index)]->copy_queued_data(count, out);
  }

  // Returns a data buffer from poll_next: its memory goes back to its channel and its credit is released.
  void recycle(Buffer&& buffer);

  // Turns queued events whose promote_at_ms has passed into priority events on every channel
  // (Channel::promote_due_events; an aligned barrier whose alignment timed out overtakes the data ahead of it).
  // Consumer thread. Call it when now_ms >= next_promotion_ms().
  void promote_due_events(int64_t now_ms);
  // The earliest promote_at_ms of an event queued on some channel, or INT64_MAX (one atomic load; may be
  // early, never late).
  int64_t next_promotion_ms() const { return next_promotion_ms_.load(std::memory_order_acquire); }

  void block_channel(int32_t channel_index);
  void unblock_channel(int32_t channel_index);
  void unblock_all();
  bool is_channel_blocked(int32_t channel_index) const;

  // Every channel delivered EndOfPartition and it was polled (true at once for a gate with no channels).
  bool is_finished() const { return num_finished_ == num_channels(); }
  bool is_channel_finished(int32_t channel_index) const { return finished_[static_cast<size_t>(channel_index)]; }
  int32_t num_channels() const { return static_cast<int32_t>(channels_.size()); }
  const std::shared_ptr<Channel>& channel(int32_t channel_index) const {
    return channels_[static_cast<size_t>(channel_index)];
  }

  // Data buffers polled and their bytes (events not counted). Any thread.
  int64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }
  int64_t buffers_in() const { return buffers_in_.load(std::memory_order_relaxed); }

 private:
  // ChannelReceiverListener, called by a channel with its mutex held. When its receiver queue became
  // non-empty or got a priority event: puts the channel in line (at the front for priority) unless blocked,
  // and wakes the consumer.
  void on_channel_available(int32_t channel_index, bool priority) override;
  // An event that may be promoted at `at_ms` was queued.
  void note_promotion_deadline(int64_t at_ms) override;
  // Nothing to do in the gate: the task learns of a cancelled producer through the job's failover.
  void on_sender_cancelled(int32_t /*channel_index*/) override {}
  // Puts a channel that still has data back in line (consumer thread, after polling it).
  void requeue(int32_t channel_index, bool priority);
  void enqueue_locked(int32_t channel_index, bool priority);
  BufferOrEvent decode_polled_event(int32_t index, Buffer&& buffer);

  const std::vector<std::shared_ptr<Channel>> channels_;
  TaskNotifier* const notifier_;

  mutable std::mutex mu_;            // guards ready_, in_ready_, blocked_
  RingQueue<int32_t> ready_;         // channels with data, each at most once, in polling order
  std::vector<uint8_t> in_ready_;    // channel index -> in ready_
  std::vector<uint8_t> blocked_;     // channel index -> blocked

  std::vector<uint8_t> finished_;  // consumer thread only
  int32_t num_finished_ = 0;
  std::atomic<int64_t> next_promotion_ms_{INT64_MAX};
  std::atomic<int64_t> bytes_in_{0};
  std::atomic<int64_t> buffers_in_{0};
};

}  // namespace sluice::runtime
