// The ResourceManager's decisions with a manual clock: who may register, when a TaskManager counts as lost and what
// it held, and how slots are given out (packed, or spread out as cluster.evenly-spread-out-slots asks); and the loss
// monitor that reports lost TaskManagers to the JobManager's parts.
#include "cluster/resource_manager.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>

#include "cluster/task_manager_loss_monitor.h"

namespace sluice::cluster {
namespace {

constexpr uint64_t kFingerprint = 0xfeedf00d12345678ULL;

TaskManagerRegistration tm(const std::string& id, int32_t slots) {
  return TaskManagerRegistration{id, "10.0.0." + std::to_string(id.size()), 6122, 6121, slots, "0.1.0", kFingerprint, {}};
}

class ResourceManagerTest : public ::testing::Test {
 protected:
  ManualClock clock_{1'000};
  ResourceManager rm_{"0.1.0", kFingerprint, HeartbeatSettings{100, 500, 2}, &clock_};
};

TEST(HeartbeatSettings, NamesTheKeyOfAValueOutOfRange) {
  EXPECT_TRUE(HeartbeatSettings{}.validate().is_ok());
  auto message = [](int64_t interval_ms, int64_t timeout_ms, int32_t threshold) {
    return HeartbeatSettings{interval_ms, timeout_ms, threshold}.validate().to_string();
  };
  EXPECT_NE(message(0, 50, 2).find("heartbeat.interval"), std::string::npos);
  EXPECT_NE(message(100, 100, 2).find("heartbeat.timeout"), std::string::npos);
  EXPECT_NE(message(100, 500, 0).find("heartbeat.rpc-failure-threshold"), std::string::npos);
}

TEST_F(ResourceManagerTest, ATaskManagerOfAnotherReleaseOrProgramIsRefusedNamingBoth) {
  TaskManagerRegistration old = tm("tm-1", 2);
  old.sluice_version = "0.0.9";
  auto r = rm_.register_task_manager(old);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("0.0.9"), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().message().find("0.1.0"), std::string::npos) << r.status().to_string();

