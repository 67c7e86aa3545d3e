// DataConnection: setup, endpoints, writing and closing (reading frames is in data_connection_inbound.cc).
#include "runtime/network/tcp/data_connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sluice::runtime::tcp {

namespace {

constexpr size_t kReadBufferBytes = 64 * 1024;
// The write queue is "full" (outputs are not polled) from this many frames or bytes on.
constexpr size_t kMaxQueuedFrames = 32;
constexpr size_t kMaxQueuedBytes = 256 * 1024;

RemoteChannelId without_attempt(RemoteChannelId id) {
  id.attempt = 0;
  return id;
}

}  // namespace

void RemoteEndpoint::schedule() {
  if (!scheduled.exchange(true, std::memory_order_acq_rel)) connection_->schedule(shared_from_this());
}

DataConnection::DataConnection(asio::io_context& io, const Options& options, const DataPlaneCallbacks* callbacks)
    : io_(io), socket_(io), options_(options), callbacks_(callbacks), rbuf_(kReadBufferBytes + kMaxFrameHeadBytes) {}

DataConnection::~DataConnection() = default;

std::string DataConnection::describe() const {
  return "data connection of TaskManager " + std::to_string(options_.self_id) + " to TaskManager " +
         std::to_string(options_.peer_id);
}

// ---- connection setup ----

void DataConnection::connect(const asio::ip::tcp::endpoint& peer) {
  if (state_ != State::kIdle) return;
  state_ = State::kConnecting;
  socket_.async_connect(peer, [self = shared_from_this(), peer](const asio::error_code& error) {
    if (self->state_ == State::kClosed) return;
    if (error) {
      self->fail(Status::io_error("could not connect to " + peer.address().to_string() + ":" +
                                  std::to_string(peer.port()) + ": " + error.message()));
      return;
    }
    asio::error_code ignored;
    self->socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
    self->state_ = State::kHandshake;
    self->push_hello_front();
    self->start_write();
    self->start_read();
  });
}

void DataConnection::adopt(asio::ip::tcp::socket socket) {
  if (state_ != State::kIdle) return;
  socket_ = std::move(socket);
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  push_hello_front();
  open();
  start_read();
}

void DataConnection::push_hello_front() {
  FrameHead hello;
  hello.type = FrameType::kHello;
  hello.version = kProtocolVersion;
  hello.taskmanager_id = options_.self_id;
  hello.job_fingerprint = options_.job_fingerprint;
  push_frame(hello, {});
  queued_.push_front(std::move(queued_.back()));  // ahead of what registrations queued
  queued_.pop_back();
  hello_unsent_ = true;
}

void DataConnection::open() {
  state_ = State::kOpen;
  spdlog::debug("{}: open", describe());
  start_write();
  pump();
}

Status DataConnection::on_hello(const FrameHead& head) {
  if (head.version != kProtocolVersion || head.job_fingerprint != options_.job_fingerprint ||
      head.taskmanager_id != options_.peer_id) {
    return Status::invalid_argument(fmt::format(
        "the peer's HELLO does not match: expected version {}, TaskManager {}, job fingerprint {:#x}; got version "
        "{}, TaskManager {}, job fingerprint {:#x}",
        kProtocolVersion, options_.peer_id, options_.job_fingerprint, head.version, head.taskmanager_id,
        head.job_fingerprint));
  }
  open();
  return Status::ok();
}

void DataConnection::close(const Status& reason, bool report) {
  if (state_ == State::kClosed) return;
  if (report) send_error_best_effort(reason.message());
  state_ = State::kClosed;
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  const Status failure = reason.with_context(describe());
  if (report) {
    spdlog::warn("{}: closed: {}", describe(), reason.to_string());
  } else {
    spdlog::debug("{}: closed: {}", describe(), reason.to_string());
  }
  auto outputs = std::move(outputs_);
  auto inputs = std::move(inputs_);
  outputs_.clear();
  inputs_.clear();
  ready_.clear();
  queued_.clear();
  queued_bytes_ = 0;
  pending_outputs_.clear();
  tail_input_.reset();
  for (auto& [id, output] : outputs) {
    output->closed = true;
    output->channel().detach_receiver();  // the producer drops from now on, as for a released gate
  }
  for (auto& [id, input] : inputs) {
    input->closed = true;
    input->channel().detach_sender();  // what was delivered stays readable
  }
  if (!report) return;
  for (auto& [id, output] : outputs) callbacks_->on_channel_failed(id, output->owner, failure);
  for (auto& [id, input] : inputs) callbacks_->on_channel_failed(id, input->owner, failure);
  callbacks_->on_connection_failed(options_.peer_id, failure);
}

