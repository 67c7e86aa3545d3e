// Task reports over the JobMasterGateway on loopback: state changes with their cause, acknowledgements with their
// state handles intact, declines; reports of an old attempt dropped, reports under another leader epoch refused
// without retries, a JobManager that is away retried until the report timeout, and an acknowledgement whose state
// does not decode declined at once.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proto/job_master.grpc.pb.h"
#include "rpc/job_master_service.h"
#include "rpc/resource_manager_service.h"
#include "rpc/task_reports.h"

namespace sluice::rpc {
namespace {

// The JobMaster's side, recording what reached it.
struct Recorder final : runtime::TaskListener, runtime::CheckpointResponder {
  void on_task_end_of_data(int32_t v, int32_t s) override { add("end_of_data " + at(v, s)); }
  void on_task_finished(int32_t v, int32_t s) override { add("finished " + at(v, s)); }
  void on_task_cancelled(int32_t v, int32_t s) override { add("cancelled " + at(v, s)); }
  void on_task_failed(int32_t v, int32_t s, const Status& cause) override {
    std::lock_guard lock(mu);
    failures.push_back(cause);
    events.push_back("failed " + at(v, s));
  }
  void acknowledge(CheckpointId id, JobVertexId v, SubtaskIndex s,
                   std::map<std::string, checkpoint::OperatorSubtaskState> st,
                   runtime::SubtaskSnapshotStats stats_) override {
    std::lock_guard lock(mu);
    acked = std::move(st);
    stats = stats_;
    events.push_back("ack " + std::to_string(id.value()) + " " + at(v.value(), s.value()));
  }
  void decline(CheckpointId id, JobVertexId v, SubtaskIndex s, const Status& reason) override {
    std::lock_guard lock(mu);
    failures.push_back(reason);
    events.push_back("decline " + std::to_string(id.value()) + " " + at(v.value(), s.value()));
  }
  static std::string at(int32_t v, int32_t s) { return std::to_string(v) + "/" + std::to_string(s); }
  void add(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }

