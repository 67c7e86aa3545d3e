#include "runtime/network/input_gate.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace sluice::runtime {

InputGate::InputGate(std::vector<std::shared_ptr<Channel>> channels, TaskNotifier* consumer_notifier)
    : channels_(std::move(channels)),
      notifier_(consumer_notifier),
      ready_(channels_.size() + 1),
      in_ready_(channels_.size(), 0),
      blocked_(channels_.size(), 0),
      finished_(channels_.size(), 0) {
  for (size_t i = 0; i < channels_.size(); ++i) channels_[i]->attach_receiver(this, static_cast<int32_t>(i));
}

InputGate::~InputGate() {
  for (auto& channel : channels_) channel->detach_receiver();
}

std::optional<BufferOrEvent> InputGate::poll_next() {
  for (;;) {
    int32_t index;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ready_.empty()) return std::nullopt;
      index = ready_.pop_front();
      in_ready_[static_cast<size_t>(index)] = 0;
      if (blocked_[static_cast<size_t>(index)]) continue;  // unblock_channel puts it back in line
    }
    Buffer buffer;
    bool more = false;
    bool priority_next = false;
    // Empty despite being in line: it was put in line again while we were polling it. Nothing lost.
    if (!channels_[static_cast<size_t>(index)]->poll(&buffer, &more, &priority_next)) continue;
    if (more) requeue(index, priority_next);

    if (!buffer.is_event()) {
      buffer.channel_index = index;
      bytes_in_.store(bytes_in_.load(std::memory_order_relaxed) + static_cast<int64_t>(buffer.bytes.size()),
                      std::memory_order_relaxed);
      buffers_in_.store(buffers_in_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return BufferOrEvent{index, std::move(buffer)};
    }
    return decode_polled_event(index, std::move(buffer));
  }
}

BufferOrEvent InputGate::decode_polled_event(int32_t index, Buffer&& buffer) {
  Result<RuntimeEvent> event = decode_event(buffer);
  if (!event.is_ok()) {
    // Event buffers are encoded by this process and never leave it: a bad one is a bug, not bad input.
    std::fprintf(stderr, "InputGate: channel %d: %s\n", index, event.status().to_string().c_str());
    std::abort();
  }
  if (event->type == EventType::kEndOfPartition && !finished_[static_cast<size_t>(index)]) {
    finished_[static_cast<size_t>(index)] = 1;
    ++num_finished_;
  }
  BufferOrEvent out{index, std::move(event).value()};
  out.overtaken_buffers = buffer.overtaken_buffers;
  return out;
}

std::optional<BufferOrEvent> InputGate::poll_priority_event() {
  int32_t index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ready_.empty()) return std::nullopt;
    index = ready_.front();
    if (blocked_[static_cast<size_t>(index)]) return std::nullopt;
  }
  Buffer buffer;
  bool more = false;
  bool priority_next = false;
  if (!channels_[static_cast<size_t>(index)]->poll_priority(&buffer, &more, &priority_next)) return std::nullopt;
  {
    // Out of line (wherever it is now), then back in line if it still has something.
    std::lock_guard<std::mutex> lock(mu_);
    if (in_ready_[static_cast<size_t>(index)]) {
      for (size_t pos = 0; pos < ready_.size(); ++pos) {
        if (ready_[pos] != index) continue;
        for (size_t k = pos; k > 0; --k) std::swap(ready_[k], ready_[k - 1]);
        ready_.pop_front();
        break;
      }
      in_ready_[static_cast<size_t>(index)] = 0;
    }
  }
  // Not requeue(more): data that arrived while the channel was still marked in line did not put it in line.
  (void)more;
  (void)priority_next;
  channels_[static_cast<size_t>(index)]->announce_if_available();
  return decode_polled_event(index, std::move(buffer));
}

void InputGate::promote_due_events(int64_t now_ms) {
  // Reset first: a deadline noted while we scan stays noted (and a channel's own scan sees what was queued).
  next_promotion_ms_.store(INT64_MAX, std::memory_order_release);
  for (auto& channel : channels_) {
    const int64_t next = channel->promote_due_events(now_ms);
    if (next != INT64_MAX) note_promotion_deadline(next);
  }
}

void InputGate::note_promotion_deadline(int64_t at_ms) {
  int64_t current = next_promotion_ms_.load(std::memory_order_relaxed);
  while (at_ms < current &&
         !next_promotion_ms_.compare_exchange_weak(current, at_ms, std::memory_order_acq_rel)) {
  }
}

void InputGate::recycle(Buffer&& buffer) {
  if (buffer.is_event() || buffer.channel_index < 0 || buffer.channel_index >= num_channels()) return;
  channels_[static_cast<size_t>(buffer.channel_index)]->recycle(std::move(buffer.bytes));
}

void InputGate::block_channel(int32_t channel_index) {
  std::lock_guard<std::mutex> lock(mu_);
  blocked_[static_cast<size_t>(channel_index)] = 1;
}

void InputGate::unblock_channel(int32_t channel_index) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!blocked_[static_cast<size_t>(channel_index)]) return;
    blocked_[static_cast<size_t>(channel_index)] = 0;
  }
  // Data that arrived while blocked was not put in line; the channel announces it again.
  channels_[static_cast<size_t>(channel_index)]->announce_if_available();
}

void InputGate::unblock_all() {
  for (int32_t i = 0; i < num_channels(); ++i) unblock_channel(i);
}

bool InputGate::is_channel_blocked(int32_t channel_index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocked_[static_cast<size_t>(channel_index)] != 0;
}

void InputGate::on_channel_available(int32_t channel_index, bool priority) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (blocked_[static_cast<size_t>(channel_index)]) return;
    enqueue_locked(channel_index, priority);
  }
  if (notifier_ != nullptr) notifier_->notify();
}

void InputGate::requeue(int32_t channel_index, bool priority) {
  std::lock_guard<std::mutex> lock(mu_);
  if (blocked_[static_cast<size_t>(channel_index)]) return;
  enqueue_locked(channel_index, priority);
}

void InputGate::enqueue_locked(int32_t channel_index, bool priority) {
  const size_t i = static_cast<size_t>(channel_index);
  if (!in_ready_[i]) {
    in_ready_[i] = 1;
    if (priority) {
      ready_.push_front(channel_index);
    } else {
      ready_.push_back(channel_index);
    }
    return;
  }
  if (!priority) return;
  // Already in line: move it to the front (rare: priority events only).
  for (size_t pos = 0; pos < ready_.size(); ++pos) {
    if (ready_[pos] != channel_index) continue;
    for (size_t k = pos; k > 0; --k) std::swap(ready_[k], ready_[k - 1]);
    break;
  }
}

}  // namespace sluice::runtime
