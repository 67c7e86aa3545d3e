#include "runtime/network/tcp/data_connection_manager.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <future>
#include <vector>

namespace sluice::runtime::tcp {

namespace {
std::string handshake_peer_name(const asio::ip::tcp::socket& socket) {
  asio::error_code error;
  const asio::ip::tcp::endpoint remote = socket.remote_endpoint(error);
  if (error) return "an unknown address";
  return remote.address().to_string() + ":" + std::to_string(remote.port());
}
}  // namespace

// An accepted socket until its HELLO says which peer it is.
struct DataConnectionManager::Handshake {
  explicit Handshake(asio::io_context& io) : socket(io), timer(io) {}
  asio::ip::tcp::socket socket;
  asio::steady_timer timer;
  std::array<uint8_t, kMaxFrameHeadBytes> hello{};
};

DataConnectionManager::DataConnectionManager(const DataPlaneConfig& config, DataPlaneCallbacks callbacks)
    : config_(config), callbacks_(std::move(callbacks)) {}

Result<std::unique_ptr<DataConnectionManager>> DataConnectionManager::start(const DataPlaneConfig& config,
                                                                            DataPlaneCallbacks callbacks) {
  if (config.taskmanager_id < 0 || config.handshake_timeout_ms <= 0) {
    return Status::invalid_argument("DataPlaneConfig: expected taskmanager_id >= 0 and handshake_timeout_ms > 0, got " +
                                    std::to_string(config.taskmanager_id) + " and " +
                                    std::to_string(config.handshake_timeout_ms));
  }
  if (!callbacks.on_channel_failed) callbacks.on_channel_failed = [](const RemoteChannelId&, uint64_t, const Status&) {};
  if (!callbacks.on_connection_failed) callbacks.on_connection_failed = [](int32_t, const Status&) {};
  std::unique_ptr<DataConnectionManager> manager(new DataConnectionManager(config, std::move(callbacks)));
  const std::string where = config.host + ":" + std::to_string(config.port);
  asio::error_code error;
  const asio::ip::address address = asio::ip::make_address(config.host, error);
  if (error) return Status::invalid_argument("taskmanager.host: expected an IP address, got '" + config.host + "'");
  const asio::ip::tcp::endpoint endpoint(address, config.port);
  asio::ip::tcp::acceptor& acceptor = manager->acceptor_;
  acceptor.open(endpoint.protocol(), error);
  if (!error) acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return Status::io_error("data plane: cannot listen on " + where + ": " + error.message());
  }
  manager->port_ = acceptor.local_endpoint().port();
  manager->work_.emplace(asio::make_work_guard(manager->io_));
  manager->accept();
  manager->thread_ = std::thread([m = manager.get()] { m->io_.run(); });
  spdlog::info("TaskManager {}: data plane listening on {}:{}", config.taskmanager_id, config.host, manager->port_);
  return manager;
}

DataConnectionManager::~DataConnectionManager() { shutdown(); }

void DataConnectionManager::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  asio::post(io_, [this] {
    asio::error_code ignored;
    acceptor_.close(ignored);
    for (const auto& handshake : handshakes_) {
      handshake->timer.cancel();
      handshake->socket.close(ignored);
    }
    handshakes_.clear();
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, peer] : peers_) {
      if (peer.connection != nullptr) peer.connection->close(Status::cancelled("the data plane shut down"), false);
    }
  });
  work_.reset();  // run() returns once the closed sockets' handlers have run
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  peers_.clear();
}

Status DataConnectionManager::add_peer(int32_t peer_id, const std::string& host, uint16_t port) {
  if (peer_id < 0 || peer_id == config_.taskmanager_id) {
    return Status::invalid_argument("add_peer: expected another TaskManager's id (>= 0, not " +
                                    std::to_string(config_.taskmanager_id) + "), got " + std::to_string(peer_id));
  }
  asio::error_code error;
  const asio::ip::address address = asio::ip::make_address(host, error);
  if (error) return Status::invalid_argument("add_peer: expected an IP address for TaskManager " +
                                             std::to_string(peer_id) + ", got '" + host + "'");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return Status::failed_precondition("add_peer: the data plane shut down");
    const asio::ip::tcp::endpoint endpoint(address, port);
    auto it = peers_.find(peer_id);
    if (it != peers_.end()) {
      if (it->second.endpoint == endpoint) return Status::ok();
      return Status::invalid_argument("add_peer: TaskManager " + std::to_string(peer_id) + " was declared before at " +
                                      it->second.endpoint.address().to_string() + ":" +
                                      std::to_string(it->second.endpoint.port()) + ", now at " + host + ":" +
                                      std::to_string(port));
    }
    peers_[peer_id].endpoint = endpoint;
  }
  return Status::ok();
}

