#include "runtime/network/channel.h"

#include <algorithm>
#include <cstdint>
#include <utility>


namespace sluice::runtime {

namespace {
size_t max_in_flight(const NetworkConfig& c) {
  return static_cast<size_t>(c.credits_per_channel) + static_cast<size_t>(c.max_buffers_per_channel);
}
}  // namespace

Channel::Channel(const NetworkConfig& config)
    : config_(config),
      sender_queue_(static_cast<size_t>(config.max_buffers_per_channel) + 4),
      receiver_queue_(static_cast<size_t>(config.credits_per_channel) + 4) {
  free_memory_.reserve(max_in_flight(config));
}

Channel::~Channel() = default;

// ---- sender side ----

void Channel::attach_sender(TaskNotifier* producer_notifier, std::atomic<int32_t>* unavailable_subpartitions) {
  std::lock_guard<std::mutex> lock(mu_);
  producer_notifier_ = producer_notifier;
  unavailable_subpartitions_ = unavailable_subpartitions;
  if (unavailable_ && unavailable_subpartitions_ != nullptr) unavailable_subpartitions_->fetch_add(1);
}

void Channel::attach_sender(ChannelSenderListener* listener) {
  std::lock_guard<std::mutex> lock(mu_);
  sender_listener_ = listener;
  if (receiver_released_) listener->on_receiver_released();  // the gate went away before the network came
}

void Channel::detach_sender() {
  std::lock_guard<std::mutex> lock(mu_);
  if (unavailable_ && unavailable_subpartitions_ != nullptr) unavailable_subpartitions_->fetch_sub(1);
  producer_notifier_ = nullptr;
  sender_listener_ = nullptr;
  unavailable_subpartitions_ = nullptr;
  sender_filling_ = false;  // the partition's buffer being filled dies with it
  update_availability_locked();
}

bool Channel::acquire_buffer(std::vector<uint8_t>* bytes, int64_t* blocked_ns, const Clock& clock) {
  std::unique_lock<std::mutex> lock(mu_);
  if (dropping_locked()) return false;
  const int32_t max = config_.max_buffers_per_channel;
  if (sender_queued_data_ >= max) {
    const int64_t start_ns = clock.monotonic_ns();
    sender_waiting_ = true;
    sender_cv_.wait(lock, [&] { return dropping_locked() || sender_queued_data_ < max; });
    sender_waiting_ = false;
    *blocked_ns += clock.monotonic_ns() - start_ns;
    if (dropping_locked()) return false;
  }
  sender_filling_ = true;
  update_availability_locked();
  if (!free_memory_.empty()) {
    *bytes = std::move(free_memory_.back());
    free_memory_.pop_back();
  }
  lock.unlock();
  // Outside the lock: allocates only while the channel's memory is still growing to its bound (or after an
  // oversized buffer), and otherwise zero-fills just the unused tail of a recycled buffer.
  bytes->resize(static_cast<size_t>(config_.buffer_size_bytes));
  return true;
}

void Channel::enqueue_buffer(Buffer&& buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool data = !buffer.is_event();
  if (data) sender_filling_ = false;
  if (dropping_locked()) {
    if (data) keep_memory_locked(std::move(buffer.bytes));
    update_availability_locked();
    return;
  }
  const int64_t promote_at_ms = buffer.promote_at_ms;
  sender_queue_.push_back(std::move(buffer));
  if (data) ++sender_queued_data_;
  if (promote_at_ms != 0 && gate_ != nullptr) gate_->note_promotion_deadline(promote_at_ms);
  move_to_receiver_locked();
  update_availability_locked();
}

void Channel::enqueue_priority_event(Buffer&& event, std::vector<Buffer>* overtaken_sender_data) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dropping_locked()) return;
  // Remote receiver: the data in our receiver queue has not left this TaskManager either, so the producer
  // persists it too; the consumer's side counts only what reached it before the event.
  const bool remote = receiver_location_ == ReceiverLocation::kRemote;
  int32_t overtaken = 0;
  if (remote) {
    if (overtaken_sender_data != nullptr) copy_data_locked(receiver_queue_, INT32_MAX, overtaken_sender_data);
  } else {
    for (size_t i = static_cast<size_t>(receiver_priority_); i < receiver_queue_.size(); ++i) {
      if (!receiver_queue_[i].is_event()) ++overtaken;
    }
  }
  // The unaligned checkpoint's copies; the originals still go to the consumer.
  if (overtaken_sender_data != nullptr) copy_data_locked(sender_queue_, INT32_MAX, overtaken_sender_data);
  event.overtaken_buffers = overtaken;
  event.promote_at_ms = 0;
  insert_priority_locked(std::move(event));
}

