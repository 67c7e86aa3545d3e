#include "runtime/network/result_partition.h"

#include <cassert>
#include <utility>

namespace sluice::runtime {

ResultPartition::ResultPartition(int32_t num_subpartitions, const NetworkConfig& config,
                                 TaskNotifier* producer_notifier, std::shared_ptr<Clock> clock)
    : config_(config),
      clock_(clock != nullptr ? std::move(clock) : SystemClock::shared()),
      subpartitions_(static_cast<size_t>(num_subpartitions)) {
  assert(config.validate().is_ok());
  channels_.reserve(static_cast<size_t>(num_subpartitions));
  for (int32_t i = 0; i < num_subpartitions; ++i) {
    channels_.push_back(std::make_shared<Channel>(config_));
    channels_.back()->attach_sender(producer_notifier, &unavailable_subpartitions_);
  }
}

ResultPartition::~ResultPartition() {
  for (auto& channel : channels_) channel->detach_sender();
}

void ResultPartition::emit_record_slow(int32_t subpartition, const uint8_t* bytes, size_t n) {
  assert(!finished_ && "emit_record after finish()");
  Subpartition& sp = subpartitions_[static_cast<size_t>(subpartition)];
  Channel& channel = *channels_[static_cast<size_t>(subpartition)];
  if (sp.filling && sp.num_records > 0) close_buffer(sp, channel);  // the record does not fit in what is left
  if (!sp.filling && !start_buffer(sp, channel)) return;     // cancelled or no receiver: drop
  const bool oversized = n > sp.bytes.size();
  if (oversized) sp.bytes.resize(n);  // allocates; the channel frees this memory after use
  if (n != 0) std::memcpy(sp.bytes.data(), bytes, n);
  sp.used = n;
  sp.num_records = 1;
  if (oversized) close_buffer(sp, channel);  // it travels alone
}

bool ResultPartition::start_buffer(Subpartition& sp, Channel& channel) {
  int64_t blocked_ns = 0;
  const bool ok = channel.acquire_buffer(&sp.bytes, &blocked_ns, *clock_);
  if (blocked_ns != 0) add(back_pressured_ns_, blocked_ns);
  sp.filling = ok;
  sp.used = 0;
  sp.num_records = 0;
  return ok;
}

void ResultPartition::close_buffer(Subpartition& sp, Channel& channel) {
  Buffer buffer;
  buffer.kind = Buffer::Kind::kData;
  buffer.bytes = std::move(sp.bytes);
  buffer.bytes.resize(sp.used);  // shrinking keeps the memory
  buffer.num_records = sp.num_records;
  add(bytes_out_, static_cast<int64_t>(sp.used));
  add(buffers_out_, 1);
  add(records_out_, sp.num_records);
  sp.bytes = {};
  sp.used = 0;
  sp.num_records = 0;
  sp.filling = false;
  channel.enqueue_buffer(std::move(buffer));
}

void ResultPartition::broadcast_record(const uint8_t* bytes, size_t n) {
  for (int32_t i = 0; i < num_subpartitions(); ++i) emit_record(i, bytes, n);
}

void ResultPartition::flush(int32_t subpartition) {
  Subpartition& sp = subpartitions_[static_cast<size_t>(subpartition)];
  if (sp.filling && sp.num_records > 0) close_buffer(sp, *channels_[static_cast<size_t>(subpartition)]);
}

void ResultPartition::flush_all() {
  for (int32_t i = 0; i < num_subpartitions(); ++i) flush(i);
}

void ResultPartition::broadcast_event(const RuntimeEvent& event) {
  const Buffer encoded = encode_event(event);
  for (int32_t i = 0; i < num_subpartitions(); ++i) {
    flush(i);
    Buffer copy;
    copy.kind = Buffer::Kind::kEvent;
    copy.bytes = encoded.bytes;
    channels_[static_cast<size_t>(i)]->enqueue_buffer(std::move(copy));
  }
}

void ResultPartition::enqueue_priority_event(int32_t subpartition, const RuntimeEvent& event,
                                             std::vector<Buffer>* overtaken_output) {
  flush(subpartition);
  channels_[static_cast<size_t>(subpartition)]->enqueue_priority_event(encode_event(event), overtaken_output);
}

void ResultPartition::enqueue_event(int32_t subpartition, const RuntimeEvent& event, int64_t promote_at_ms) {
  flush(subpartition);
  Buffer encoded = encode_event(event);
  encoded.promote_at_ms = promote_at_ms;
  channels_[static_cast<size_t>(subpartition)]->enqueue_buffer(std::move(encoded));
}

void ResultPartition::finish() {
  if (finished_) return;
  broadcast_event(RuntimeEvent::end_of_partition());
  for (size_t i = 0; i < subpartitions_.size(); ++i) {
    Subpartition& sp = subpartitions_[i];
    if (!sp.filling) continue;
    channels_[i]->return_unused(std::move(sp.bytes));
    sp = Subpartition{};
  }
  finished_ = true;
}

void ResultPartition::cancel() {
  cancelled_.store(true, std::memory_order_release);
  for (auto& channel : channels_) channel->cancel();
}

}  // namespace sluice::runtime
