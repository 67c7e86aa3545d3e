// Raw HTTP requests to a job's REST endpoint (rest/rest_routes.h): cpp-httplib parses the request line, headers,
// query and body, and our routes read the job id, the trigger id, `mode` and `format`, and the JSON body of a
// savepoint or stop request. The request comes from memory (as cpp-httplib's own server fuzzer does), answered by
// the same routes RestServer installs, for a job that echoes what it was sent back into its answers. A handler must
// answer every request, bad ones with 4xx: an exception escaping it (cpp-httplib would turn it into a bare 500
// carrying the exception's text) aborts here.
#include <httplib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "rest/rest_routes.h"

namespace {

using namespace sluice;
using namespace sluice::rest;

class MemoryStream final : public httplib::Stream {
 public:
  MemoryStream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, size_ - pos_);
    std::memcpy(ptr, data_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    response_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8081;
  }
  socket_t socket() const override { return 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string response_;
};

// process_request is protected: the one request of a connection, as the listening server runs it.
class MemoryServer final : public httplib::Server {
 public:
  void serve(MemoryStream& stream) {
    bool closed = false;
    (void)process_request(stream, /*close_connection=*/true, closed, nullptr);
  }
};

// Echoes what requests give it (a target directory, a trigger id) into its answers, so that request bytes reach the
// JSON the routes write.
class EchoJob final : public RestJob {
 public:
  EchoJob() {
    overview_.job_id = JobId(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
    overview_.name = "fuzzed";
    overview_.start_time_ms = 1000;
    overview_.max_parallelism = 128;
    overview_.vertices = {{0, "Source: bids", 2, {}, {"bids"}, {"bids"}},
                          {1, "per-auction -> Sink", 2, "per-auction", {}, {"per-auction", "Sink"}}};
    overview_.checkpoint_config = RestCheckpointConfig{};
    overview_.configuration = {{"execution.checkpointing.interval", "1 s"}, {"s3.secret-key", "<redacted>"}};
  }
  // Each input starts from the same job, so that a crash replays from its input alone.
  void reset() { last_dir_ = "/savepoints"; }
  const RestJobOverview& overview() const override { return overview_; }
  std::string state() const override { return "RUNNING"; }
  std::optional<CheckpointView> checkpoint_view() const override {
    coordinator::CheckpointStatsTracker t;
    t.report_triggered(CheckpointId(1), checkpoint::SnapshotType::kCheckpoint, 2000, 0, 1);
    t.report_acknowledged(CheckpointId(1), 0, 0, 5, {}, 10);
    t.report_completed(CheckpointId(1), 6, "/ck/chk-1");
    return CheckpointView{t.snapshot(10, 0), 1, RestoredCheckpoint{1, last_dir_, false}};
  }
  void cancel() override {}
  Result<std::string> trigger_savepoint(const std::string& target_dir, checkpoint::SavepointFormatType) override {
    if (target_dir.empty()) return Status::invalid_argument("no savepoint directory");
    if (target_dir == "/busy") return Status::failed_precondition("the job is not running");
    last_dir_ = target_dir;
    return std::string(32, 'a');
  }
  Result<std::string> stop_with_savepoint(const std::string& target_dir, bool,
                                          checkpoint::SavepointFormatType format) override {
    return trigger_savepoint(target_dir, format);
  }
  std::optional<RestSavepointStatus> savepoint_status(const std::string& trigger_id) override {
    RestSavepointStatus st;
    st.in_progress = trigger_id[0] == 'b';
    if (trigger_id[0] == 'c') st.failure = Status::io_error("writing " + last_dir_ + " failed");
    st.location = last_dir_ + "/savepoint-012345-000000000001";
    return st;
  }
  std::vector<RestTaskManager> task_managers() const override { return {{"tm-1", "10.0.0.2", 6124, 0, 2, 0, 3000}}; }
  std::vector<RestSubtask> subtasks() const override {
    return {{0, 0, 1, "10.0.0.2", "tm-1"}, {0, 1, 1, "10.0.0.2", "tm-1"}, {1, 0, 1, "10.0.0.2", "tm-1"}};
  }
  // A counter, a gauge and a histogram, so that GET /metrics prints every kind the Prometheus text format has.
  std::vector<MetricValue> metrics() const override {
    MetricValue records{"fuzzed.map.0", "numRecordsIn", MetricKind::kCounter, 42, {},
                        {{"job_name", "fuzzed"}, {"operator_name", "per-auction \"x\"\\"}, {"subtask_index", "0"}}};
    MetricValue restarts{"fuzzed", "numRestarts", MetricKind::kGauge, 1, {}, {{"job_name", "fuzzed"}}};
    MetricValue latency{"fuzzed", "checkpointDuration", MetricKind::kHistogram, 3, {3, 1, 9, 4.5, 4, 9, 9},
                        {{"job_name", "fuzzed"}}};
    return {records, restarts, latency};
  }
  std::vector<RestException> exceptions() const override {
    return {{5000, "sluice.USER_FUNCTION", "failed writing " + last_dir_, "per-auction -> Sink (1/2)", "10.0.0.2",
             "tm-1"},
            {4000, "sluice.IO_ERROR", "redeploying after a failure", "", "", ""}};
  }
  int64_t num_exceptions() const override { return 20; }

 private:
  RestJobOverview overview_;
  std::string last_dir_ = "/savepoints";
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<EchoJob> job = std::make_shared<EchoJob>();
  static RestRoutes* routes = [] {
    auto* r = new RestRoutes();
    r->add_job(job);
    return r;
  }();
  static MemoryServer* server = [] {
    auto* s = new MemoryServer();
    routes->install(*s);
    s->set_exception_handler([](const httplib::Request& req, httplib::Response&, std::exception_ptr e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "%s %s: the handler threw: %s\n", req.method.c_str(), req.path.c_str(), ex.what());
      }
      std::abort();
    });
    return s;
  }();
  job->reset();
  MemoryStream stream(data, size);
  server->serve(stream);
  return 0;
}
