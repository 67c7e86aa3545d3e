// The metric report of a TaskManager's heartbeats: the message round trip (counters, gauges, histograms with their
// statistics, variables), the bound on its size, which metrics a TaskManager puts in (those of the subtasks it
// hosts), and a report travelling with a heartbeat over real gRPC into the JobManager's TaskManagerMetrics, kept
// only while the heartbeat's registration counts.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "rpc/metric_report.h"
#include "rpc/resource_manager_connection.h"
#include "rpc/resource_manager_service.h"
#include "sluice/metrics/metric_names.h"

namespace sluice::rpc {
namespace {

MetricValue metric(const std::string& op, int32_t subtask, std::string_view name, MetricKind kind, double value) {
  MetricValue m;
  m.scope = "job." + op + "." + std::to_string(subtask);
  m.name = std::string(name);
  m.kind = kind;
  m.value = value;
  m.variables = {{"job_name", "job"}, {"operator_name", op}, {"subtask_index", std::to_string(subtask)}};
  return m;
}

TEST(MetricReport, RoundTripsCountersGaugesAndHistogramStatistics) {
  MetricValue h = metric("count", 1, "latencyNs", MetricKind::kHistogram, 10);
  h.histogram = HistogramStatistics{10, 3, 90, 21.5, 12, 88, 90};
  std::vector<MetricValue> in{metric("count", 0, metric_names::kNumRecordsIn, MetricKind::kCounter, 1234567890123),
                              metric("count", 0, metric_names::kStateSizeBytes, MetricKind::kGauge, std::nan("")), h};
  v1::MetricReport report;
  to_proto(in, 17, &report);
  v1::MetricReport wire;
  ASSERT_TRUE(wire.ParseFromString(report.SerializeAsString()));
  EXPECT_EQ(wire.sequence(), 17u);
  EXPECT_EQ(wire.omitted(), 0u);
  std::vector<MetricValue> out = from_proto(wire);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].scope, "job.count.0");
  EXPECT_EQ(out[0].name, "numRecordsIn");
  EXPECT_EQ(out[0].kind, MetricKind::kCounter);
  EXPECT_EQ(out[0].value, 1234567890123.0);
  EXPECT_EQ(out[0].variables, in[0].variables);
  EXPECT_EQ(out[1].kind, MetricKind::kGauge);
  EXPECT_TRUE(std::isnan(out[1].value));
  EXPECT_EQ(out[2].kind, MetricKind::kHistogram);
  EXPECT_EQ(out[2].histogram.count, 10u);
  EXPECT_EQ(out[2].histogram.min, 3);
  EXPECT_EQ(out[2].histogram.max, 90);
  EXPECT_EQ(out[2].histogram.mean, 21.5);
  EXPECT_EQ(out[2].histogram.p50, 12);
  EXPECT_EQ(out[2].histogram.p95, 88);
  EXPECT_EQ(out[2].histogram.p99, 90);
}

TEST(MetricReport, IsBoundedAndCountsWhatItLeftOut) {
  std::vector<MetricValue> many(kMaxReportedMetrics + 5, metric("count", 0, "x", MetricKind::kCounter, 1));
  v1::MetricReport report;
  to_proto(many, 1, &report);
  EXPECT_EQ(static_cast<size_t>(report.metrics_size()), kMaxReportedMetrics);
  EXPECT_EQ(report.omitted(), 5u);
}

TEST(MetricReport, AnUnknownKindIsReadAsAGauge) {
  v1::MetricReport report;
  v1::MetricSample* s = report.add_metrics();
  s->set_name("future");
  s->set_kind(static_cast<v1::MetricKind>(9));
  s->set_value(2.5);
  std::vector<MetricValue> out = from_proto(report);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, MetricKind::kGauge);
  EXPECT_EQ(out[0].value, 2.5);
}