int64_t Channel::promote_due_events(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t next = INT64_MAX;
  if (dropping_locked()) return next;
  // Receiver queue first (it is ahead of the sender queue); data buffers ahead of the event are counted.
  // A due event moves to the priority head of the receiver queue: scanning the receiver queue, that insertion
  // lands ahead of position i, so the element now at i has already been seen.
  int32_t data_ahead = 0;
  auto promote_in = [&](RingQueue<Buffer>& queue, size_t from, bool inserts_ahead_of_scan) {
    for (size_t i = from; i < queue.size();) {
      Buffer& b = queue[i];
      if (!b.is_event()) {
        ++data_ahead;
      } else if (b.promote_at_ms != 0) {
        if (b.promote_at_ms > now_ms) {
          next = std::min(next, b.promote_at_ms);
        } else {
          Buffer event = queue.erase_at(i);
          event.overtaken_buffers = data_ahead;
          event.promote_at_ms = 0;
          insert_priority_locked(std::move(event));
          if (inserts_ahead_of_scan) ++i;
          continue;
        }
      }
      ++i;
    }
  };
  promote_in(receiver_queue_, static_cast<size_t>(receiver_priority_), /*inserts_ahead_of_scan=*/true);
  promote_in(sender_queue_, 0, /*inserts_ahead_of_scan=*/false);
  return next;
}

void Channel::insert_priority_locked(Buffer&& event) {
  receiver_queue_.insert_near_front(static_cast<size_t>(receiver_priority_), std::move(event));
  ++receiver_priority_;
  if (gate_ != nullptr) gate_->on_channel_available(gate_index_, /*priority=*/true);
}

void Channel::return_unused(std::vector<uint8_t>&& bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  sender_filling_ = false;
  keep_memory_locked(std::move(bytes));
  update_availability_locked();
}

void Channel::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return;
  cancelled_ = true;
  update_availability_locked();
  sender_cv_.notify_all();
  if (gate_ != nullptr) gate_->on_sender_cancelled(gate_index_);
}

// ---- receiver side ----

void Channel::attach_receiver(ChannelReceiverListener* receiver, int32_t channel_index, ReceiverLocation location) {
  std::lock_guard<std::mutex> lock(mu_);
  gate_ = receiver;
  gate_index_ = channel_index;
  receiver_location_ = location;
  if (cancelled_) gate_->on_sender_cancelled(gate_index_);  // cancelled before the receiver came
  if (!receiver_queue_.empty()) gate_->on_channel_available(gate_index_, receiver_priority_ > 0);
}

void Channel::detach_receiver() {
  std::lock_guard<std::mutex> lock(mu_);
  gate_ = nullptr;
  gate_index_ = -1;
  receiver_released_ = true;
  // Nobody will read what is queued: free it, and let the sender go (it drops from now on).
  sender_queue_.clear();
  receiver_queue_.clear();
  sender_queued_data_ = 0;
  receiver_priority_ = 0;
  receiver_held_ = 0;
  free_memory_.clear();
  update_availability_locked();
  sender_cv_.notify_all();
  if (sender_listener_ != nullptr) sender_listener_->on_receiver_released();
}

bool Channel::poll(Buffer* out, bool* more, bool* priority_next) {
  std::lock_guard<std::mutex> lock(mu_);
  if (receiver_queue_.empty()) return false;
  *out = receiver_queue_.pop_front();
  if (receiver_priority_ > 0) --receiver_priority_;
  *more = !receiver_queue_.empty();
  *priority_next = receiver_priority_ > 0;
  return true;
}

bool Channel::poll_priority(Buffer* out, bool* more, bool* priority_next) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (receiver_priority_ == 0) return false;
  }
  return poll(out, more, priority_next);  // only the consumer thread polls: the head is still that event
}

void Channel::copy_queued_data(int32_t count, std::vector<Buffer>* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  count = copy_data_locked(receiver_queue_, count, out);
  copy_data_locked(sender_queue_, count, out);
}