  std::mutex mu;
  std::vector<std::string> events;
  std::vector<Status> failures;
  std::map<std::string, checkpoint::OperatorSubtaskState> acked;
  runtime::SubtaskSnapshotStats stats;
};

constexpr uint64_t kEpoch = 3;
constexpr int32_t kCurrentAttempt = 2;
// The attempt was deployed to TaskManager "tm-1" under its registration 9.
bool current_on_tm1(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& id) {
  return id.attempt_number == kCurrentAttempt && from.task_manager_id == "tm-1" && from.registration_id == 9;
}

class TaskReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service_.bind(&rec_, &rec_, current_on_tm1);
    auto s = RpcServer::start("127.0.0.1", 0, {&service_});
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    server_ = std::move(*s);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  TaskReports reports(int32_t attempt = kCurrentAttempt, uint64_t epoch = kEpoch) {
    return TaskReports(address(), TaskManagerSessionId{epoch, "tm-1", 9}, attempt, 2'000);
  }
  std::vector<std::string> events() {
    std::lock_guard lock(rec_.mu);
    return rec_.events;
  }

  Recorder rec_;
  JobMasterService service_{kEpoch};
  std::unique_ptr<RpcServer> server_;
};

checkpoint::StreamStateHandle inline_handle(std::vector<uint8_t> bytes, uint64_t checksum) {
  checkpoint::StreamStateHandle h;
  h.size_bytes = bytes.size();
  h.inline_bytes = std::move(bytes);
  h.checksum = checksum;
  return h;
}

checkpoint::StreamStateHandle file_handle(const std::string& path, uint64_t size, uint64_t checksum) {
  checkpoint::StreamStateHandle h;
  h.relative_path = path;
  h.size_bytes = size;
  h.checksum = checksum;
  return h;
}

TEST_F(TaskReportsTest, TaskStateChangesArriveWithTheirCause) {
  TaskReports r = reports();
  r.on_task_end_of_data(1, 0);
  r.on_task_finished(1, 0);
  r.on_task_cancelled(0, 3);
  r.on_task_failed(2, 1, Status::user_function("map (2/4) threw: division by zero"));
  EXPECT_EQ(events(), (std::vector<std::string>{"end_of_data 1/0", "finished 1/0", "cancelled 0/3", "failed 2/1"}));
  std::lock_guard lock(rec_.mu);
  ASSERT_EQ(rec_.failures.size(), 1u);
  EXPECT_EQ(rec_.failures[0].code(), StatusCode::kUserFunction);
  EXPECT_EQ(rec_.failures[0].message(), "map (2/4) threw: division by zero");
  EXPECT_TRUE(rec_.failures[0].retriable());
}

TEST_F(TaskReportsTest, AnAcknowledgementArrivesWithItsStateHandlesIntact) {
  checkpoint::OperatorSubtaskState keyed;
  keyed.subtask_index = 1;
  checkpoint::KeyGroupsStateHandle k;
  k.range = KeyGroupRange(32, 63);
  for (uint64_t o = 0; o <= 32; ++o) k.offsets.push_back(o * 10);
  k.stream = file_handle("chk-7/a1b2", 320, 0xabcdef);
  keyed.keyed_state = k;
  keyed.operator_state = inline_handle({1, 2, 3}, 0x1234);
  keyed.channel_state = inline_handle({9, 8}, 0x77);
  checkpoint::OperatorSubtaskState incremental;
  incremental.subtask_index = 1;
  checkpoint::IncrementalKeyedStateHandle inc;
  inc.range = KeyGroupRange(32, 63);
  inc.backend_id = "rocksdb-3f";
  inc.checkpoint_id = CheckpointId(7);
  inc.shared_files.push_back({"000012.sst", file_handle("../shared/x1", 4096, 0x55), true});
  inc.private_files.push_back({"MANIFEST-000004", file_handle("chk-7/m1", 120, 0x66), false});
  inc.state_meta = {4, 5, 6};
  incremental.incremental_keyed_state = inc;
  std::map<std::string, checkpoint::OperatorSubtaskState> state{{"uid-sum", keyed}, {"uid-window", incremental}};
  runtime::SubtaskSnapshotStats stats{3, 40, 5, 4536, 2, 4416, 2, true};

  reports().acknowledge(CheckpointId(7), JobVertexId(4), SubtaskIndex(1), state, stats);
  EXPECT_EQ(events(), (std::vector<std::string>{"ack 7 4/1"}));
  std::lock_guard lock(rec_.mu);
  EXPECT_EQ(rec_.acked, state);
  EXPECT_EQ(rec_.stats.async_duration_ms, 40);
  EXPECT_EQ(rec_.stats.state_size_bytes, 4536);
  EXPECT_EQ(rec_.stats.checkpointed_size_bytes, 4416);
  EXPECT_TRUE(rec_.stats.unaligned);
}

TEST_F(TaskReportsTest, ADeclineArrivesWithItsReason) {
  reports().decline(CheckpointId(5), JobVertexId(0), SubtaskIndex(0), Status::io_error("s3://bucket/chk-5: SlowDown"));
  EXPECT_EQ(events(), (std::vector<std::string>{"decline 5 0/0"}));
  std::lock_guard lock(rec_.mu);
  EXPECT_EQ(rec_.failures[0].code(), StatusCode::kIOError);
  EXPECT_TRUE(rec_.failures[0].retriable());
}

TEST_F(TaskReportsTest, ReportsOfAnAttemptThatIsNoLongerCurrentAreDropped) {
  TaskReports old = reports(kCurrentAttempt - 1);
  old.on_task_failed(1, 0, Status::user_function("late"));
  old.acknowledge(CheckpointId(3), JobVertexId(1), SubtaskIndex(0), {}, {});
  EXPECT_TRUE(events().empty());
}

TEST_F(TaskReportsTest, ReportsFromAnotherRegistrationOfTheTaskManagerAreDropped) {
  TaskReports replaced(address(), TaskManagerSessionId{kEpoch, "tm-1", 8}, kCurrentAttempt, 2'000);
  replaced.on_task_failed(1, 0, Status::user_function("from a registration that was replaced"));
  TaskReports other(address(), TaskManagerSessionId{kEpoch, "tm-2", 9}, kCurrentAttempt, 2'000);
  other.on_task_finished(1, 0);
  EXPECT_TRUE(events().empty());
}

TEST_F(TaskReportsTest, ReportsUnderAnotherLeaderEpochAreRefusedWithoutRetries) {
  TaskReports stale = reports(kCurrentAttempt, kEpoch - 1);
  const auto t0 = std::chrono::steady_clock::now();
  stale.on_task_finished(1, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1'500));  // not retried to the timeout
  EXPECT_TRUE(events().empty());
}

TEST_F(TaskReportsTest, AReportToAJobManagerThatIsAwayIsRetriedUntilTheTimeout) {
  const std::string gone = address();
  server_->shutdown();
  TaskReports r(gone, TaskManagerSessionId{kEpoch, "tm-1", 9}, kCurrentAttempt, 400);
  const auto t0 = std::chrono::steady_clock::now();
  r.on_task_finished(1, 0);
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(400));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_TRUE(events().empty());
}

TEST_F(TaskReportsTest, AReportBeforeTheJobIsBoundIsRetriedUntilItIsTaken) {
  service_.unbind();
  std::thread bind_later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    service_.bind(&rec_, &rec_, current_on_tm1);
  });
  TaskReports r(address(), TaskManagerSessionId{kEpoch, "tm-1", 9}, kCurrentAttempt, 10'000);
  r.on_task_finished(1, 0);  // returns once delivered
  bind_later.join();
  EXPECT_EQ(events(), (std::vector<std::string>{"finished 1/0"}));
}

TEST_F(TaskReportsTest, AStateChangeDeliveredTwiceCountsOnce) {
  auto stub = v1::JobMasterGateway::NewStub(grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
  v1::TaskStateChange req;
  req.mutable_session()->set_leader_epoch(kEpoch);
  req.mutable_session()->set_task_manager_id("tm-1");
  req.mutable_session()->set_registration_id(9);
  req.mutable_attempt()->set_vertex(1);
  req.mutable_attempt()->set_attempt_number(kCurrentAttempt);
  req.set_event(v1::TASK_FINISHED);
  for (int i = 0; i < 2; ++i) {  // a retry whose first try arrived
    v1::ReportAccepted resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub->UpdateTaskState(&ctx, req, &resp).ok());
  }
  EXPECT_EQ(events(), (std::vector<std::string>{"finished 1/0"}));
}

TEST_F(TaskReportsTest, AnAcknowledgementWhoseStateDoesNotDecodeDeclinesTheCheckpoint) {
  auto stub = v1::JobMasterGateway::NewStub(grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
  v1::AcknowledgeCheckpointRequest req;
  req.mutable_session()->set_leader_epoch(kEpoch);
  req.mutable_session()->set_task_manager_id("tm-1");
  req.mutable_session()->set_registration_id(9);
  req.mutable_attempt()->set_vertex(2);
  req.mutable_attempt()->set_subtask(1);
  req.mutable_attempt()->set_attempt_number(kCurrentAttempt);
  req.set_checkpoint_id(8);
  req.set_subtask_states(std::string("\xff\xff\xff\xff garbage", 12));
  v1::ReportAccepted resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub->AcknowledgeCheckpoint(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(events(), (std::vector<std::string>{"decline 8 2/1"}));
  std::lock_guard lock(rec_.mu);
  EXPECT_EQ(rec_.failures[0].code(), StatusCode::kCorruption);
  EXPECT_NE(rec_.failures[0].message().find("checkpoint 8"), std::string::npos) << rec_.failures[0].to_string();
}

}  // namespace
}  // namespace sluice::rpc
