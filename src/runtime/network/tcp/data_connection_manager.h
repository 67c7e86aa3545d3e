// DataConnectionManager: a TaskManager's end of the TCP data plane. Remote channels between two TaskManagers
// share one TCP connection; each keeps the in-process Channel contract (credit-based flow control, bounded
// buffers, events in band, priority events), so ResultPartition, InputGate and the task do not change
// (README.md in the parent folder, "Remote channels"; after Flink's credit-based network stack, see the Flink
// blog "A Deep-Dive into Flink's Network Stack").
//
// One manager per TaskManager process, shared by every deployment that runs there (Flink's one netty server per
// TaskManager): a deployment registers its channels under its own owner id and release(owner) unregisters them at
// its end, while the connections stay open for the other deployments' channels.
// Setup: every TaskManager of a job starts a manager, learns the others' data addresses and calls add_peer for
// each, all before registering channels. Of each pair, the TaskManager with the smaller id dials (at its first
// channel registration for that peer); the other accepts. The dialler's HELLO names
// the protocol version, its TaskManager id and the job fingerprint; the acceptor checks all three (and that
// it expects that id) and answers with its own HELLO, which the dialler checks the same way.
// Channels: both TaskManagers register the same RemoteChannelId - the producer's TaskManager with the
// ResultPartition's Channel of that subpartition (register_output), the consumer's TaskManager gets the
// Channel to hand to the InputGate (register_input). The consumer side's initial credit opens the channel:
// the producer side sends nothing before it, so a channel may be registered on either side first.
//
// Failures: a bad peer (unknown TaskManager id, wrong version or fingerprint, a frame that does not parse,
// a frame for a channel not registered, data beyond credit) or a dropped connection closes that connection
// only; the reason is logged (spdlog) and every channel on it is reported through
// DataPlaneCallbacks::on_channel_failed, then the connection through on_connection_failed, so the
// TaskManager can fail the affected tasks (each channel's failure names its owner). A later registration for
// that peer opens a new connection. A HELLO from a peer whose connection here is still open replaces that stale
// connection (the peer dials only once its own end is gone).
// Teardown: an InputGate destroyed early sends CLOSE_CHANNEL (the producer then drops that channel's data);
// a cancelled ResultPartition sends CANCEL_CHANNEL (the consumer side reports the channel failed with
// kCancelled, keeps what was delivered readable, and nothing follows).
//
// Threads: one IO thread (asio::io_context) per manager runs all socket work and the callbacks. Every public
// method may be called from any thread except the IO thread (a callback must not call shutdown(), release() or
// remove_peer(), which wait for the IO thread).
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "runtime/network/channel.h"
#include "runtime/network/network_config.h"
#include "runtime/network/tcp/data_connection.h"
#include "runtime/network/tcp/remote_channel_id.h"

namespace sluice::runtime::tcp {

struct DataPlaneConfig {
  // Address the acceptor binds (taskmanager.host; default loopback).
  std::string host = "127.0.0.1";
  // Port the acceptor binds (taskmanager.data.port; default 0 = an ephemeral port, see port()).
  uint16_t port = 0;
  // This TaskManager's id, unique among the TaskManagers of the job and stable for the life of the manager (>= 0).
  int32_t taskmanager_id = 0;
  // Identifies the job (the TaskManager's JobManager session); both ends of a connection must agree.
  uint64_t job_fingerprint = 0;
  // Frame bounds: max_data_bytes must be at least every channel's buffer_size_bytes, and bounds the largest
  // oversized record a remote channel carries (a larger one fails its channel). Default 64 MiB.
  FrameLimits limits;
  // A connecting socket that sends no HELLO within this time is closed (default 10 s).
  int64_t handshake_timeout_ms = 10'000;
};

class DataConnectionManager {
 public:
  // Binds the acceptor and starts the IO thread. IOError naming host:port if it cannot bind;
  // InvalidArgument for a negative taskmanager_id or handshake timeout.
  static Result<std::unique_ptr<DataConnectionManager>> start(const DataPlaneConfig& config,
                                                              DataPlaneCallbacks callbacks);
  ~DataConnectionManager();  // shutdown()
  DataConnectionManager(const DataConnectionManager&) = delete;
  DataConnectionManager& operator=(const DataConnectionManager&) = delete;

