// Helpers for the data-plane tests: failure logs to wait on, two TaskManagers' managers in one process, and
// a raw peer that speaks (or garbles) the protocol over a plain blocking socket with a receive timeout.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tcp/data_connection_manager.h"
#include "runtime/network/tcp/frame.h"

namespace sluice::runtime::tcp::testing {

using namespace std::chrono_literals;

inline constexpr uint64_t kFingerprint = 0x5eed5eedULL;

// What a manager reported, with waits that end as soon as the awaited report arrives.
class FailureLog {
 public:
  DataPlaneCallbacks callbacks() {
    DataPlaneCallbacks c;
    c.on_channel_failed = [this](const RemoteChannelId& id, uint64_t owner, const Status& reason) {
      std::lock_guard<std::mutex> lock(mu_);
      channels_.emplace_back(id, reason);
      owners_.push_back(owner);
      cv_.notify_all();
    };
    c.on_connection_failed = [this](int32_t peer, const Status& reason) {
      std::lock_guard<std::mutex> lock(mu_);
      connections_.emplace_back(peer, reason);
      cv_.notify_all();
    };
    return c;
  }

  // The first connection failure (from `skip` on) whose message contains `text`, waiting up to `max`.
  std::optional<std::pair<int32_t, Status>> wait_connection_failure(const std::string& text,
                                                                    std::chrono::seconds max = 20s) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<std::pair<int32_t, Status>> found;
    cv_.wait_for(lock, max, [&] {
      for (const auto& [peer, st] : connections_) {
        if (st.message().find(text) != std::string::npos) {
          found.emplace(peer, st);
          return true;
        }
      }
      return false;
    });
    return found;
  }

  std::optional<Status> wait_channel_failure(const RemoteChannelId& id, std::chrono::seconds max = 20s) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<Status> found;
    cv_.wait_for(lock, max, [&] {
      for (const auto& [channel, st] : channels_) {
        if (channel == id) {
          found = st;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  size_t channel_failures() {
    std::lock_guard<std::mutex> lock(mu_);
    return channels_.size();
  }

  // The owners of the channels reported failed, in the order reported.
  std::vector<uint64_t> failed_owners() {
    std::lock_guard<std::mutex> lock(mu_);
    return owners_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<RemoteChannelId, Status>> channels_;
  std::vector<uint64_t> owners_;
  std::vector<std::pair<int32_t, Status>> connections_;
};

inline std::unique_ptr<DataConnectionManager> start_manager(int32_t id, FailureLog& log,
                                                            uint64_t fingerprint = kFingerprint,
                                                            const FrameLimits& limits = FrameLimits{}) {
  DataPlaneConfig config;
  config.taskmanager_id = id;
  config.job_fingerprint = fingerprint;
  config.limits = limits;
  Result<std::unique_ptr<DataConnectionManager>> m = DataConnectionManager::start(config, log.callbacks());
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

// TaskManager 1 (producers) and TaskManager 2 (consumers), each knowing the other.
struct TwoTaskManagers {
  FailureLog log1, log2;
  std::unique_ptr<DataConnectionManager> tm1 = start_manager(1, log1);
  std::unique_ptr<DataConnectionManager> tm2 = start_manager(2, log2);

  TwoTaskManagers() {
    EXPECT_TRUE(tm1->add_peer(2, "127.0.0.1", tm2->port()).is_ok());
    EXPECT_TRUE(tm2->add_peer(1, "127.0.0.1", tm1->port()).is_ok());
  }

  // Registers channel `id` both ways: `producer_half` on TaskManager 1, the returned consumer half on 2.
  std::shared_ptr<Channel> connect(const RemoteChannelId& id, const std::shared_ptr<Channel>& producer_half) {
    EXPECT_TRUE(tm1->register_output(id, 2, producer_half).is_ok());
    Result<std::shared_ptr<Channel>> consumer_half = tm2->register_input(id, 1, producer_half->config());
    EXPECT_TRUE(consumer_half.is_ok()) << consumer_half.status().to_string();
    return consumer_half.is_ok() ? std::move(consumer_half).value() : nullptr;
  }
};

// One remote channel: a one-subpartition partition on TaskManager 1 feeding a one-channel gate on 2.
struct OneRemoteChannel {
  explicit OneRemoteChannel(const NetworkConfig& config, const RemoteChannelId& id = RemoteChannelId{})
      : partition(1, config, &producer_n), gate({tms.connect(id, partition.channel(0))}, &consumer_n) {}

  // The gate's next buffer or event, waiting on the consumer's notifier; nothing after 20 s without one.
  std::optional<BufferOrEvent> next() {
    for (;;) {
      if (std::optional<BufferOrEvent> polled = gate.poll_next()) return polled;
      if (!consumer_n.wait(20s)) return gate.poll_next();
    }
  }

  TwoTaskManagers tms;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition;
  InputGate gate;
};

// A peer TaskManager played by hand over a blocking socket whose reads give up after 20 s.
class RawPeer {
 public:
  explicit RawPeer(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{20, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawPeer() { ::close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  bool connected() const { return connected_; }

  void send(const std::vector<uint8_t>& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;  // the manager closed on us: what the test checks next
      off += static_cast<size_t>(n);
    }
  }

  void send_hello(int32_t id, uint64_t fingerprint = kFingerprint, uint32_t version = kProtocolVersion) {
    FrameHead hello;
    hello.type = FrameType::kHello;
    hello.version = version;
    hello.taskmanager_id = id;
    hello.job_fingerprint = fingerprint;
    send(encode_frame(hello, nullptr, 0));
  }

  // The next frame's head and tail; nothing once the connection closed (or after the timeout).
  std::optional<std::pair<FrameHead, std::vector<uint8_t>>> read_frame() {
    std::vector<uint8_t> header(kMaxFrameHeadBytes);
    if (!read_exactly(header.data(), kFrameHeaderBytes)) return std::nullopt;
    Result<FrameHead> decoded = decode_frame_header(header.data(), FrameLimits{});
    if (!decoded.is_ok()) return std::nullopt;
    FrameHead head = std::move(decoded).value();
    const size_t fixed = frame_head_bytes(head.type) - kFrameHeaderBytes;
    if (!read_exactly(header.data() + kFrameHeaderBytes, fixed)) return std::nullopt;
    if (!decode_frame_fixed(header.data() + kFrameHeaderBytes, &head).is_ok()) return std::nullopt;
    std::vector<uint8_t> tail(head.tail_bytes);
    if (!read_exactly(tail.data(), tail.size())) return std::nullopt;
    return std::make_pair(head, std::move(tail));
  }

  // Reads frames until the manager closes the connection; true if it did (rather than the read timing out).
  bool closed_by_peer() {
    for (;;) {
      uint8_t byte;
      const ssize_t n = ::recv(fd_, &byte, 1, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

 private:
  bool read_exactly(uint8_t* out, size_t n) {
    size_t off = 0;
    while (off < n) {
      const ssize_t got = ::recv(fd_, out + off, n - off, 0);
      if (got <= 0) return false;
      off += static_cast<size_t>(got);
    }
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace sluice::runtime::tcp::testing