  TaskManagerRegistration other = tm("tm-1", 2);
  other.job_graph_fingerprint = 0x1111;
  r = rm_.register_task_manager(other);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("0000000000001111"), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().message().find("feedf00d12345678"), std::string::npos) << r.status().to_string();
  EXPECT_EQ(rm_.total_slots(), 0);
}

// The fingerprint is a hash; the refusal names the job options behind it that differ, with both values.
TEST(ResourceManagerRefusal, NamesTheJobOptionsThatDiffer) {
  ManualClock clock{1'000};
  const std::map<std::string, std::string> ours = {
      {"job property demo.seed", "1"}, {"setting checkpointing.dir", "/ck"}, {"setting state.backend", "hashmap"}};
  ResourceManager rm("0.1.0", kFingerprint, HeartbeatSettings{100, 500, 2}, &clock, ours);
  TaskManagerRegistration other = tm("tm-1", 2);
  other.job_graph_fingerprint = 0x1111;
  other.job_settings = {{"job property demo.seed", "2"}, {"setting checkpointing.dir", "/ck"}};
  auto r = rm.register_task_manager(other);
  ASSERT_FALSE(r.is_ok());
  const std::string message = r.status().message();
  EXPECT_NE(message.find("job property demo.seed: TaskManager '2', JobManager '1'"), std::string::npos) << message;
  EXPECT_NE(message.find("setting state.backend: TaskManager not set, JobManager 'hashmap'"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("checkpointing.dir"), std::string::npos) << message;  // the same on both sides
  EXPECT_NE(message.find("0000000000001111"), std::string::npos) << message;

  // The same options: the operators differ.
  other.job_settings = ours;
  r = rm.register_task_manager(other);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("the program's operators differ"), std::string::npos) << r.status().to_string();

  // Many differences: the first five, then how many more.
  other.job_settings.clear();
  for (int i = 0; i < 7; ++i) other.job_settings["setting s" + std::to_string(i)] = "x";
  r = rm.register_task_manager(other);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("; and 5 more"), std::string::npos) << r.status().to_string();
  EXPECT_EQ(rm.total_slots(), 0);
}

// Two processes started with one taskmanager.resource-id: the second is refused for now (retriable), naming the id and
// the holder, instead of the two replacing each other's registration in turns; it gets in once the holder is gone.
TEST_F(ResourceManagerTest, AnIdHeldByAnotherLiveTaskManagerIsRefusedUntilTheHolderIsGone) {
  TaskManagerRegistration first = tm("tm-1", 2);
  auto first_id = rm_.register_task_manager(first);
  ASSERT_TRUE(first_id.is_ok());
  TaskManagerRegistration second = first;
  second.rpc_port = 7122;  // another process on the same host
  auto r = rm_.register_task_manager(second);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(r.status().retriable());
  EXPECT_NE(r.status().message().find("taskmanager.resource-id 'tm-1' is held by the live TaskManager at " + first.host +
                                      ":6122"),
            std::string::npos)
      << r.status().to_string();
  EXPECT_TRUE(rm_.is_registered("tm-1", *first_id));  // the holder keeps its registration and slots
  EXPECT_EQ(rm_.total_slots(), 2);
  EXPECT_TRUE(rm_.take_lost().empty());

  // The same endpoint is the same process (or its restart on a fixed port): it replaces its registration at once.
  auto again = rm_.register_task_manager(first);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(rm_.take_lost().size(), 1u);

  // The holder's heartbeats stop: past heartbeat.timeout the newcomer gets in, and the holder is lost.
  clock_.advance_ms(499);
  EXPECT_FALSE(rm_.register_task_manager(second).is_ok());
  clock_.advance_ms(1);
  auto newcomer = rm_.register_task_manager(second);
  ASSERT_TRUE(newcomer.is_ok()) << newcomer.status().to_string();
  EXPECT_FALSE(rm_.is_registered("tm-1", *again));
  EXPECT_EQ(rm_.take_lost().size(), 1u);
}

TEST_F(ResourceManagerTest, AMalformedRegistrationIsRefusedNamingTheField) {
  TaskManagerRegistration r = tm("tm-1", 0);
  EXPECT_NE(rm_.register_task_manager(r).status().message().find("taskmanager.numberOfTaskSlots"), std::string::npos);
  r = tm("tm-1", 1);
  r.data_port = 70000;
  EXPECT_NE(rm_.register_task_manager(r).status().message().find("taskmanager.data.port 70000"), std::string::npos);
  r = tm("tm-1", 1);
  r.rpc_port = 0;
  EXPECT_NE(rm_.register_task_manager(r).status().message().find("RPC port 0"), std::string::npos);
  r = tm("", 1);
  EXPECT_EQ(rm_.register_task_manager(r).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ResourceManagerTest, SlotsAreOfferedOnlyOnceTheTaskManagerIsConnected) {
  auto a = rm_.register_task_manager(tm("tm-a", 2), /*connected=*/false);
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(rm_.total_slots(), 2);
  EXPECT_EQ(rm_.free_slots(), 0);
  EXPECT_EQ(rm_.allocate(1, false).status().code(), StatusCode::kFailedPrecondition);
  rm_.mark_connected("tm-a", *a + 1);  // another registration: ignored
  EXPECT_EQ(rm_.free_slots(), 0);
  rm_.mark_connected("tm-a", *a);
  EXPECT_EQ(rm_.free_slots(), 2);
  EXPECT_TRUE(rm_.allocate(2, false).is_ok());
}

TEST_F(ResourceManagerTest, ATaskManagerWithoutHeartbeatsForTheTimeoutIsLostWithItsSlots) {
  auto a = rm_.register_task_manager(tm("tm-a", 2));
  auto b = rm_.register_task_manager(tm("tm-bb", 2));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  auto slots = rm_.allocate(3, /*spread_out=*/false);
  ASSERT_TRUE(slots.is_ok());
  clock_.advance_ms(400);
  ASSERT_TRUE(rm_.heartbeat("tm-bb", *b).is_ok());
  clock_.advance_ms(100);  // tm-a: 500 ms without a heartbeat, not more
  EXPECT_TRUE(rm_.take_lost().empty());
  clock_.advance_ms(1);
  auto lost = rm_.take_lost();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].task_manager_id, "tm-a");
  EXPECT_EQ(lost[0].registration_id, *a);
  EXPECT_NE(lost[0].reason.find("no heartbeat for 501 ms"), std::string::npos) << lost[0].reason;
  EXPECT_EQ(lost[0].slots, (std::vector<AllocatedSlot>{{"tm-a", 0}, {"tm-a", 1}}));
  EXPECT_TRUE(rm_.take_lost().empty());  // reported once
  // A heartbeat of the lost registration is refused: the TaskManager must register again.
  EXPECT_EQ(rm_.heartbeat("tm-a", *a).code(), StatusCode::kNotFound);
  EXPECT_EQ(rm_.total_slots(), 2);
  EXPECT_EQ(rm_.free_slots(), 1);
}

TEST_F(ResourceManagerTest, ADroppedConnectionLosesTheTaskManagerAtOnceAndAStaleOneIsIgnored) {
  auto a = rm_.register_task_manager(tm("tm-a", 1));
  ASSERT_TRUE(a.is_ok());
  rm_.disconnect("tm-a", *a + 100, "connection reset");  // another registration: ignored
  EXPECT_TRUE(rm_.take_lost().empty());
  rm_.disconnect("tm-a", *a, "connection reset by peer");
  auto lost = rm_.take_lost();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, "connection reset by peer");
  EXPECT_EQ(rm_.total_slots(), 0);
}

