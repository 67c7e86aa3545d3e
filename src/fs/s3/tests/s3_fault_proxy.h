// A loopback HTTP proxy in front of an S3 test server that fails chosen requests on demand: answers them with an
// S3 error, or forwards them and loses the answer (the server did the work, the client never hears). Requests
// are matched by a substring of their request line ("PUT /bucket/key?partNumber=3&..."), so a test can fail,
// say, the third part of a multipart upload and nothing else.
//
// HTTP/1.1 only as libcurl sends it to S3: requests with a Content-Length body (no chunked uploads), one at a time
// per connection. Responses are forwarded byte for byte without parsing.
// Thread-safety: the methods may be called from any thread while the proxy runs.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sluice::s3::testing {

class S3FaultProxy {
 public:
  enum class Fault {
    kErrorResponse,  // answer with `status` and an S3 <Error> with `code`; the server never sees the request
    kLoseResponse,   // forward the request, drop the server's answer, close the connection
    kCloseUnanswered,  // read the request, close the connection without an answer; the server never sees it
  };

  explicit S3FaultProxy(int upstream_port) : upstream_port_(upstream_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr = loopback(0);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 64);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~S3FaultProxy() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_fd_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : workers_) t.join();
    for (int fd : open_fds_) ::close(fd);
  }

  S3FaultProxy(const S3FaultProxy&) = delete;
  S3FaultProxy& operator=(const S3FaultProxy&) = delete;

  int port() const { return port_; }

  // The next `times` requests (-1: every request) whose request line contains `needle` get `fault`.
  void inject(std::string needle, Fault fault, int times, int status = 500, std::string code = "InternalError") {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.push_back(Rule{std::move(needle), fault, times, status, std::move(code)});
  }

  int faults_injected() const { return injected_.load(); }

 private:
  struct Rule {
    std::string needle;
    Fault fault;
    int times;
    int status;
    std::string code;
  };

  static sockaddr_in loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    return addr;
  }

  static bool send_all(int fd, const char* data, size_t n) {
    while (n > 0) {
      ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      data += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  void track(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(fd);
  }

  void accept_loop() {
    for (;;) {
      int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) return;  // shut down
      if (stopping_) {
        ::close(client);
        return;
      }
      int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr = loopback(upstream_port_);
      if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(upstream);
        ::close(client);
        continue;
      }
      track(client);
      track(upstream);
      auto swallow = std::make_shared<std::atomic<bool>>(false);
      std::lock_guard<std::mutex> lock(mu_);
      workers_.emplace_back([this, client, upstream, swallow] { forward_requests(client, upstream, *swallow); });
      workers_.emplace_back([client, upstream, swallow] { pump_responses(upstream, client, *swallow); });
    }
  }

  // The matching rule for `request_line`, consuming one use of it; nullptr when none matches.
  std::unique_ptr<Rule> take_rule(const std::string& request_line) {
    std::lock_guard<std::mutex> lock(mu_);
    for (Rule& rule : rules_) {
      if (rule.times != 0 && request_line.find(rule.needle) != std::string::npos) {
        if (rule.times > 0) --rule.times;
        injected_.fetch_add(1);
        return std::make_unique<Rule>(rule);
      }
    }
    return nullptr;
  }

  static size_t content_length(const std::string& head) {
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    size_t at = lower.find("\r\ncontent-length:");
    if (at == std::string::npos) return 0;
    return std::stoul(lower.substr(at + 17));
  }

  void forward_requests(int client, int upstream, std::atomic<bool>& swallow) {
    std::string buffer;
    char chunk[64 * 1024];
    for (;;) {
      size_t head_end;
      while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = ::recv(client, chunk, sizeof chunk, 0);
        if (n <= 0) return close_both(client, upstream);
        buffer.append(chunk, static_cast<size_t>(n));
      }
      std::string head = buffer.substr(0, head_end + 4);
      buffer.erase(0, head_end + 4);
      std::unique_ptr<Rule> rule = take_rule(head.substr(0, head.find("\r\n")));
      if (rule != nullptr && rule->fault == Fault::kErrorResponse) {
        std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + rule->code +
                           "</Code><Message>injected by S3FaultProxy</Message><RequestId>FAULT</RequestId></Error>";
        std::string response = "HTTP/1.1 " + std::to_string(rule->status) +
                               " Injected\r\nContent-Type: application/xml\r\nConnection: close\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body;
        send_all(client, response.data(), response.size());
        return close_both(client, upstream);
      }
      if (rule != nullptr && rule->fault == Fault::kCloseUnanswered) {
        size_t remaining = content_length(head) - std::min(content_length(head), buffer.size());
        while (remaining > 0) {  // the whole request arrives, as on a connection the server closed meanwhile
          ssize_t n = ::recv(client, chunk, std::min(sizeof chunk, remaining), 0);
          if (n <= 0) break;
          remaining -= static_cast<size_t>(n);
        }
        return close_both(client, upstream);
      }
      if (rule != nullptr) swallow = true;  // kLoseResponse: the server answers, the client never hears
      if (!send_all(upstream, head.data(), head.size())) return close_both(client, upstream);
      size_t remaining = content_length(head);
      size_t from_buffer = std::min(remaining, buffer.size());
      if (!send_all(upstream, buffer.data(), from_buffer)) return close_both(client, upstream);
      buffer.erase(0, from_buffer);
      remaining -= from_buffer;
      while (remaining > 0) {
        ssize_t n = ::recv(client, chunk, std::min(sizeof chunk, remaining), 0);
        if (n <= 0 || !send_all(upstream, chunk, static_cast<size_t>(n))) return close_both(client, upstream);
        remaining -= static_cast<size_t>(n);
      }
      if (rule != nullptr) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let the server finish the work
        return close_both(client, upstream);
      }
    }
  }

  static void pump_responses(int upstream, int client, std::atomic<bool>& swallow) {
    char chunk[64 * 1024];
    for (;;) {
      ssize_t n = ::recv(upstream, chunk, sizeof chunk, 0);
      if (n <= 0) break;
      if (!swallow && !send_all(client, chunk, static_cast<size_t>(n))) break;
    }
    ::shutdown(client, SHUT_RDWR);
  }

  void close_both(int client, int upstream) {
    ::shutdown(client, SHUT_RDWR);
    ::shutdown(upstream, SHUT_RDWR);
  }

  const int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> injected_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<Rule> rules_;          // guarded by mu_
  std::vector<int> open_fds_;        // guarded by mu_; closed by the destructor
  std::vector<std::thread> workers_; // guarded by mu_
};

}  // namespace sluice::s3::testing