void DataConnection::send_error_best_effort(const std::string& reason) {
  // Only between frames (no write in flight), and never blocking: the peer learns why if it can.
  if (write_in_flight_ || !socket_.is_open() || state_ == State::kConnecting) return;
  write_error_frame_best_effort(socket_, reason);
}

void write_error_frame_best_effort(asio::ip::tcp::socket& socket, const std::string& reason) {
  FrameHead head;
  head.type = FrameType::kError;
  const size_t n = std::min(reason.size(), FrameLimits{}.max_control_bytes);
  const std::vector<uint8_t> frame = encode_frame(head, reinterpret_cast<const uint8_t*>(reason.data()), n);
  asio::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(asio::buffer(frame), ignored);
}

// ---- endpoints ----

void DataConnection::schedule(std::shared_ptr<RemoteEndpoint> endpoint) {
  std::lock_guard<std::mutex> lock(outbox_mu_);
  outbox_.push_back(std::move(endpoint));
  if (drain_posted_) return;
  drain_posted_ = true;
  asio::post(io_, [self = shared_from_this()] { self->drain_outbox(); });
}

void DataConnection::drain_outbox() {
  {
    std::lock_guard<std::mutex> lock(outbox_mu_);
    draining_.swap(outbox_);
    drain_posted_ = false;
  }
  for (auto& endpoint : draining_) {
    // Cleared first: a callback from now on schedules the endpoint again.
    endpoint->scheduled.store(false, std::memory_order_release);
    if (endpoint->closed || state_ == State::kClosed) continue;
    if (endpoint->side == RemoteEndpoint::Side::kOutput) {
      service_output(std::static_pointer_cast<RemoteOutput>(endpoint));
    } else {
      service_input(std::static_pointer_cast<RemoteInput>(endpoint));
    }
  }
  draining_.clear();
  pump();
  start_write();
}

bool DataConnection::admit(const RemoteEndpoint& endpoint, bool registered, const char* side) {
  const RemoteChannelId& id = endpoint.id();
  if (state_ == State::kClosed) {
    callbacks_->on_channel_failed(id, endpoint.owner, Status::io_error(describe() + " is closed"));
    return false;
  }
  if (registered || finished_ids_.contains(id)) {
    callbacks_->on_channel_failed(id, endpoint.owner,
                                  Status::invalid_argument(std::string(side) + " channel " + id.to_string() +
                                                           " registered twice on the " + describe()));
    return false;
  }
  note_attempt(id);
  return true;
}

void DataConnection::add_output(std::shared_ptr<RemoteOutput> output) {
  const RemoteChannelId id = output->id();
  if (!admit(*output, outputs_.contains(id), "output")) return;
  outputs_.emplace(id, output);
  output->channel().attach_receiver(output.get(), 0, ReceiverLocation::kRemote);
  auto pending = pending_outputs_.find(id);
  if (pending == pending_outputs_.end()) return;
  const Pending p = pending->second;
  pending_outputs_.erase(pending);
  if (p.closed) {
    finish_output(output);
    return;
  }
  output->opened = true;
  output->credit = p.credit;
  make_ready(output);
  pump();
}

void DataConnection::add_input(std::shared_ptr<RemoteInput> input) {
  const RemoteChannelId id = input->id();
  if (!admit(*input, inputs_.contains(id), "input")) return;
  inputs_.emplace(id, input);
  input->channel().attach_sender(input.get());
  if (input->released.load(std::memory_order_acquire)) {  // the gate is gone already: only say so
    service_input(input);
    start_write();
    return;
  }
  // The initial credit also tells the producer the channel is ready: it sends nothing before it.
  input->granted = input->channel().config().credits_per_channel;
  FrameHead credit;
  credit.type = FrameType::kAddCredit;
  credit.channel = id;
  credit.credits = input->granted;
  push_frame(credit, {});
  start_write();
}

