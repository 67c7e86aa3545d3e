// The JobManager's copy of its TaskManagers' metric reports: which report is kept (newest sequence, newest
// registration), what goes when a TaskManager is lost, and the tm_id every value gets.
#include "cluster/task_manager_metrics.h"

#include <gtest/gtest.h>

#include "sluice/metrics/metric_names.h"

namespace sluice::cluster {
namespace {

std::vector<MetricValue> records_out(const std::string& op, int32_t subtask, double count) {
  MetricValue m;
  m.scope = "demo." + op + "." + std::to_string(subtask);
  m.name = std::string(metric_names::kNumRecordsOut);
  m.kind = MetricKind::kCounter;
  m.value = count;
  m.variables = {{"job_name", "demo"}, {"operator_name", op}, {"subtask_index", std::to_string(subtask)}};
  return {m};
}

TEST(TaskManagerMetrics, KeepsTheLatestReportOfEachTaskManagerLabelledWithItsId) {
  TaskManagerMetrics store;
  EXPECT_TRUE(store.update("tm-b", 2, 1, records_out("sink", 1, 5)));
  EXPECT_TRUE(store.update("tm-a", 1, 1, records_out("sink", 0, 3)));
  EXPECT_TRUE(store.update("tm-a", 1, 2, records_out("sink", 0, 8)));
  std::vector<MetricValue> all = store.metrics();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].variables.at(kTaskManagerIdVariable), "tm-a");
  EXPECT_EQ(all[0].value, 8);
  EXPECT_EQ(all[0].variables.at("subtask_index"), "0");
  EXPECT_EQ(all[1].variables.at(kTaskManagerIdVariable), "tm-b");
  EXPECT_EQ(all[1].value, 5);
  EXPECT_EQ(store.reporting_task_managers(), 2u);
}

TEST(TaskManagerMetrics, AReportTakenBeforeTheKeptOneIsDropped) {
  TaskManagerMetrics store;
  EXPECT_TRUE(store.update("tm-a", 1, 7, records_out("sink", 0, 100)));  // the final figures, sent first
  EXPECT_FALSE(store.update("tm-a", 1, 6, records_out("sink", 0, 90)));  // a periodic report that crossed it
  EXPECT_EQ(store.metrics().at(0).value, 100);
}

TEST(TaskManagerMetrics, ANewRegistrationReplacesTheOldOnesReportAndAnOldOneIsRefused) {
  TaskManagerMetrics store;
  EXPECT_TRUE(store.update("tm-a", 1, 50, records_out("sink", 0, 100)));
  // The process restarted and registered again: its sequence starts over, its counts from zero.
  EXPECT_TRUE(store.update("tm-a", 4, 1, records_out("sink", 0, 2)));
  EXPECT_EQ(store.metrics().at(0).value, 2);
  EXPECT_FALSE(store.update("tm-a", 1, 51, records_out("sink", 0, 101)));  // late, from the old registration
  EXPECT_EQ(store.metrics().at(0).value, 2);
}

TEST(TaskManagerMetrics, ALostTaskManagersReportGoesButANewerRegistrationsStays) {
  TaskManagerMetrics store;
  store.update("tm-a", 1, 1, records_out("sink", 0, 10));
  store.update("tm-b", 2, 1, records_out("sink", 1, 20));
  store.drop("tm-a", 1);
  ASSERT_EQ(store.metrics().size(), 1u);
  EXPECT_EQ(store.metrics()[0].variables.at(kTaskManagerIdVariable), "tm-b");
  store.update("tm-b", 3, 1, records_out("sink", 1, 1));
  store.drop("tm-b", 2);  // the loss of the replaced registration, reported after the new one's first report
  ASSERT_EQ(store.metrics().size(), 1u);
  EXPECT_EQ(store.metrics()[0].value, 1);
  store.drop("tm-c", 9);  // unknown: nothing happens
  EXPECT_EQ(store.reporting_task_managers(), 1u);
}

// At the job's end the kept reports are the final figures: the empty report of a TaskManager whose attempt the end
// cancelled (no subtasks any more), or its loss, does not replace them before the closing lines read them.
TEST(TaskManagerMetrics, AfterFreezeNeitherAReportNorALossChangesTheFigures) {
  TaskManagerMetrics store;
  EXPECT_TRUE(store.update("tm-a", 1, 7, records_out("sink", 0, 1000)));
  store.freeze();
  EXPECT_FALSE(store.update("tm-a", 1, 8, {}));
  store.drop("tm-a", 1);
  std::vector<MetricValue> all = store.metrics();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].value, 1000);
}

}  // namespace
}  // namespace sluice::cluster
