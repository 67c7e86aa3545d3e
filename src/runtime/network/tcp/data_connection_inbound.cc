// DataConnection, inbound: reading frames off the socket and acting on them (the other half is in
// data_connection.cc).
#include <climits>
#include <cstring>

#include "runtime/network/tcp/data_connection.h"

namespace sluice::runtime::tcp {

namespace {
// A tail at least this long that is not yet in the read buffer is read straight into its own memory.
constexpr size_t kDirectTailBytes = 4096;
// Credits or closes kept for outputs the peer announced before they were registered here.
constexpr size_t kMaxPendingChannels = 1 << 16;
}  // namespace

// ---- reading ----

void DataConnection::start_read() {
  if (state_ == State::kClosed) return;
  if (rstart_ == rend_) {
    rstart_ = rend_ = 0;
  } else if (rstart_ > 0) {
    std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
    rend_ -= rstart_;
    rstart_ = 0;
  }
  socket_.async_read_some(asio::buffer(rbuf_.data() + rend_, rbuf_.size() - rend_),
                          [self = shared_from_this()](const asio::error_code& error, size_t n) {
                            self->on_read(error, n);
                          });
}

void DataConnection::on_read(const asio::error_code& error, size_t n) {
  if (state_ == State::kClosed) return;
  if (error) {
    fail(Status::io_error(error == asio::error::eof ? std::string("the peer closed the connection")
                                                    : "reading from the socket: " + error.message()));
    return;
  }
  rend_ += n;
  process_read_buffer();
}

void DataConnection::process_read_buffer() {
  while (state_ != State::kClosed) {
    const size_t have = rend_ - rstart_;
    if (have < kFrameHeaderBytes) break;
    const uint8_t* p = rbuf_.data() + rstart_;
    Result<FrameHead> decoded = decode_frame_header(p, options_.limits);
    if (!decoded.is_ok()) return fail(decoded.status());
    FrameHead head = std::move(decoded).value();
    const size_t head_bytes = frame_head_bytes(head.type);
    if (have < head_bytes) break;
    Status fixed = decode_frame_fixed(p + kFrameHeaderBytes, &head);
    if (!fixed.is_ok()) return fail(fixed);
    const size_t present = have - head_bytes;
    if (present >= head.tail_bytes) {
      rstart_ += head_bytes + head.tail_bytes;
      Status st = dispatch(head, p + head_bytes, nullptr);
      if (!st.is_ok()) return fail(st);
      continue;
    }
    if (head.tail_bytes < kDirectTailBytes && head_bytes + head.tail_bytes <= rbuf_.size()) break;
    // A long tail: read the rest straight into the memory it ends up in.
    tail_memory_.clear();
    if (head.type == FrameType::kData && state_ == State::kOpen) {
      Result<std::shared_ptr<RemoteInput>> input = check_data(head);
      if (!input.is_ok()) return fail(input.status());
      tail_input_ = std::move(input).value();
      if (tail_input_ != nullptr) tail_memory_ = tail_input_->channel().take_free_memory();
    }
    tail_memory_.resize(head.tail_bytes);
    std::memcpy(tail_memory_.data(), p + head_bytes, present);
    rstart_ = rend_ = 0;
    tail_head_ = head;
    asio::async_read(socket_, asio::buffer(tail_memory_.data() + present, head.tail_bytes - present),
                     [self = shared_from_this()](const asio::error_code& error, size_t) { self->on_tail_read(error); });
    return;
  }
  start_read();
}

void DataConnection::on_tail_read(const asio::error_code& error) {
  tail_input_.reset();
  if (state_ == State::kClosed) return;
  if (error) {
    fail(Status::io_error("reading from the socket: " + error.message()));
    return;
  }
  Status st = dispatch(tail_head_, tail_memory_.data(), &tail_memory_);
  if (!st.is_ok()) return fail(st);
  start_read();
}

Status DataConnection::dispatch(const FrameHead& head, const uint8_t* tail, std::vector<uint8_t>* tail_memory) {
  if (state_ == State::kHandshake) {
    if (head.type != FrameType::kHello) {
      return Status::corruption(std::string("expected the peer's HELLO first, got ") + frame_type_name(head.type));
    }
    return on_hello(head);
  }
  switch (head.type) {
    case FrameType::kHello: return Status::corruption("a second HELLO on an open connection");
    case FrameType::kData: return on_data(head, tail, tail_memory);
    case FrameType::kEvent: return on_event(head, tail);
    case FrameType::kAddCredit: return on_add_credit(head);
    case FrameType::kCloseChannel: on_close_channel(head); return Status::ok();
    case FrameType::kCancelChannel: return on_cancel_channel(head);
    case FrameType::kError:
      return Status::io_error("the peer reported an error: " +
                              std::string(reinterpret_cast<const char*>(tail), head.tail_bytes));
  }
  return Status::ok();
}

Result<std::shared_ptr<RemoteInput>> DataConnection::check_data(const FrameHead& head) {
  auto it = inputs_.find(head.channel);
  if (it == inputs_.end()) {
    if (is_stale(head.channel)) return std::shared_ptr<RemoteInput>();  // an old attempt's or a released one's
    return Status::corruption(std::string(frame_type_name(head.type)) + " for channel " + head.channel.to_string() +
                              ", which is not registered here");
  }
  if (head.type == FrameType::kData && it->second->granted <= 0) {
    return Status::corruption("DATA beyond credit on channel " + head.channel.to_string() +
                              ": every credit granted was used");
  }
  return it->second;
}

Status DataConnection::on_data(const FrameHead& head, const uint8_t* tail, std::vector<uint8_t>* tail_memory) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<RemoteInput> input, check_data(head));
  if (input == nullptr) return Status::ok();
  --input->granted;
  Buffer buffer;
  buffer.kind = Buffer::Kind::kData;
  buffer.num_records = head.num_records;
  if (tail_memory != nullptr) {
    buffer.bytes = std::move(*tail_memory);
  } else {
    buffer.bytes = input->channel().take_free_memory();
    // Standard-size memory, so the channel keeps it when the consumer recycles it.
    buffer.bytes.reserve(static_cast<size_t>(input->channel().config().buffer_size_bytes));
    buffer.bytes.assign(tail, tail + head.tail_bytes);
  }
  input->channel().enqueue_buffer(std::move(buffer));
  return Status::ok();
}