void DataConnection::service_output(const std::shared_ptr<RemoteOutput>& output) {
  if (output->cancelled.load(std::memory_order_acquire)) {
    // After whatever is already in the write queue; the rest of the producer's queue is dropped.
    push_channel_frame(FrameType::kCancelChannel, output->id());
    finish_output(output);
    return;
  }
  make_ready(output);
}

void DataConnection::service_input(const std::shared_ptr<RemoteInput>& input) {
  if (input->released.load(std::memory_order_acquire)) {
    push_channel_frame(FrameType::kCloseChannel, input->id());
    finish_input(input);
    return;
  }
  const int32_t returned = input->returned_credits.exchange(0, std::memory_order_acq_rel);
  if (returned == 0) return;
  input->granted += returned;
  FrameHead credit;
  credit.type = FrameType::kAddCredit;
  credit.channel = input->id();
  credit.credits = returned;
  push_frame(credit, {});
}

void DataConnection::make_ready(const std::shared_ptr<RemoteOutput>& output) {
  if (output->in_ready || output->closed || !output->opened) return;
  output->in_ready = true;
  ready_.push_back(output);
}

// By value: the caller's reference may be the map entry erased here.
void DataConnection::finish_output(std::shared_ptr<RemoteOutput> output) {
  output->closed = true;
  output->channel().detach_receiver();
  outputs_.erase(output->id());
  finished_ids_.insert(output->id());
}

void DataConnection::finish_input(std::shared_ptr<RemoteInput> input) {
  input->closed = true;
  input->channel().detach_sender();
  inputs_.erase(input->id());
  finished_ids_.insert(input->id());
}

void DataConnection::release(uint64_t owner) {
  if (state_ == State::kClosed) return;  // closing detached every endpoint already
  std::vector<std::shared_ptr<RemoteOutput>> outputs;
  std::vector<std::shared_ptr<RemoteInput>> inputs;
  for (const auto& [id, output] : outputs_) {
    if (output->owner == owner) outputs.push_back(output);
  }
  for (const auto& [id, input] : inputs_) {
    if (input->owner == owner) inputs.push_back(input);
  }
  for (const std::shared_ptr<RemoteOutput>& output : outputs) {
    push_channel_frame(FrameType::kCancelChannel, output->id());
    finish_output(output);
  }
  for (const std::shared_ptr<RemoteInput>& input : inputs) {
    push_channel_frame(FrameType::kCloseChannel, input->id());
    finish_input(input);
  }
  forget_older_attempts();
  start_write();
}

void DataConnection::forget_older_attempts() {
  // is_stale drops frames of an attempt older than the newest registered without these entries.
  auto older = [this](const RemoteChannelId& id) {
    auto it = newest_attempt_.find(without_attempt(id));
    return it != newest_attempt_.end() && it->second > id.attempt;
  };
  std::erase_if(finished_ids_, older);
  std::erase_if(pending_outputs_, [&](const auto& entry) { return older(entry.first); });
}

void DataConnection::note_attempt(const RemoteChannelId& id) {
  int32_t& newest = newest_attempt_.try_emplace(without_attempt(id), id.attempt).first->second;
  newest = std::max(newest, id.attempt);
}

bool DataConnection::is_stale(const RemoteChannelId& id) const {
  if (finished_ids_.contains(id)) return true;
  auto it = newest_attempt_.find(without_attempt(id));
  return it != newest_attempt_.end() && it->second > id.attempt;
}

// ---- writing ----

void DataConnection::push_frame(FrameHead head, std::vector<uint8_t>&& tail, std::shared_ptr<RemoteOutput> recycle_to) {
  head.tail_bytes = static_cast<uint32_t>(tail.size());
  OutFrame frame;
  frame.head_bytes = encode_frame_head(head, frame.head.data());
  frame.tail = std::move(tail);
  frame.recycle_to = std::move(recycle_to);
  queued_bytes_ += frame.head_bytes + frame.tail.size();
  queued_.push_back(std::move(frame));
}