TEST(MetricReport, ATaskManagerReportsTheOperatorMetricsOfTheSubtasksItHosts) {
  // Two vertices: "src -> map" (nodes 0, 1) and "sink" (node 2), parallelism 2.
  StreamGraph sg;
  sg.nodes.resize(3);
  sg.nodes[0].name = "src";
  sg.nodes[1].name = "map";
  sg.nodes[2].name = "sink";
  graph::JobGraph jg;
  jg.vertices.resize(2);
  jg.vertices[0].id = 0;
  jg.vertices[0].nodes = {0, 1};
  jg.vertices[0].name = "Source: src -> map";
  jg.vertices[1].id = 1;
  jg.vertices[1].nodes = {2};
  jg.vertices[1].name = "sink";
  auto task_metric = [](const std::string& task, int32_t subtask, double value) {
    MetricValue m;
    m.scope = "job." + task + "." + std::to_string(subtask);
    m.name = "busyTimeMsPerSecond";
    m.kind = MetricKind::kGauge;
    m.value = value;
    m.variables = {{"job_name", "job"}, {"task_name", task}, {"subtask_index", std::to_string(subtask)}};
    return m;
  };
  MetricValue job_level;
  job_level.scope = "job";
  job_level.name = "numRestarts";
  job_level.variables = {{"job_name", "job"}};
  std::vector<MetricValue> snapshot{job_level,
                                    metric("src", 0, "numRecordsOut", MetricKind::kCounter, 1),
                                    metric("src", 1, "numRecordsOut", MetricKind::kCounter, 2),
                                    metric("map", 1, "numRecordsOut", MetricKind::kCounter, 3),
                                    metric("sink", 0, "numRecordsIn", MetricKind::kCounter, 4),
                                    metric("sink", 1, "numRecordsIn", MetricKind::kCounter, 5),
                                    metric("gone", 1, "numRecordsIn", MetricKind::kCounter, 6),
                                    task_metric("Source: src -> map", 0, 7),
                                    task_metric("Source: src -> map", 1, 8),
                                    task_metric("sink", 0, 9),
                                    task_metric("gone", 0, 10)};
  // This TaskManager hosts subtask 1 of the first vertex and subtask 0 of the sink.
  std::vector<MetricValue> out = hosted_task_metrics(snapshot, sg, jg, {{0, 1}, {1, 0}});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].value, 2);
  EXPECT_EQ(out[1].value, 3);
  EXPECT_EQ(out[2].value, 4);
  EXPECT_EQ(out[3].value, 8) << "a task's metric, by its task name";
  EXPECT_EQ(out[4].value, 9);
  EXPECT_TRUE(hosted_task_metrics(snapshot, sg, jg, {}).empty());
}

TEST(MetricReport, TravelsWithTheHeartbeatsIntoTheJobManagersStore) {
  cluster::ResourceManager rm("0.1.0", 42, cluster::HeartbeatSettings{100, 3'000, 5}, SystemClock::shared().get());
  cluster::TaskManagerMetrics store;
  ResourceManagerService service(&rm, 7, &store);
  auto server = RpcServer::start("127.0.0.1", 0, {&service});
  ASSERT_TRUE(server.is_ok()) << server.status().to_string();

  class Quiet final : public ResourceManagerConnection::Listener {
    void on_registered(uint64_t, uint64_t, const cluster::HeartbeatSettings&) override {}
    void on_jobmanager_lost(const std::string&) override {}
    void on_refused(const Status&) override {}
    void on_job_ended(const std::string&) override {}
  } listener;
  std::atomic<double> count{5};
  ResourceManagerConnectionConfig config{"127.0.0.1:" + std::to_string((*server)->port()),
                                         cluster::TaskManagerRegistration{"tm-1", "127.0.0.1", 6122, 0, 1, "0.1.0", 42, {}},
                                         50, 0, {}};
  config.task_metrics = [&] {
    return std::vector<MetricValue>{metric("sink", 0, metric_names::kNumRecordsIn, MetricKind::kCounter, count.load())};
  };
  ResourceManagerConnection connection(std::move(config), &listener, SystemClock::shared().get());
  connection.report_metrics_now();  // not registered yet: nothing is sent
  connection.start();
  auto reported = [&](double v) {
    for (int i = 0; i < 1000; ++i) {
      std::vector<MetricValue> m = store.metrics();
      if (!m.empty() && m[0].value == v) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(reported(5));
  EXPECT_EQ(store.metrics()[0].variables.at(cluster::kTaskManagerIdVariable), "tm-1");
  count = 9;
  connection.report_metrics_now();  // at once, not at the next heartbeat
  std::vector<MetricValue> now = store.metrics();
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].value, 9);
  connection.stop();
  service.shutdown();
  (*server)->shutdown();
}

}  // namespace
}  // namespace sluice::rpc
