// Channel: one subpartition of a ResultPartition connected to one input channel of an InputGate, in-process.
//
// A channel has two queues under one small mutex (taken per buffer, never per record):
//   sender queue   - closed buffers awaiting credit. Together with the buffer the producer is filling, it holds
//                    at most max_buffers_per_channel data buffers; the producer blocks before taking more.
//   receiver queue - buffers delivered to the consumer, not yet polled. A data buffer holds one credit from
//                    the moment it moves here until the consumer recycles it; the receiver side holds at most
//                    credits_per_channel data buffers (queued + polled-not-recycled).
// A data buffer moves from the sender queue to the receiver queue as soon as a credit is free: on enqueue,
// or when the consumer recycles a buffer (which also notifies the producer that space freed up). Events need
// no credit (as in Flink): they move as soon as no data is ahead of them. Priority events go straight to the
// head of the receiver queue (behind earlier priority events), overtaking all queued data.
//
// Hence at most credits_per_channel + max_buffers_per_channel data buffers are in flight per channel
// (README.md in this folder).
//
// Lifecycle: created by the ResultPartition (which attaches as sender), shared with the InputGate (which
// attaches as receiver). A remote channel is two Channels joined by TCP (tcp/ in this folder): the network
// sender attaches as the receiver of the producer's Channel (ReceiverLocation::kRemote), the network receiver
// as the sender of the consumer's Channel (through a ChannelSenderListener). Detaching the receiver (the gate is destroyed) drops queued data and makes the
// sender drop whatever it emits from then on; cancel() does the same from the sender's side.
// Thread-safety: every method is safe from any thread, but the sender-side methods are meant for the
// producer thread and the receiver-side ones for the consumer thread (one of each).
// Lock order: channel mutex, then the listener's (the gate's, or a network connection's), then a notifier's.
#pragma once

#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/network/buffer.h"
#include "runtime/network/channel_listener.h"
#include "runtime/network/network_config.h"
#include "runtime/network/ring_queue.h"
#include "runtime/network/task_notifier.h"
#include "sluice/core/clock.h"

namespace sluice::runtime {

class Channel {
 public:
  explicit Channel(const NetworkConfig& config);
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  const NetworkConfig& config() const { return config_; }

  // ---- sender side (the ResultPartition, on the producer thread) ----

  // `producer_notifier` is told when space frees up; `unavailable_subpartitions` counts the partition's
  // subpartitions whose next buffer boundary could block (see ResultPartition::is_available).
  void attach_sender(TaskNotifier* producer_notifier, std::atomic<int32_t>* unavailable_subpartitions);
  // A sender that is not a task (the network receiver of a remote channel): told of every recycled data
  // buffer and of the receiver going away (at once if it already went), instead of a notifier.
  void attach_sender(ChannelSenderListener* listener);
  void detach_sender();

  // Hands out memory for the next buffer to fill, resized to buffer_size_bytes (recycled memory when there
  // is some). Blocks while the sender already holds max_buffers_per_channel buffers, adding the time blocked
  // to *blocked_ns (measured with `clock`). Returns false, with nothing handed out, once the channel is
  // cancelled or its receiver is gone: the caller drops the data.
  bool acquire_buffer(std::vector<uint8_t>* bytes, int64_t* blocked_ns, const Clock& clock);

  // Enqueues a closed buffer. A data buffer must be the one obtained from acquire_buffer (it stops being
  // "the buffer being filled"); an event buffer may come at any time and never blocks.
  void enqueue_buffer(Buffer&& buffer);

  // Puts an event buffer at the head of the receiver queue, behind earlier priority events only (an unaligned
  // checkpoint barrier). Its overtaken_buffers is set to the data buffers it overtook in the receiver queue:
  // the consumer persists those as input channel state. Copies of the data buffers it overtook in the sender
  // queue are appended to *overtaken_sender_data when given: the producer persists those as output channel
  // state. Everything overtaken is still delivered, in order, after the event.
  // With a remote receiver the consumer's TaskManager counts what the event overtakes there, so here the data
  // of both queues is copied to *overtaken_sender_data and overtaken_buffers is 0.
  void enqueue_priority_event(Buffer&& event, std::vector<Buffer>* overtaken_sender_data = nullptr);

