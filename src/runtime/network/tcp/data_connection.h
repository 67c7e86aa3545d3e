// DataConnection: the one TCP connection between two TaskManagers, carrying the frames (frame.h) of every
// remote channel between them. Internal to tcp/; the TaskManager uses DataConnectionManager.
//
// Writes: a short FIFO of frames, written with one gathered async_write at a time. Endpoints with something
// to send wait in a round-robin line and are polled only while the queue is short, so a busy channel cannot
// starve the others and nothing piles up in memory. A data buffer goes back to its producer's Channel
// (recycle) once written to the socket.
// Reads: frames are parsed from a read buffer; a payload that is not yet in it is read straight into the
// memory of the consumer's Channel.
// Any protocol violation (a frame that does not parse, data beyond credit, a frame for a channel never
// registered) or a socket error closes the connection: an ERROR frame is sent when no write is in flight, the
// reason is logged, and every channel on it is reported through DataPlaneCallbacks::on_channel_failed.
//
// Thread-safety: everything runs on the manager's IO thread except schedule(), which any thread may call
// (the endpoints' channel callbacks).
#pragma once

#include <array>
#include <asio.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/network/tcp/frame.h"
#include "runtime/network/tcp/remote_endpoints.h"

namespace sluice::runtime::tcp {

struct DataPlaneCallbacks {
  // A channel can carry nothing more: its connection failed or closed, the peer cancelled it (kCancelled), or
  // it was registered twice. `owner` is the owner it was registered with (DataConnectionManager::register_*), so a
  // TaskManager running several deployments on one data plane routes the failure to the deployment it belongs to.
  // Called on the IO thread; must not block.
  std::function<void(const RemoteChannelId& channel, uint64_t owner, const Status& reason)> on_channel_failed;
  // A connection closed with an error, or a connecting socket was refused: `peer_taskmanager_id` is the peer's
  // id (as its HELLO claimed it), or -1 when the socket never said who it is. Called on the IO thread after
  // the channels were reported; must not block.
  std::function<void(int32_t peer_taskmanager_id, const Status& reason)> on_connection_failed;
};

// Sends an ERROR frame with `reason` if the socket takes it at once (non-blocking, one write); used before
// closing a connection, so the peer can log why.
void write_error_frame_best_effort(asio::ip::tcp::socket& socket, const std::string& reason);

class DataConnection : public std::enable_shared_from_this<DataConnection> {
 public:
  struct Options {
    int32_t self_id = 0;
    int32_t peer_id = 0;
    uint64_t job_fingerprint = 0;
    FrameLimits limits;
  };

  DataConnection(asio::io_context& io, const Options& options, const DataPlaneCallbacks* callbacks);
  ~DataConnection();
  DataConnection(const DataConnection&) = delete;
  DataConnection& operator=(const DataConnection&) = delete;

  int32_t peer_id() const { return options_.peer_id; }
  // IO thread. Not yet connected (a dialler's connection waiting to dial, an acceptor's waiting for its peer).
  bool is_idle() const { return state_ == State::kIdle; }
  bool is_closed() const { return state_ == State::kClosed; }

  // IO thread. Dialler: connects, sends HELLO and waits for the peer's HELLO before sending anything else.
  void connect(const asio::ip::tcp::endpoint& peer);
  // IO thread. Acceptor: the peer's HELLO was read and accepted on `socket`; replies HELLO and opens.
  void adopt(asio::ip::tcp::socket socket);

  // IO thread. Registers an endpoint (the channel is attached here). A closed connection reports it failed.
  void add_output(std::shared_ptr<RemoteOutput> output);
  void add_input(std::shared_ptr<RemoteInput> input);

  // IO thread. Closes the socket and detaches every channel; reports them (and the connection) failed with
  // `reason` if `report`. Idempotent.
  void close(const Status& reason, bool report);

  // IO thread. Unregisters the endpoints of `owner` without reporting them: the peer is told as by a cancelled
  // producer (CANCEL_CHANNEL) or a released gate (CLOSE_CHANNEL), frames still arriving for them are dropped, and
  // the connection stays open for the other owners' channels. Also forgets what is kept about channels of attempts
  // older than the newest registered, so a connection that outlives many deployments keeps bounded state.
  void release(uint64_t owner);

  // Any thread: the endpoint has something for the IO thread (see RemoteEndpoint::schedule).
  void schedule(std::shared_ptr<RemoteEndpoint> endpoint);

 private:
  enum class State { kIdle, kConnecting, kHandshake, kOpen, kClosed };

