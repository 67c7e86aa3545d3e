// The two network halves of a remote channel (README.md in the parent folder, "Remote channels").
//
// RemoteOutput (producer's TaskManager) is the receiver of a ResultPartition's Channel: it sends that
// channel's buffers to the peer while the peer grants credit, and events without credit.
// RemoteInput (consumer's TaskManager) is the sender of an InputGate's Channel: it puts the frames it gets
// into that channel and returns a credit to the peer for every data buffer the consumer recycles.
//
// Both are owned by their DataConnection. The Channel callbacks (ChannelReceiverListener /
// ChannelSenderListener) run on task threads with the channel's mutex held: they only set atomics and
// schedule the endpoint on the connection's IO thread, which does everything else. Internal to tcp/.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "runtime/network/channel.h"
#include "runtime/network/tcp/remote_channel_id.h"

namespace sluice::runtime::tcp {

class DataConnection;

class RemoteEndpoint : public std::enable_shared_from_this<RemoteEndpoint> {
 public:
  enum class Side : uint8_t { kOutput, kInput };
  RemoteEndpoint(Side which, const RemoteChannelId& id, std::shared_ptr<Channel> channel, DataConnection* connection,
                 uint64_t owner_id)
      : side(which), owner(owner_id), id_(id), channel_(std::move(channel)), connection_(connection) {}
  virtual ~RemoteEndpoint() = default;
  RemoteEndpoint(const RemoteEndpoint&) = delete;
  RemoteEndpoint& operator=(const RemoteEndpoint&) = delete;

  const RemoteChannelId& id() const { return id_; }
  Channel& channel() const { return *channel_; }

  const Side side;
  // Who registered the endpoint (DataConnectionManager::register_*; a TaskManager's deployment), so release(owner)
  // finds it and its failures reach that owner.
  const uint64_t owner;
  // IO thread: set once the endpoint left its connection (finished, closed, failed); it then does nothing.
  bool closed = false;
  // Cleared by the connection's IO thread before it services the endpoint (DataConnection::schedule).
  std::atomic<bool> scheduled{false};

 protected:
  void schedule();  // any thread: have the IO thread service this endpoint

 private:
  const RemoteChannelId id_;
  const std::shared_ptr<Channel> channel_;
  DataConnection* const connection_;  // outlives the endpoint's attachment to its channel
};

class RemoteOutput final : public RemoteEndpoint, public ChannelReceiverListener {
 public:
  RemoteOutput(const RemoteChannelId& id, std::shared_ptr<Channel> channel, DataConnection* connection,
               uint64_t owner_id)
      : RemoteEndpoint(Side::kOutput, id, std::move(channel), connection, owner_id) {}

  // IO thread state.
  bool opened = false;    // the consumer announced its initial credit: until then nothing is sent
  int32_t credit = 0;     // data buffers the consumer can take
  bool in_ready = false;  // in the connection's round-robin line

  // Set by on_sender_cancelled; the IO thread sends CANCEL_CHANNEL.
  std::atomic<bool> cancelled{false};

 private:
  void on_channel_available(int32_t /*channel_index*/, bool /*priority*/) override { schedule(); }
  // The producer half never promotes: the consumer's half does once the event has arrived there.
  void note_promotion_deadline(int64_t /*at_ms*/) override {}
  void on_sender_cancelled(int32_t /*channel_index*/) override {
    cancelled.store(true, std::memory_order_release);
    schedule();
  }
};

class RemoteInput final : public RemoteEndpoint, public ChannelSenderListener {
 public:
  RemoteInput(const RemoteChannelId& id, std::shared_ptr<Channel> channel, DataConnection* connection,
              uint64_t owner_id)
      : RemoteEndpoint(Side::kInput, id, std::move(channel), connection, owner_id) {}

  // IO thread state: credit announced to the producer and not yet used by a DATA frame.
  int32_t granted = 0;

  // Credits returned by the consumer and not yet announced; set when the consumer's gate went away.
  std::atomic<int32_t> returned_credits{0};
  std::atomic<bool> released{false};

 private:
  void on_credit_returned() override {
    returned_credits.fetch_add(1, std::memory_order_acq_rel);
    schedule();
  }
  void on_receiver_released() override {
    released.store(true, std::memory_order_release);
    schedule();
  }
};

}  // namespace sluice::runtime::tcp