  // Moves every queued event whose promote_at_ms is due (<= now_ms) to the head of the receiver queue, behind
  // earlier priority events (an aligned barrier whose alignment timed out). Unlike enqueue_priority_event,
  // its overtaken_buffers counts the data buffers ahead of it on both sides: the producer's snapshot is already
  // taken, so the consumer persists them all. Returns the earliest promote_at_ms still waiting, or INT64_MAX.
  int64_t promote_due_events(int64_t now_ms);

  // Gives back memory from acquire_buffer that will carry nothing (the partition finished or was cancelled).
  void return_unused(std::vector<uint8_t>&& bytes);

  // Wakes a blocked acquire_buffer; from now on the sender side drops everything.
  void cancel();

  // ---- receiver side (the InputGate, on the consumer thread) ----

  // Told at once if the sender already cancelled.
  void attach_receiver(ChannelReceiverListener* receiver, int32_t channel_index,
                       ReceiverLocation location = ReceiverLocation::kLocal);
  void detach_receiver();

  // Takes the head of the receiver queue. *more: the queue still holds something; *priority_next: the new
  // head is a priority event. False if the queue is empty.
  bool poll(Buffer* out, bool* more, bool* priority_next);

  // Like poll, but only when the head of the receiver queue is a priority event.
  bool poll_priority(Buffer* out, bool* more, bool* priority_next);

  // Copies of the first `count` data buffers still queued (receiver queue, then sender queue), appended to
  // *out: what a priority event just polled overtook (its overtaken_buffers). They stay queued.
  void copy_queued_data(int32_t count, std::vector<Buffer>* out) const;

  // Returns a polled data buffer's memory, releasing its credit: queued sender buffers move over and the
  // producer is notified.
  void recycle(std::vector<uint8_t>&& bytes);

  // Tells the attached gate about queued buffers again (after the gate unblocked this channel).
  void announce_if_available();

  // ---- the network's two halves of a remote channel (tcp/) ----

  // Network sender: takes the head of the receiver queue if it is an event, or if it is data and
  // `data_allowed` (the consumer granted credit). *priority: it was a priority event. False, with nothing
  // taken, otherwise.
  bool poll_sendable(bool data_allowed, Buffer* out, bool* priority);

  // Network receiver: memory for a received data buffer (recycled memory when there is some, else empty).
  std::vector<uint8_t> take_free_memory();

  // ---- introspection (metrics, tests) ----
  struct Stats {
    int32_t sender_queued_buffers = 0;    // data buffers awaiting credit (excludes the one being filled)
    bool sender_filling = false;          // the producer holds a buffer being filled
    int32_t receiver_queued_buffers = 0;  // data and event buffers delivered, not yet polled
    int32_t receiver_held_buffers = 0;    // credits in use: data buffers queued or polled-not-recycled
    bool sender_blocked = false;          // the producer waits in acquire_buffer
  };
  Stats stats() const;

 private:
  bool dropping_locked() const { return cancelled_ || receiver_released_; }
  // Moves sender buffers over while credit allows; tells the gate if the receiver queue became non-empty.
  void move_to_receiver_locked();
  void update_availability_locked();
  void wake_sender_locked();
  void keep_memory_locked(std::vector<uint8_t>&& bytes);
  void insert_priority_locked(Buffer&& event);
  // Appends copies of up to `count` data buffers of `queue` to *out; returns how many more were wanted.
  static int32_t copy_data_locked(const RingQueue<Buffer>& queue, int32_t count, std::vector<Buffer>* out);

  const NetworkConfig config_;
  mutable std::mutex mu_;
  std::condition_variable sender_cv_;  // acquire_buffer waits here

  RingQueue<Buffer> sender_queue_;
  int32_t sender_queued_data_ = 0;
  bool sender_filling_ = false;
  bool sender_waiting_ = false;
  RingQueue<Buffer> receiver_queue_;
  int32_t receiver_priority_ = 0;  // priority events at the head of receiver_queue_
  int32_t receiver_held_ = 0;
  std::vector<std::vector<uint8_t>> free_memory_;

  bool cancelled_ = false;
  bool receiver_released_ = false;
  bool unavailable_ = false;

  TaskNotifier* producer_notifier_ = nullptr;
  ChannelSenderListener* sender_listener_ = nullptr;
  std::atomic<int32_t>* unavailable_subpartitions_ = nullptr;
  ChannelReceiverListener* gate_ = nullptr;
  int32_t gate_index_ = -1;
  ReceiverLocation receiver_location_ = ReceiverLocation::kLocal;
};

}  // namespace sluice::runtime