void DataConnection::push_channel_frame(FrameType type, const RemoteChannelId& id) {
  FrameHead head;
  head.type = type;
  head.channel = id;
  push_frame(head, {});
}

bool DataConnection::write_queue_full() const {
  return queued_.size() >= kMaxQueuedFrames || queued_bytes_ >= kMaxQueuedBytes;
}

void DataConnection::pump() {
  if (state_ != State::kOpen) return;
  while (!ready_.empty() && !write_queue_full()) {
    std::shared_ptr<RemoteOutput> output = std::move(ready_.front());
    ready_.pop_front();
    output->in_ready = false;
    if (output->closed) continue;
    if (poll_output(*output)) make_ready(output);  // to the back of the line: round-robin
  }
  start_write();
}

bool DataConnection::poll_output(RemoteOutput& output) {
  Buffer buffer;
  bool priority = false;
  if (!output.channel().poll_sendable(output.credit > 0, &buffer, &priority)) return false;
  FrameHead head;
  head.channel = output.id();
  if (!buffer.is_event()) {
    if (buffer.bytes.size() > options_.limits.max_data_bytes) {
      auto self = std::static_pointer_cast<RemoteOutput>(output.shared_from_this());
      finish_output(self);
      callbacks_->on_channel_failed(
          output.id(), output.owner, Status::invalid_argument("a record of " + std::to_string(buffer.bytes.size()) +
                                                " bytes exceeds the data connection's frame limit of " +
                                                std::to_string(options_.limits.max_data_bytes) + " bytes"));
      return false;
    }
    head.type = FrameType::kData;
    head.num_records = buffer.num_records;
    --output.credit;
    push_frame(head, std::move(buffer.bytes),
               std::static_pointer_cast<RemoteOutput>(output.shared_from_this()));
    return true;
  }
  head.type = FrameType::kEvent;
  head.flags = priority ? kFlagPriority : 0;
  head.overtaken_buffers = buffer.overtaken_buffers;  // 0: the consumer's half counts its own side
  head.promote_at_ms = buffer.promote_at_ms;
  const bool end_of_partition =
      !buffer.bytes.empty() && buffer.bytes[0] == static_cast<uint8_t>(EventType::kEndOfPartition);
  push_frame(head, std::move(buffer.bytes));
  if (end_of_partition) {
    finish_output(std::static_pointer_cast<RemoteOutput>(output.shared_from_this()));
    return false;
  }
  return true;
}

void DataConnection::start_write() {
  if (write_in_flight_ || queued_.empty()) return;
  size_t writable = 0;
  if (state_ == State::kOpen) {
    writable = queued_.size();
  } else if (state_ == State::kHandshake && hello_unsent_) {
    writable = 1;  // only our HELLO until the peer's arrives
  }
  if (writable == 0) return;
  hello_unsent_ = false;
  writing_.clear();
  gather_.clear();
  for (size_t i = 0; i < writable; ++i) {
    queued_bytes_ -= queued_.front().head_bytes + queued_.front().tail.size();
    writing_.push_back(std::move(queued_.front()));
    queued_.pop_front();
  }
  for (const OutFrame& frame : writing_) {
    gather_.emplace_back(frame.head.data(), frame.head_bytes);
    if (!frame.tail.empty()) gather_.emplace_back(frame.tail.data(), frame.tail.size());
  }
  write_in_flight_ = true;
  asio::async_write(socket_, gather_, [self = shared_from_this()](const asio::error_code& error, size_t) {
    self->on_written(error);
  });
}

void DataConnection::on_written(const asio::error_code& error) {
  write_in_flight_ = false;
  if (state_ == State::kClosed) {
    writing_.clear();
    return;
  }
  if (error) {
    writing_.clear();
    fail(Status::io_error("writing to the socket: " + error.message()));
    return;
  }
  for (OutFrame& frame : writing_) {
    // Written: the memory goes back to the producer's half, freeing its local credit.
    if (frame.recycle_to != nullptr) frame.recycle_to->channel().recycle(std::move(frame.tail));
  }
  writing_.clear();
  start_write();
  pump();
}

}  // namespace sluice::runtime::tcp