bool DataConnectionManager::run_on_io_thread(const std::function<void()>& work) {
  std::promise<void> done;
  {
    // Posted under mu_: shutdown() marks shut_down_ under it before it lets the IO thread run out of work, so what
    // is posted here still runs.
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return false;
    asio::post(io_, [&work, &done] {
      work();
      done.set_value();
    });
  }
  done.get_future().wait();
  return true;
}

void DataConnectionManager::remove_peer(int32_t peer_id) {
  run_on_io_thread([this, peer_id] {
    std::shared_ptr<DataConnection> connection;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = peers_.find(peer_id);
      if (it == peers_.end()) return;
      connection = std::move(it->second.connection);
      peers_.erase(it);
    }
    // Outside mu_: the callbacks it reports to may take their own locks.
    if (connection != nullptr) connection->close(Status::io_error("TaskManager " + std::to_string(peer_id) +
                                                                  " is no longer a peer"), true);
  });
}

void DataConnectionManager::release(uint64_t owner) {
  run_on_io_thread([this, owner] {
    std::vector<std::shared_ptr<DataConnection>> connections;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [id, peer] : peers_) {
        if (peer.connection != nullptr) connections.push_back(peer.connection);
      }
    }
    for (const auto& connection : connections) connection->release(owner);
  });
}

Status DataConnectionManager::check_peer(int32_t peer_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return Status::failed_precondition("the data plane shut down");
  if (!peers_.contains(peer_id)) {
    return Status::invalid_argument("TaskManager " + std::to_string(peer_id) + " is not a declared peer (add_peer)");
  }
  return Status::ok();
}

Result<std::shared_ptr<Channel>> DataConnectionManager::register_input(const RemoteChannelId& id,
                                                                       int32_t producer_taskmanager,
                                                                       const NetworkConfig& config, uint64_t owner) {
  SLUICE_RETURN_IF_ERROR(config.validate());
  if (static_cast<size_t>(config.buffer_size_bytes) > config_.limits.max_data_bytes) {
    return Status::invalid_argument("register_input: buffer_size_bytes " + std::to_string(config.buffer_size_bytes) +
                                    " exceeds the data plane's frame limit of " +
                                    std::to_string(config_.limits.max_data_bytes));
  }
  SLUICE_RETURN_IF_ERROR(check_peer(producer_taskmanager));
  auto channel = std::make_shared<Channel>(config);
  asio::post(io_, [this, id, producer_taskmanager, channel, owner] {
    std::shared_ptr<DataConnection> connection = live_connection(producer_taskmanager);
    if (connection != nullptr) {
      connection->add_input(std::make_shared<RemoteInput>(id, channel, connection.get(), owner));
    } else {
      report_unreachable(id, owner, producer_taskmanager);
    }
  });
  return channel;
}

Status DataConnectionManager::register_output(const RemoteChannelId& id, int32_t consumer_taskmanager,
                                              std::shared_ptr<Channel> channel, uint64_t owner) {
  if (channel == nullptr) return Status::invalid_argument("register_output: expected a channel, got null");
  SLUICE_RETURN_IF_ERROR(check_peer(consumer_taskmanager));
  asio::post(io_, [this, id, consumer_taskmanager, channel = std::move(channel), owner] {
    std::shared_ptr<DataConnection> connection = live_connection(consumer_taskmanager);
    if (connection != nullptr) {
      connection->add_output(std::make_shared<RemoteOutput>(id, channel, connection.get(), owner));
    } else {
      report_unreachable(id, owner, consumer_taskmanager);
    }
  });
  return Status::ok();
}

void DataConnectionManager::report_unreachable(const RemoteChannelId& id, uint64_t owner, int32_t peer_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;  // a shutdown reports nothing
  }
  // The peer was removed after the registration was made: the channel would never open, so its task must fail.
  callbacks_.on_channel_failed(id, owner, Status::io_error("TaskManager " + std::to_string(peer_id) +
                                                           " is no longer a peer of TaskManager " +
                                                           std::to_string(config_.taskmanager_id)));
}

std::shared_ptr<DataConnection> DataConnectionManager::live_connection(int32_t peer_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return nullptr;
  auto it = peers_.find(peer_id);
  if (it == peers_.end()) return nullptr;  // removed (remove_peer) after a registration for it was posted
  Peer& peer = it->second;
  if (peer.connection == nullptr || peer.connection->is_closed()) {
    DataConnection::Options options;
    options.self_id = config_.taskmanager_id;
    options.peer_id = peer_id;
    options.job_fingerprint = config_.job_fingerprint;
    options.limits = config_.limits;
    peer.connection = std::make_shared<DataConnection>(io_, options, &callbacks_);
    if (config_.taskmanager_id < peer_id) peer.connection->connect(peer.endpoint);
  }
  return peer.connection;
}