  struct OutFrame {
    std::array<uint8_t, kMaxFrameHeadBytes> head{};
    size_t head_bytes = 0;
    std::vector<uint8_t> tail;
    std::shared_ptr<RemoteOutput> recycle_to;  // DATA: the producer's Channel gets the memory back
  };

  // Writing.
  void push_frame(FrameHead head, std::vector<uint8_t>&& tail, std::shared_ptr<RemoteOutput> recycle_to = nullptr);
  // A frame with no body for channel `id` (CLOSE_CHANNEL, CANCEL_CHANNEL).
  void push_channel_frame(FrameType type, const RemoteChannelId& id);
  void pump();
  bool write_queue_full() const;
  void start_write();
  void on_written(const asio::error_code& error);
  void send_error_best_effort(const std::string& reason);

  // Endpoints.
  void drain_outbox();
  void service_output(const std::shared_ptr<RemoteOutput>& output);
  void service_input(const std::shared_ptr<RemoteInput>& input);
  bool poll_output(RemoteOutput& output);
  void finish_output(std::shared_ptr<RemoteOutput> output);
  void finish_input(std::shared_ptr<RemoteInput> input);
  void make_ready(const std::shared_ptr<RemoteOutput>& output);
  bool is_stale(const RemoteChannelId& id) const;
  // A new registration of `id` on this connection (`registered`: already on it): reports and refuses it on a
  // closed connection or when registered before.
  bool admit(const RemoteEndpoint& endpoint, bool registered, const char* side);
  void forget_older_attempts();
  void note_attempt(const RemoteChannelId& id);

  // Reading.
  void start_read();
  void on_read(const asio::error_code& error, size_t n);
  void process_read_buffer();
  void on_tail_read(const asio::error_code& error);
  Status dispatch(const FrameHead& head, const uint8_t* tail, std::vector<uint8_t>* tail_memory);
  Status on_hello(const FrameHead& head);
  Status on_data(const FrameHead& head, const uint8_t* tail, std::vector<uint8_t>* tail_memory);
  Status on_event(const FrameHead& head, const uint8_t* tail);
  Status on_add_credit(const FrameHead& head);
  void on_close_channel(const FrameHead& head);
  Status on_cancel_channel(const FrameHead& head);
  // Validates a DATA head before anything is read or allocated for its tail; the input or null (stale: drop).
  Result<std::shared_ptr<RemoteInput>> check_data(const FrameHead& head);

  void open();
  void push_hello_front();
  void fail(const Status& reason) { close(reason, /*report=*/true); }
  std::string describe() const;

  asio::io_context& io_;
  asio::ip::tcp::socket socket_;
  const Options options_;
  const DataPlaneCallbacks* const callbacks_;
  State state_ = State::kIdle;

  std::deque<OutFrame> queued_;  // not yet handed to the socket
  size_t queued_bytes_ = 0;
  std::vector<OutFrame> writing_;
  std::vector<asio::const_buffer> gather_;
  bool write_in_flight_ = false;
  bool hello_unsent_ = false;  // our HELLO is at the head of queued_

  std::vector<uint8_t> rbuf_;
  size_t rstart_ = 0;
  size_t rend_ = 0;
  FrameHead tail_head_;                    // a frame whose tail is being read straight into tail_memory_
  std::vector<uint8_t> tail_memory_;
  std::shared_ptr<RemoteInput> tail_input_;

  std::unordered_map<RemoteChannelId, std::shared_ptr<RemoteOutput>, RemoteChannelIdHash> outputs_;
  std::unordered_map<RemoteChannelId, std::shared_ptr<RemoteInput>, RemoteChannelIdHash> inputs_;
  // Credit (or a close) that arrived for an output not registered yet; <= kMaxPendingChannels entries.
  struct Pending {
    int32_t credit = 0;
    bool closed = false;
  };
  std::unordered_map<RemoteChannelId, Pending, RemoteChannelIdHash> pending_outputs_;
  std::unordered_set<RemoteChannelId, RemoteChannelIdHash> finished_ids_;  // frames for these are dropped
  std::unordered_map<RemoteChannelId, int32_t, RemoteChannelIdHash> newest_attempt_;  // key has attempt 0
  std::deque<std::shared_ptr<RemoteOutput>> ready_;  // outputs that may have something to send, round-robin

  std::mutex outbox_mu_;
  std::vector<std::shared_ptr<RemoteEndpoint>> outbox_;  // guarded by outbox_mu_
  bool drain_posted_ = false;                             // guarded by outbox_mu_
  std::vector<std::shared_ptr<RemoteEndpoint>> draining_;  // IO thread
};

}  // namespace sluice::runtime::tcp
