// A fake RestJob (two vertices, checkpoint statistics, savepoint requests, task managers, metrics, failures) and a
// fixture with a started RestServer, shared by the REST endpoint's tests.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rest/rest_client.h"
#include "rest/rest_server.h"

namespace sluice::rest::testing {

// Sends `request` as is to 127.0.0.1:port and returns everything the server answers until it closes.
inline std::string raw_http(int32_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "socket failed";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// The status line and headers of GET `path` on 127.0.0.1:port (HTTP/1.0, so the server closes after answering).
inline std::string raw_http_head(int32_t port, const std::string& path) {
  const std::string out = raw_http(port, "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  return out.substr(0, out.find("\r\n\r\n"));
}

class FakeJob final : public RestJob {
 public:
  explicit FakeJob(bool checkpointing) : checkpointing_(checkpointing) {
    overview_.job_id = JobId(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
    overview_.name = "fake";
    overview_.start_time_ms = 1000;
    overview_.max_parallelism = 128;
    overview_.vertices = {{0, "Source: bids", 2, {}, {"bids"}, {"bids"}},
                          {1, "per-auction -> Sink", 2, "per-auction", {}, {"per-auction", "Sink"}, {{0, "HASH"}}}};
    if (checkpointing) {
      RestCheckpointConfig c;
      c.interval_ms = 1000;
      c.timeout_ms = 600'000;
      c.state_backend = "HashMapStateBackend";
      c.checkpoint_storage = "FileSystemCheckpointStorage";
      overview_.checkpoint_config = c;
    }
    overview_.configuration = {{"execution.checkpointing.interval", "1 s"}, {"s3.secret-key", "<redacted>"}};
  }
  const RestJobOverview& overview() const override { return overview_; }
  std::string state() const override {
    std::lock_guard lock(mu_);
    return state_;
  }
  std::optional<CheckpointView> checkpoint_view() const override {
    if (!checkpointing_) return std::nullopt;
    coordinator::CheckpointStatsTracker t;
    t.report_triggered(CheckpointId(1), checkpoint::SnapshotType::kCheckpoint, 2000, 0, 1);
    t.report_acknowledged(CheckpointId(1), 0, 0, 5, {}, 10);
    t.report_completed(CheckpointId(1), 6, "/ck/chk-1");
    return CheckpointView{t.snapshot(10, 0), 0, std::nullopt};
  }
  void cancel() override {
    ++cancels;
    std::lock_guard lock(mu_);
    state_ = "CANCELLING";
  }
  Result<std::string> trigger_savepoint(const std::string& target_dir, checkpoint::SavepointFormatType format) override {
    std::lock_guard lock(mu_);
    last_format = format;
    if (target_dir.empty()) return Status::invalid_argument("no savepoint directory");
    if (state_ != "RUNNING") return Status::failed_precondition("the job is " + state_ + ", not RUNNING");
    last_dir = target_dir;
    return std::string(32, 'a');
  }
  Result<std::string> stop_with_savepoint(const std::string& target_dir, bool drain,
                                          checkpoint::SavepointFormatType format) override {
    last_drain = drain;
    return trigger_savepoint(target_dir, format);
  }
  std::optional<RestSavepointStatus> savepoint_status(const std::string& trigger_id) override {
    if (trigger_id != std::string(32, 'a')) return std::nullopt;
    RestSavepointStatus st;
    st.in_progress = polls++ == 0;
    if (!st.in_progress) {
      if (last_dir == "/fail") {
        st.failure = Status::io_error("disk full");
      } else {
        st.location = last_dir + "/savepoint-012345-000000000001";
      }
    }
    return st;
  }
  // Two TaskManagers; subtask k of each vertex on tm-<k+1> (attempt 1); none placed once restarting.
  std::vector<RestTaskManager> task_managers() const override {
    return {{"tm-1", "10.0.0.1", 6124, 6125, 2, 0, 5000}, {"tm-2", "10.0.0.2", 6124, 0, 2, 1, 5001}};
  }
  std::vector<RestSubtask> subtasks() const override {
    if (state() != "RUNNING") return {};
    std::vector<RestSubtask> out;
    for (int32_t v = 0; v < 2; ++v)
      for (int32_t k = 0; k < 2; ++k) out.push_back({v, k, 1, "10.0.0." + std::to_string(k + 1), "tm-" + std::to_string(k + 1)});
    return out;
  }
  // One counter of an operator subtask and one gauge of the job, as a MetricRegistry snapshot gives them; the task
  // times of the second vertex's subtasks (subtask 1 back-pressured) and the watermarks of its operators.
  std::vector<MetricValue> metrics() const override {
    MetricValue records{"fake.map.0", "numRecordsIn", MetricKind::kCounter, 42, {},
                        {{"job_name", "fake"}, {"operator_name", "map"}, {"subtask_index", "0"}}};
    MetricValue restarts{"fake", "numRestarts", MetricKind::kGauge, 1, {}, {{"job_name", "fake"}}};
    std::vector<MetricValue> out{records, restarts};
    const std::string task = "per-auction -> Sink";
    for (int i = 0; i < 2; ++i) {
      const std::string sub = std::to_string(i);
      auto task_gauge = [&](const char* name, double v) {
        out.push_back({"fake." + task + "." + sub, name, MetricKind::kGauge, v, {},
                       {{"job_name", "fake"}, {"task_name", task}, {"subtask_index", sub}}});
      };
      task_gauge("backPressuredTimeMsPerSecond", i == 0 ? 50 : 700);
      task_gauge("idleTimeMsPerSecond", i == 0 ? 900 : 100);
      task_gauge("busyTimeMsPerSecond", i == 0 ? 50 : 200);
      out.push_back({"fake.per-auction." + sub, "currentInputWatermark", MetricKind::kGauge, 1000.0 + i, {},
                     {{"job_name", "fake"}, {"operator_name", "per-auction"}, {"subtask_index", sub}}});
      out.push_back({"fake.Sink." + sub, "currentOutputWatermark", MetricKind::kGauge, 900.0 + i, {},
                     {{"job_name", "fake"}, {"operator_name", "Sink"}, {"subtask_index", sub}}});
    }
    return out;
  }
  std::vector<RestException> exceptions() const override {
    return {{5000, "sluice.USER_FUNCTION", "user function failed", "per-auction -> Sink (2/2)", "10.0.0.2", "tm-2"},
            {4000, "sluice.IO_ERROR", "redeploying after a failure: disk full", "", "", ""}};
  }
  int64_t num_exceptions() const override { return 3; }
  void set_state(std::string s) {
    std::lock_guard lock(mu_);
    state_ = std::move(s);
  }
  std::string last_dir;
  checkpoint::SavepointFormatType last_format = checkpoint::SavepointFormatType::kCanonical;
  bool last_drain = false;
  int polls = 0;
  std::string id() const { return overview_.job_id.to_hex(); }
  void set_id(JobId id) { overview_.job_id = id; }

  std::atomic<int> cancels{0};

 private:
  bool checkpointing_;
  RestJobOverview overview_;
  mutable std::mutex mu_;
  std::string state_ = "RUNNING";
};

class RestServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = RestServer::start(RestServerConfig{});
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    server = std::move(s).value();
    ASSERT_GT(server->port(), 0);
  }
  HttpResponse call(const std::string& method, const std::string& path, const std::string& body = "") {
    auto r = http_request(method, "127.0.0.1", server->port(), path, body);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? *r : HttpResponse{};
  }
  nlohmann::json json_of(const HttpResponse& r) { return nlohmann::json::parse(r.body); }

  std::unique_ptr<RestServer> server;
};

}  // namespace sluice::rest::testing