  // The bound data port (the ephemeral one when configured as 0).
  uint16_t port() const { return port_; }
  int32_t taskmanager_id() const { return config_.taskmanager_id; }

  // Declares a peer TaskManager of the job at host:port (an IP address). If this id is the smaller, the
  // connection is dialled when the first channel with that peer is registered: by then the peer must have
  // declared this TaskManager too (the deployment hands every TaskManager its peers before any channel), or it
  // refuses the HELLO. Declaring a peer again at the same address changes nothing (every deployment declares its
  // peers). InvalidArgument for this manager's own id, an id declared before at another address, or a host that
  // is not an IP address.
  Status add_peer(int32_t peer_id, const std::string& host, uint16_t port);

  // Forgets a peer (a TaskManager that is gone, or registered again under another id): its connection is closed
  // and its channels are reported through on_channel_failed, then the connection through on_connection_failed.
  // Unknown ids are ignored. Blocks until the IO thread has done it.
  void remove_peer(int32_t peer_id);

  // Consumer side: the Channel to give to the InputGate as input channel `id.producer_subtask`; its sender is
  // the network. Announces `config.credits_per_channel` credits to `producer_taskmanager`, which opens the
  // channel. `owner` (e.g. a deployment id) names who the channel belongs to: its failures are reported with it
  // and release(owner) unregisters it. InvalidArgument for an invalid config or an undeclared peer;
  // FailedPrecondition after shutdown. Registering an id twice reports it through on_channel_failed.
  Result<std::shared_ptr<Channel>> register_input(const RemoteChannelId& id, int32_t producer_taskmanager,
                                                  const NetworkConfig& config, uint64_t owner = 0);

  // Producer side: sends `channel` (ResultPartition::channel(id.consumer_subtask)) to `consumer_taskmanager`.
  // The network becomes that channel's receiver. `owner` and errors as register_input.
  Status register_output(const RemoteChannelId& id, int32_t consumer_taskmanager, std::shared_ptr<Channel> channel,
                         uint64_t owner = 0);

  // Unregisters every channel registered with `owner`, on every connection, without reporting them: the peers are
  // told as by a cancelled producer (CANCEL_CHANNEL) and a released gate (CLOSE_CHANNEL), and the connections
  // stay open. Call it once the owner's tasks are gone (what they still had queued is dropped). Blocks until the
  // IO thread has done it; a no-op after shutdown.
  void release(uint64_t owner);

  // Closes the acceptor and every connection (channels are detached, not reported) and joins the IO thread.
  // Idempotent.
  void shutdown();

 private:
  struct Peer {
    asio::ip::tcp::endpoint endpoint;
    std::shared_ptr<DataConnection> connection;
  };
  struct Handshake;

  DataConnectionManager(const DataPlaneConfig& config, DataPlaneCallbacks callbacks);
  Status check_peer(int32_t peer_id) const;
  // Runs `work` on the IO thread and waits for it (not from the IO thread); false after shutdown.
  bool run_on_io_thread(const std::function<void()>& work);
  // IO thread: the peer's connection, a fresh one (dialled if this side dials) if it never had one or failed; null
  // after shutdown or for a peer not (or no longer) declared.
  std::shared_ptr<DataConnection> live_connection(int32_t peer_id);
  // IO thread: a registration for a peer removed since fails its channel.
  void report_unreachable(const RemoteChannelId& id, uint64_t owner, int32_t peer_id);
  void accept();
  void read_hello(std::shared_ptr<Handshake> handshake);
  void on_hello(const std::shared_ptr<Handshake>& handshake);
  void reject(const std::shared_ptr<Handshake>& handshake, int32_t claimed_id, const Status& reason);

  const DataPlaneConfig config_;
  const DataPlaneCallbacks callbacks_;
  asio::io_context io_{1};
  asio::ip::tcp::acceptor acceptor_{io_};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
  uint16_t port_ = 0;

  mutable std::mutex mu_;
  std::map<int32_t, Peer> peers_;  // guarded by mu_
  bool shut_down_ = false;         // guarded by mu_
  std::set<std::shared_ptr<Handshake>> handshakes_;  // IO thread
};

}  // namespace sluice::runtime::tcp