int32_t Channel::copy_data_locked(const RingQueue<Buffer>& queue, int32_t count, std::vector<Buffer>* out) {
  for (size_t i = 0; i < queue.size() && count > 0; ++i) {
    const Buffer& b = queue[i];
    if (b.is_event()) continue;
    Buffer copy;
    copy.bytes = b.bytes;
    copy.num_records = b.num_records;
    out->push_back(std::move(copy));
    --count;
  }
  return count;
}

void Channel::recycle(std::vector<uint8_t>&& bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (receiver_released_) return;
  if (receiver_held_ > 0) --receiver_held_;
  keep_memory_locked(std::move(bytes));
  move_to_receiver_locked();
  update_availability_locked();
  if (sender_listener_ != nullptr) sender_listener_->on_credit_returned();
}

void Channel::announce_if_available() {
  std::lock_guard<std::mutex> lock(mu_);
  if (gate_ != nullptr && !receiver_queue_.empty()) gate_->on_channel_available(gate_index_, receiver_priority_ > 0);
}

bool Channel::poll_sendable(bool data_allowed, Buffer* out, bool* priority) {
  std::lock_guard<std::mutex> lock(mu_);
  if (receiver_queue_.empty() || (!data_allowed && !receiver_queue_.front().is_event())) return false;
  *out = receiver_queue_.pop_front();
  *priority = receiver_priority_ > 0;
  if (*priority) --receiver_priority_;
  return true;
}

std::vector<uint8_t> Channel::take_free_memory() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_memory_.empty()) return {};
  std::vector<uint8_t> bytes = std::move(free_memory_.back());
  free_memory_.pop_back();
  return bytes;
}

Channel::Stats Channel::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s;
  s.sender_queued_buffers = sender_queued_data_;
  s.sender_filling = sender_filling_;
  s.receiver_queued_buffers = static_cast<int32_t>(receiver_queue_.size());
  s.receiver_held_buffers = receiver_held_;
  s.sender_blocked = sender_waiting_;
  return s;
}

// ---- internals (mu_ held) ----

void Channel::move_to_receiver_locked() {
  const bool was_empty = receiver_queue_.empty();
  bool moved_data = false;
  while (!sender_queue_.empty()) {
    if (!sender_queue_.front().is_event()) {
      if (receiver_held_ >= config_.credits_per_channel) break;  // no credit: data (and what follows) waits
      ++receiver_held_;
      --sender_queued_data_;
      moved_data = true;
    }
    receiver_queue_.push_back(sender_queue_.pop_front());
  }
  if (was_empty && !receiver_queue_.empty() && gate_ != nullptr) {
    gate_->on_channel_available(gate_index_, receiver_priority_ > 0);
  }
  if (moved_data) wake_sender_locked();
}

// A subpartition is unavailable when its next buffer boundary could block: closing the buffer being filled
// (which moves straight to the receiver only if nothing is queued and a credit is free) would leave the
// sender holding max_buffers_per_channel buffers, so taking the next one would wait.
void Channel::update_availability_locked() {
  bool unavailable = false;
  if (!dropping_locked()) {
    int32_t held_after_close = sender_queued_data_ + (sender_filling_ ? 1 : 0);
    if (sender_filling_ && sender_queued_data_ == 0 && receiver_held_ < config_.credits_per_channel) {
      --held_after_close;
    }
    unavailable = held_after_close >= config_.max_buffers_per_channel;
  }
  if (unavailable == unavailable_) return;
  unavailable_ = unavailable;
  if (unavailable_subpartitions_ != nullptr) unavailable_subpartitions_->fetch_add(unavailable ? 1 : -1);
  if (!unavailable && producer_notifier_ != nullptr) producer_notifier_->notify();
}

void Channel::wake_sender_locked() {
  if (sender_waiting_ && sender_queued_data_ < config_.max_buffers_per_channel) sender_cv_.notify_one();
}

void Channel::keep_memory_locked(std::vector<uint8_t>&& bytes) {
  // Only standard-size memory is kept (an oversized record's buffer is freed), and never more than can be in
  // flight, so a channel's memory stays bounded by (credits + max buffers) x buffer_size_bytes.
  if (receiver_released_ || bytes.capacity() != static_cast<size_t>(config_.buffer_size_bytes)) return;
  if (free_memory_.size() >= max_in_flight(config_)) return;
  free_memory_.push_back(std::move(bytes));
}

}  // namespace sluice::runtime