Status DataConnection::on_event(const FrameHead& head, const uint8_t* tail) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<RemoteInput> input, check_data(head));
  if (input == nullptr) return Status::ok();
  Buffer event;
  event.kind = Buffer::Kind::kEvent;
  event.bytes.assign(tail, tail + head.tail_bytes);
  // The gate trusts event buffers (in-process they never leave the process): check what came from outside.
  Result<RuntimeEvent> decoded = decode_event(event);
  if (!decoded.is_ok()) return decoded.status().with_context("EVENT on channel " + head.channel.to_string());
  const bool end_of_partition = decoded->type == EventType::kEndOfPartition;
  if ((head.flags & kFlagPriority) != 0) {
    input->channel().enqueue_priority_event(std::move(event));
  } else {
    event.promote_at_ms = head.promote_at_ms;
    input->channel().enqueue_buffer(std::move(event));
  }
  if (end_of_partition) finish_input(input);  // nothing follows; credits no longer matter
  return Status::ok();
}

Status DataConnection::on_add_credit(const FrameHead& head) {
  auto it = outputs_.find(head.channel);
  if (it != outputs_.end()) {
    RemoteOutput& output = *it->second;
    if (output.credit > INT32_MAX - head.credits) {
      return Status::corruption("ADD_CREDIT overflows the credit of channel " + head.channel.to_string());
    }
    output.credit += head.credits;
    output.opened = true;
    make_ready(it->second);
    pump();
    return Status::ok();
  }
  if (is_stale(head.channel)) return Status::ok();
  if (!pending_outputs_.contains(head.channel) && pending_outputs_.size() >= kMaxPendingChannels) {
    return Status::corruption("credit announced for more than " + std::to_string(kMaxPendingChannels) +
                              " channels not registered here");
  }
  Pending& pending = pending_outputs_[head.channel];
  if (pending.credit > INT32_MAX - head.credits) {
    return Status::corruption("ADD_CREDIT overflows the credit of channel " + head.channel.to_string());
  }
  pending.credit += head.credits;
  return Status::ok();
}

void DataConnection::on_close_channel(const FrameHead& head) {
  auto it = outputs_.find(head.channel);
  if (it != outputs_.end()) {
    finish_output(it->second);  // the consumer is gone: the producer drops, as in-process
    return;
  }
  auto pending = pending_outputs_.find(head.channel);
  if (pending != pending_outputs_.end()) pending->second.closed = true;
}

Status DataConnection::on_cancel_channel(const FrameHead& head) {
  auto it = inputs_.find(head.channel);
  if (it == inputs_.end()) return Status::ok();  // released here already, or an old attempt's
  std::shared_ptr<RemoteInput> input = it->second;
  finish_input(input);
  callbacks_->on_channel_failed(head.channel, input->owner, Status::cancelled("the producer of channel " + head.channel.to_string() +
                                                                " on TaskManager " + std::to_string(options_.peer_id) +
                                                                " cancelled it"));
  return Status::ok();
}

}  // namespace sluice::runtime::tcp
