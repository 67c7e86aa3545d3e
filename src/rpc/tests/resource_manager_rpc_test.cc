// The ResourceManagerGateway over real gRPC on loopback: a TaskManager's connection registers, heartbeats and is
// refused for good when it runs another program; either side sees the other go at once (the connection watch);
// a registration the JobManager dropped and a JobManager that came back under a new epoch are registered with
// again; a request under an old leader epoch is refused (fencing).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "rpc/resource_manager_connection.h"
#include "rpc/resource_manager_service.h"

namespace sluice::rpc {
namespace {

constexpr uint64_t kFingerprint = 42;
// Generous for a loaded CI machine: a heartbeat every 100 ms, lost after 3 s or 5 failed heartbeats in a row.
const cluster::HeartbeatSettings kHeartbeats{100, 3'000, 5};

// What the connection reported, in order.
class Recorder final : public ResourceManagerConnection::Listener {
 public:
  void on_registered(uint64_t epoch, uint64_t registration_id, const cluster::HeartbeatSettings& hb) override {
    add([&] {
      epochs.push_back(epoch);
      registrations.push_back(registration_id);
      interval_ms = hb.interval_ms;
    });
  }
  void on_jobmanager_lost(const std::string& reason) override { add([&] { lost.push_back(reason); }); }
  void on_refused(const Status& reason) override { add([&] { refused = reason; }); }
  void on_job_ended(const std::string& status) override { add([&] { job_ended = status; }); }

  // Waits up to 10 s for `pred` (called under the lock).
  bool wait(const std::function<bool()>& pred) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), pred);
  }

  std::mutex mu;
  std::condition_variable cv;
  std::vector<uint64_t> epochs, registrations;
  std::vector<std::string> lost;
  Status refused = Status::ok();
  std::string job_ended;
  int64_t interval_ms = 0;

 private:
  void add(const std::function<void()>& f) {
    {
      std::lock_guard lock(mu);
      f();
    }
    cv.notify_all();
  }
};

// A JobManager's control plane: a ResourceManager served under `epoch`.
struct JobManagerSide {
  JobManagerSide(uint64_t epoch, int32_t port = 0) : rm("0.1.0", kFingerprint, kHeartbeats, SystemClock::shared().get()), service(&rm, epoch) {
    auto s = RpcServer::start("127.0.0.1", port, {&service});
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    if (s.is_ok()) server = std::move(*s);
  }
  ~JobManagerSide() { stop(); }
  void stop() {
    service.shutdown();
    if (server) server->shutdown();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }

  cluster::ResourceManager rm;
  ResourceManagerService service;
  std::unique_ptr<RpcServer> server;
};

cluster::TaskManagerRegistration registration(const std::string& id, uint64_t fingerprint = kFingerprint) {
  return cluster::TaskManagerRegistration{id, "127.0.0.1", 6122, 6121, 2, "0.1.0", fingerprint, {}};
}

std::unique_ptr<ResourceManagerConnection> connect(const std::string& address, Recorder* recorder,
                                                   cluster::TaskManagerRegistration r) {
  auto c = std::make_unique<ResourceManagerConnection>(
      ResourceManagerConnectionConfig{address, std::move(r), 50}, recorder, SystemClock::shared().get());
  c->start();
  return c;
}

