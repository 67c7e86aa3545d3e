// ResultPartition: a producer subtask's output to one downstream operator, one subpartition (and Channel)
// per consumer subtask.
//
// The caller serializes records (typed code) and hands over bytes; emit_record copies them into the
// subpartition's buffer being filled. Records never span buffers: a record that does not fit in the space
// left closes the buffer (it is enqueued on the channel), and a record larger than buffer_size_bytes goes
// alone into an oversized buffer. Taking a new buffer blocks while the subpartition already holds
// max_buffers_per_channel buffers (the one being filled plus those queued awaiting credit); the time blocked
// is counted as back-pressured time. The task avoids blocking there by checking is_available() before it
// processes its next input, so its mailbox stays responsive under back-pressure.
//
// Partial buffers go out on flush (the buffer timeout), before every event, and on finish().
// The per-record path takes no lock and does no allocation: a bounds check and a memcpy.
//
// Thread-safety: the producer (task) thread calls everything except cancel(), is_available() and the
// counters, which any thread may call. Not movable: channels point at it. The notifier and clock must
// outlive the partition; the channels are shared and may outlive it (queued data stays readable).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/network/buffer.h"
#include "runtime/network/channel.h"
#include "runtime/network/network_config.h"
#include "runtime/network/task_notifier.h"
#include "sluice/core/clock.h"

namespace sluice::runtime {

class ResultPartition {
 public:
  // `config` must be valid (NetworkConfig::validate). `producer_notifier` (may be null) is notified when a
  // subpartition becomes available again. `clock` measures back-pressured time (default: the system clock).
  ResultPartition(int32_t num_subpartitions, const NetworkConfig& config, TaskNotifier* producer_notifier,
                  std::shared_ptr<Clock> clock = nullptr);
  ResultPartition(const ResultPartition&) = delete;
  ResultPartition& operator=(const ResultPartition&) = delete;
  ~ResultPartition();

  int32_t num_subpartitions() const { return static_cast<int32_t>(channels_.size()); }
  const NetworkConfig& config() const { return config_; }
  // The channel of subpartition `subpartition`, to hand to consumer subtask `subpartition`'s InputGate.
  const std::shared_ptr<Channel>& channel(int32_t subpartition) const {
    return channels_[static_cast<size_t>(subpartition)];
  }

  // Copies one serialized record into `subpartition`. May block (see above); after cancel() it returns at
  // once and the record is dropped.
  void emit_record(int32_t subpartition, const uint8_t* bytes, size_t n) {
    Subpartition& sp = subpartitions_[static_cast<size_t>(subpartition)];
    if (sp.filling && n <= sp.bytes.size() - sp.used) {
      if (n != 0) std::memcpy(sp.bytes.data() + sp.used, bytes, n);
      sp.used += n;
      ++sp.num_records;
      return;
    }
    emit_record_slow(subpartition, bytes, n);
  }

  // The record to every subpartition (one copy each).
  void broadcast_record(const uint8_t* bytes, size_t n);

  // Flushes every subpartition's partial buffer, then enqueues the event on every channel. Never blocks.
  void broadcast_event(const RuntimeEvent& event);

  // Puts `event` at the head of `subpartition`'s queue, overtaking all data queued there, and on the
  // receiver side ahead of buffers not yet polled (for unaligned checkpoint barriers). The partial buffer is
  // flushed first, so every record emitted before the event is among what it overtakes. Copies of the data it
  // overtook on the sender side go to *overtaken_output when given (Channel::enqueue_priority_event). Never
  // blocks.
  void enqueue_priority_event(int32_t subpartition, const RuntimeEvent& event,
                              std::vector<Buffer>* overtaken_output = nullptr);

  // Flushes, then enqueues `event` in order on `subpartition`. With promote_at_ms > 0 the consumer may turn it
  // into a priority event from that wall-clock time on (InputGate::promote_due_events: an aligned checkpoint
  // barrier with an alignment timeout). Never blocks.
  void enqueue_event(int32_t subpartition, const RuntimeEvent& event, int64_t promote_at_ms = 0);

  // Enqueues a partial buffer (no-op if empty). flush_all() is what the buffer timeout calls. Never blocks.
  void flush(int32_t subpartition);
  void flush_all();

  // Flushes and sends EndOfPartition on every channel. Nothing may be emitted afterwards.
  void finish();
  bool is_finished() const { return finished_; }

  // True if every subpartition can close its buffer and take another without blocking. When false, the
  // producer notifier is notified once it turns true. Any thread.
  bool is_available() const { return unavailable_subpartitions_.load(std::memory_order_acquire) == 0; }

  // Wakes a blocked emit and makes every later emit drop its data (job cancelled or failed). Any thread.
  void cancel();
  bool is_cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // Data handed to channels (partial buffers count when flushed); events are not counted. Any thread.
  int64_t bytes_out() const { return bytes_out_.load(std::memory_order_relaxed); }
  int64_t buffers_out() const { return buffers_out_.load(std::memory_order_relaxed); }
  int64_t records_out() const { return records_out_.load(std::memory_order_relaxed); }
  // Total time emit_record spent blocked waiting for buffer space, in nanoseconds. Any thread.
  int64_t back_pressured_time_ns() const { return back_pressured_ns_.load(std::memory_order_relaxed); }

 private:
  struct Subpartition {
    std::vector<uint8_t> bytes;  // the buffer being filled; size() is its capacity while filling
    size_t used = 0;
    int32_t num_records = 0;
    bool filling = false;
  };

  void emit_record_slow(int32_t subpartition, const uint8_t* bytes, size_t n);
  bool start_buffer(Subpartition& sp, Channel& channel);
  void close_buffer(Subpartition& sp, Channel& channel);
  static void add(std::atomic<int64_t>& counter, int64_t delta) {  // single writer: no RMW needed
    counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }

  const NetworkConfig config_;
  const std::shared_ptr<Clock> clock_;
  std::vector<std::shared_ptr<Channel>> channels_;
  std::vector<Subpartition> subpartitions_;
  bool finished_ = false;
  std::atomic<bool> cancelled_{false};
  std::atomic<int32_t> unavailable_subpartitions_{0};
  std::atomic<int64_t> bytes_out_{0};
  std::atomic<int64_t> buffers_out_{0};
  std::atomic<int64_t> records_out_{0};
  std::atomic<int64_t> back_pressured_ns_{0};
};

}  // namespace sluice::runtime