TEST_F(ResourceManagerTest, RegisteringAgainReplacesTheOldRegistrationAndReportsItLost) {
  auto first = rm_.register_task_manager(tm("tm-a", 2));
  ASSERT_TRUE(first.is_ok());
  ASSERT_TRUE(rm_.allocate(2, false).is_ok());
  auto second = rm_.register_task_manager(tm("tm-a", 2));
  ASSERT_TRUE(second.is_ok());
  EXPECT_NE(*first, *second);
  auto lost = rm_.take_lost();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].registration_id, *first);
  EXPECT_EQ(lost[0].slots.size(), 2u);
  EXPECT_EQ(rm_.free_slots(), 2);  // the new registration starts free
  EXPECT_EQ(rm_.heartbeat("tm-a", *first).code(), StatusCode::kNotFound);
  EXPECT_TRUE(rm_.heartbeat("tm-a", *second).is_ok());
}

TEST_F(ResourceManagerTest, PackedAllocationFillsTaskManagersInRegistrationOrder) {
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-z", 2)).is_ok());
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-a", 2)).is_ok());
  auto slots = rm_.allocate(3, /*spread_out=*/false);
  ASSERT_TRUE(slots.is_ok()) << slots.status().to_string();
  EXPECT_EQ(*slots, (std::vector<AllocatedSlot>{{"tm-z", 0}, {"tm-z", 1}, {"tm-a", 0}}));
  EXPECT_EQ(rm_.free_slots(), 1);
}

TEST_F(ResourceManagerTest, SpreadOutAllocationTakesFromTheTaskManagerWithTheMostFreeSlots) {
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-z", 2)).is_ok());
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-a", 3)).is_ok());
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-m", 1)).is_ok());
  auto slots = rm_.allocate(4, /*spread_out=*/true);
  ASSERT_TRUE(slots.is_ok()) << slots.status().to_string();
  // Free slots z2 a3 m1: a (3) -> z (2, earlier than a's 2) -> a (2) -> z (1, earlier than a's and m's 1).
  EXPECT_EQ(*slots, (std::vector<AllocatedSlot>{{"tm-a", 0}, {"tm-z", 0}, {"tm-a", 1}, {"tm-z", 1}}));
}

TEST_F(ResourceManagerTest, TooFewFreeSlotsAllocateNothingAndSayHowMany) {
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-a", 2)).is_ok());
  auto slots = rm_.allocate(3, false);
  ASSERT_FALSE(slots.is_ok());
  EXPECT_EQ(slots.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(slots.status().message().find("needs 3 slots, 2 of 1 TaskManager(s) are free"), std::string::npos)
      << slots.status().to_string();
  EXPECT_EQ(rm_.free_slots(), 2);
  ASSERT_TRUE(rm_.allocate(2, false).is_ok());
  rm_.release_all();
  EXPECT_EQ(rm_.free_slots(), 2);
  EXPECT_EQ(rm_.allocate(0, false).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ResourceManagerTest, TaskManagersAreListedInRegistrationOrderWithTheirSlots) {
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-z", 2)).is_ok());
  clock_.advance_ms(10);
  ASSERT_TRUE(rm_.register_task_manager(tm("tm-a", 1)).is_ok());
  ASSERT_TRUE(rm_.allocate(1, false).is_ok());
  auto list = rm_.task_managers();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].registration.task_manager_id, "tm-z");
  EXPECT_EQ(list[0].allocated_slots, 1);
  EXPECT_EQ(list[0].registered_at_ms, 1'000);
  EXPECT_EQ(list[1].registration.task_manager_id, "tm-a");
  EXPECT_EQ(list[1].registered_at_ms, 1'010);
}

}  // namespace
}  // namespace sluice::cluster

namespace sluice::cluster {
namespace {

TEST(TaskManagerLossMonitor, ReportsALostTaskManagerToEveryCallbackUntilRemoved) {
  ManualClock clock(1'000);
  ResourceManager rm("0.1.0", kFingerprint, HeartbeatSettings{100, 500, 2}, &clock);
  auto reg = rm.register_task_manager(tm("tm-a", 1));
  ASSERT_TRUE(reg.is_ok());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> seen;
  TaskManagerLossMonitor monitor(&rm, 5);
  const int64_t first = monitor.add([&](const LostTaskManager& l) {
    std::lock_guard lock(mu);
    seen.push_back("first " + l.task_manager_id + ": " + l.reason);
    cv.notify_all();
  });
  monitor.add([&](const LostTaskManager& l) {
    std::lock_guard lock(mu);
    seen.push_back("second " + l.task_manager_id);
    cv.notify_all();
  });
  rm.disconnect("tm-a", *reg, "connection reset");
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return seen.size() == 2; }));
    EXPECT_EQ(seen[0], "first tm-a: connection reset");
    EXPECT_EQ(seen[1], "second tm-a");
  }
  // A heartbeat timeout is reported the same way; a removed callback hears nothing more.
  monitor.remove(first);
  auto again = rm.register_task_manager(tm("tm-b", 1));
  ASSERT_TRUE(again.is_ok());
  clock.advance_ms(501);
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return seen.size() == 3; }));
  EXPECT_EQ(seen[2], "second tm-b");
}

}  // namespace
}  // namespace sluice::cluster