// Waits up to 10 s until `rm` offers slots (it does once it sees a TaskManager's connection watch); returns how many.
int32_t wait_slots_offered(cluster::ResourceManager& rm) {
  for (int i = 0; i < 1000 && rm.free_slots() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return rm.free_slots();
}

// Waits up to 10 s until `jm` lost a TaskManager, and returns what it lost.
std::vector<cluster::LostTaskManager> wait_lost(cluster::ResourceManager& rm) {
  for (int i = 0; i < 1000; ++i) {
    auto lost = rm.take_lost();
    if (!lost.empty()) return lost;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

TEST(ResourceManagerRpc, ATaskManagerRegistersAndItsHeartbeatsKeepItAlive) {
  JobManagerSide jm(7);
  Recorder rec;
  auto conn = connect(jm.address(), &rec, registration("tm-1"));
  ASSERT_TRUE(rec.wait([&] { return !rec.registrations.empty(); }));
  {
    std::lock_guard lock(rec.mu);
    EXPECT_EQ(rec.epochs[0], 7u);
    EXPECT_EQ(rec.interval_ms, 100);
  }
  ASSERT_EQ(jm.rm.task_managers().size(), 1u);
  EXPECT_EQ(jm.rm.total_slots(), 2);
  // Heartbeats (every 100 ms) keep the registration fresh: its last one is well within the timeout.
  const int64_t registered_at = jm.rm.task_managers()[0].registered_at_ms;
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_GT(jm.rm.task_managers()[0].last_heartbeat_ms, registered_at);
  EXPECT_TRUE(jm.rm.take_lost(SystemClock::shared()->now_ms() + 1'000).empty());
  conn->stop();
  std::lock_guard lock(rec.mu);
  EXPECT_TRUE(rec.lost.empty());
}

TEST(ResourceManagerRpc, ATaskManagerOfAnotherProgramIsRefusedForGoodNamingBothFingerprints) {
  JobManagerSide jm(1);
  Recorder rec;
  auto conn = connect(jm.address(), &rec, registration("tm-1", 0x99));
  ASSERT_TRUE(rec.wait([&] { return !rec.refused.is_ok(); }));
  std::lock_guard lock(rec.mu);
  EXPECT_EQ(rec.refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(rec.refused.message().find("0000000000000099"), std::string::npos) << rec.refused.to_string();
  EXPECT_NE(rec.refused.message().find("000000000000002a"), std::string::npos) << rec.refused.to_string();
  EXPECT_TRUE(rec.registrations.empty());
  EXPECT_EQ(jm.rm.total_slots(), 0);
}

TEST(ResourceManagerRpc, TheJobManagerLosesATaskManagerWhoseConnectionEndsAtOnce) {
  JobManagerSide jm(1);
  Recorder rec;
  auto conn = connect(jm.address(), &rec, registration("tm-1"));
  ASSERT_TRUE(rec.wait([&] { return !rec.registrations.empty(); }));
  // Its slots are offered once the JobManager sees the connection watch.
  ASSERT_EQ(wait_slots_offered(jm.rm), 2);
  const auto t0 = std::chrono::steady_clock::now();
  conn->stop();  // the TaskManager's side of the watch call goes, as when its process dies
  auto lost = wait_lost(jm.rm);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].task_manager_id, "tm-1");
  EXPECT_NE(lost[0].reason.find("connection to the TaskManager lost"), std::string::npos) << lost[0].reason;
  // Well before the heartbeat timeout (3 s) could have said so.
  EXPECT_LT(ms, 2'000);
}

// A second process with the same taskmanager.resource-id waits (it is told why, and tries again) instead of
// replacing the live one; when the live one goes, the second registers by itself.
TEST(ResourceManagerRpc, ASecondTaskManagerWithTheSameIdWaitsUntilTheFirstIsGone) {
  JobManagerSide jm(1);
  Recorder first_rec;
  auto first = connect(jm.address(), &first_rec, registration("tm-1"));
  ASSERT_TRUE(first_rec.wait([&] { return !first_rec.registrations.empty(); }));
  ASSERT_EQ(wait_slots_offered(jm.rm), 2);
  Recorder second_rec;
  cluster::TaskManagerRegistration other = registration("tm-1");
  other.rpc_port = 7122;
  auto second = connect(jm.address(), &second_rec, other);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'000));  // 20 tries at the 50 ms retry interval
  {
    std::lock_guard lock(second_rec.mu);
    EXPECT_TRUE(second_rec.registrations.empty());
    EXPECT_TRUE(second_rec.refused.is_ok()) << second_rec.refused.to_string();  // not refused for good
  }
  ASSERT_EQ(jm.rm.task_managers().size(), 1u);
  EXPECT_EQ(jm.rm.task_managers()[0].registration.rpc_port, 6122);
  EXPECT_TRUE(jm.rm.take_lost().empty());
  {
    std::lock_guard lock(first_rec.mu);
    EXPECT_EQ(first_rec.registrations.size(), 1u);
    EXPECT_TRUE(first_rec.lost.empty());
  }
  first->stop();  // the holder goes
  ASSERT_TRUE(second_rec.wait([&] { return !second_rec.registrations.empty(); }));
  ASSERT_EQ(jm.rm.task_managers().size(), 1u);
  EXPECT_EQ(jm.rm.task_managers()[0].registration.rpc_port, 7122);
  second->stop();
}

TEST(ResourceManagerRpc, ATaskManagerSeesItsJobManagerGoAtOnceAndRegistersWithTheNextUnderItsEpoch) {
  auto jm = std::make_unique<JobManagerSide>(1);
  const int32_t port = jm->server->port();
  Recorder rec;
  auto conn = connect(jm->address(), &rec, registration("tm-1"));
  ASSERT_TRUE(rec.wait([&] { return !rec.registrations.empty(); }));
  jm.reset();  // the JobManager goes
  ASSERT_TRUE(rec.wait([&] { return !rec.lost.empty(); }));
  // A new JobManager (a new leader epoch) on the same address: the TaskManager registers with it by itself.
  JobManagerSide next(2, port);
  ASSERT_TRUE(next.server) << "port " << port << " could not be bound again";
  ASSERT_TRUE(rec.wait([&] { return rec.epochs.size() == 2; }));
  {
    std::lock_guard lock(rec.mu);
    EXPECT_EQ(rec.epochs[1], 2u);
  }
  // Not under rec.mu: the ResourceManager's lock is taken on gRPC threads that report to `rec`.
  EXPECT_EQ(next.rm.task_managers().size(), 1u);
}

TEST(ResourceManagerRpc, ARegistrationTheJobManagerDroppedIsMadeAgain) {
  JobManagerSide jm(1);
  Recorder rec;
  auto conn = connect(jm.address(), &rec, registration("tm-1"));
  ASSERT_TRUE(rec.wait([&] { return !rec.registrations.empty(); }));
  // As if its heartbeats had stopped for longer than the timeout (a paused process): the JobManager drops it.
  auto lost = jm.rm.take_lost(SystemClock::shared()->now_ms() + 60'000);
  ASSERT_EQ(lost.size(), 1u);
  ASSERT_TRUE(rec.wait([&] { return rec.registrations.size() == 2; }));
  std::lock_guard lock(rec.mu);
  ASSERT_EQ(rec.lost.size(), 1u);
  EXPECT_NE(rec.registrations[0], rec.registrations[1]);
  EXPECT_EQ(jm.rm.task_managers().size(), 1u);
  EXPECT_EQ(jm.rm.task_managers()[0].registration_id, rec.registrations[1]);
}

TEST(ResourceManagerRpc, ATaskManagerWithoutAJobManagerGivesUpAfterTheRegistrationTimeout) {
  Recorder rec;
  // Nothing listens there: every registration attempt fails.
  auto conn = std::make_unique<ResourceManagerConnection>(
      ResourceManagerConnectionConfig{"127.0.0.1:1", registration("tm-1"), 50, 300}, &rec, SystemClock::shared().get());
  conn->start();
  ASSERT_TRUE(rec.wait([&] { return !rec.refused.is_ok(); }));
  std::lock_guard lock(rec.mu);
  EXPECT_EQ(rec.refused.code(), StatusCode::kTimeout);
  EXPECT_NE(rec.refused.message().find("taskmanager.registration.timeout (300 ms)"), std::string::npos)
      << rec.refused.to_string();
  EXPECT_TRUE(rec.registrations.empty());
}

TEST(ResourceManagerRpc, TheEndOfTheJobEndsTheConnectionInsteadOfARegistrationAgain) {
  JobManagerSide jm(1);
  Recorder rec;
  auto conn = connect(jm.address(), &rec, registration("tm-1"));
  ASSERT_TRUE(rec.wait([&] { return !rec.registrations.empty(); }));
  jm.service.end_job("FINISHED");
  ASSERT_TRUE(rec.wait([&] { return !rec.job_ended.empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several retry intervals: no registration follows
  std::lock_guard lock(rec.mu);
  EXPECT_EQ(rec.job_ended, "FINISHED");
  EXPECT_TRUE(rec.lost.empty());
  EXPECT_EQ(rec.registrations.size(), 1u);
}

TEST(ResourceManagerRpc, AHeartbeatUnderAnotherLeaderEpochIsRefusedAndChangesNothing) {
  JobManagerSide jm(5);
  auto reg = jm.rm.register_task_manager(registration("tm-1"));
  ASSERT_TRUE(reg.is_ok());
  auto stub = v1::ResourceManagerGateway::NewStub(grpc::CreateChannel(jm.address(), grpc::InsecureChannelCredentials()));
  v1::HeartbeatRequest req;
  req.mutable_session()->set_leader_epoch(4);
  req.mutable_session()->set_task_manager_id("tm-1");
  req.mutable_session()->set_registration_id(*reg);
  v1::HeartbeatResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub->Heartbeat(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_NE(s.error_message().find("epoch 4"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("epoch 5"), std::string::npos) << s.error_message();
  // An unknown registration under the right epoch: NOT_FOUND (register again).
  req.mutable_session()->set_leader_epoch(5);
  req.mutable_session()->set_registration_id(*reg + 1);
  grpc::ClientContext ctx2;
  EXPECT_EQ(stub->Heartbeat(&ctx2, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  req.mutable_session()->set_registration_id(*reg);
  grpc::ClientContext ctx3;
  EXPECT_TRUE(stub->Heartbeat(&ctx3, req, &resp).ok());
}

TEST(ResourceManagerRpc, AMalformedRegistrationIsRefusedNamingTheField) {
  JobManagerSide jm(1);
  auto stub = v1::ResourceManagerGateway::NewStub(grpc::CreateChannel(jm.address(), grpc::InsecureChannelCredentials()));
  v1::RegisterTaskManagerRequest req;
  req.set_protocol_version(kControlProtocolVersion);
  req.set_task_manager_id("tm-1");
  req.set_host("127.0.0.1");
  req.set_rpc_port(6122);
  req.set_data_port(6121);
  req.set_num_slots(0);
  req.set_sluice_version("0.1.0");
  req.set_job_graph_fingerprint(kFingerprint);
  v1::RegisterTaskManagerResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub->RegisterTaskManager(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("taskmanager.numberOfTaskSlots"), std::string::npos) << s.error_message();
  req.set_protocol_version(99);
  req.set_num_slots(1);
  grpc::ClientContext ctx2;
  s = stub->RegisterTaskManager(&ctx2, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("version 99"), std::string::npos) << s.error_message();
}

}  // namespace
}  // namespace sluice::rpc