// ---- accepting ----

void DataConnectionManager::accept() {
  auto handshake = std::make_shared<Handshake>(io_);
  acceptor_.async_accept(handshake->socket, [this, handshake](const asio::error_code& error) {
    if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!error) read_hello(handshake);
    accept();
  });
}

void DataConnectionManager::read_hello(std::shared_ptr<Handshake> handshake) {
  handshakes_.insert(handshake);
  handshake->timer.expires_after(std::chrono::milliseconds(config_.handshake_timeout_ms));
  handshake->timer.async_wait([this, handshake](const asio::error_code& error) {
    if (error || !handshakes_.contains(handshake)) return;
    reject(handshake, -1, Status::timeout("no HELLO within " + std::to_string(config_.handshake_timeout_ms) + " ms"));
  });
  asio::async_read(handshake->socket, asio::buffer(handshake->hello.data(), frame_head_bytes(FrameType::kHello)),
                   [this, handshake](const asio::error_code& error, size_t) {
                     if (!handshakes_.contains(handshake)) return;  // timed out or shut down
                     if (error) {
                       reject(handshake, -1, Status::io_error("closed before its HELLO: " + error.message()));
                       return;
                     }
                     on_hello(handshake);
                   });
}

void DataConnectionManager::on_hello(const std::shared_ptr<Handshake>& handshake) {
  Result<FrameHead> decoded = decode_frame_header(handshake->hello.data(), config_.limits);
  if (!decoded.is_ok()) return reject(handshake, -1, decoded.status());
  FrameHead head = std::move(decoded).value();
  if (head.type != FrameType::kHello) {
    return reject(handshake, -1, Status::corruption(std::string("expected HELLO first, got ") + frame_type_name(head.type)));
  }
  Status fixed = decode_frame_fixed(handshake->hello.data() + kFrameHeaderBytes, &head);
  if (!fixed.is_ok()) return reject(handshake, -1, fixed);
  const int32_t peer_id = head.taskmanager_id;
  if (head.version != kProtocolVersion) {
    return reject(handshake, peer_id,
                  Status::invalid_argument(fmt::format("protocol version {} expected, the peer speaks {}",
                                                       kProtocolVersion, head.version)));
  }
  if (head.job_fingerprint != config_.job_fingerprint) {
    return reject(handshake, peer_id,
                  Status::invalid_argument(fmt::format("job fingerprint {:#x} expected, the peer sent {:#x}",
                                                       config_.job_fingerprint, head.job_fingerprint)));
  }
  bool expected = false;
  std::string known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, peer] : peers_) {
      if (id >= config_.taskmanager_id) continue;  // those are dialled by this side
      if (!known.empty()) known += ", ";
      known += std::to_string(id);
      expected = expected || id == peer_id;
    }
  }
  if (!expected) {
    return reject(handshake, peer_id,
                  Status::invalid_argument(fmt::format("unexpected TaskManager {}: TaskManager {} accepts only [{}]",
                                                       peer_id, config_.taskmanager_id, known)));
  }
  std::shared_ptr<DataConnection> connection = live_connection(peer_id);
  if (connection == nullptr) return;
  if (!connection->is_idle()) {
    // The peer dials only when it has no live connection to this TaskManager, so the one here is stale (its end
    // failed and the close has not arrived yet): its channels fail, and the new connection takes its place.
    connection->close(Status::io_error("TaskManager " + std::to_string(peer_id) +
                                       " connected again, so its previous data connection is gone"),
                      true);
    connection = live_connection(peer_id);
    if (connection == nullptr) return;
  }
  handshake->timer.cancel();
  handshakes_.erase(handshake);
  connection->adopt(std::move(handshake->socket));
}

void DataConnectionManager::reject(const std::shared_ptr<Handshake>& handshake, int32_t claimed_id,
                                   const Status& reason) {
  const Status failure = reason.with_context("TaskManager " + std::to_string(config_.taskmanager_id) +
                                             " refused a data connection from " +
                                             handshake_peer_name(handshake->socket));
  spdlog::warn("{}", failure.to_string());
  write_error_frame_best_effort(handshake->socket, failure.message());
  asio::error_code ignored;
  handshake->timer.cancel();
  handshake->socket.close(ignored);
  handshakes_.erase(handshake);
  callbacks_.on_connection_failed(claimed_id, failure);
}

}  // namespace sluice::runtime::tcp
