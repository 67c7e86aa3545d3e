#include "sluice/metrics/metric_registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "sluice/metrics/metric_names.h"

namespace sluice {
namespace {

TEST(Counter, IncDecCount) {
  Counter c;
  EXPECT_EQ(c.count(), 0);
  c.inc();
  c.inc(10);
  c.dec(3);
  EXPECT_EQ(c.count(), 8);
  EXPECT_EQ(alignof(Counter), 64u);
}

TEST(MetricGroup, GroupsOfDifferentKeysNeverMergeAlsoWithTheSameName) {
  MetricRegistry registry;
  MetricGroup& job = registry.add_job_group("demo");
  MetricGroup& op = job.add_operator_group("Sink");
  MetricGroup& task = job.add_group("task_name").add_group("task_name", "Sink");
  EXPECT_NE(&op, &task);
  EXPECT_EQ(task.scope(), "demo.task_name.Sink");
  EXPECT_EQ(task.variables().count("operator_name"), 0u) << "a task's metrics are not an operator's";
  EXPECT_EQ(task.variables().at("task_name"), "Sink");
  EXPECT_NE(&job.add_group("operator_name", "x"), &job.add_group("x")) << "a plain group is not a key/value group";
}

TEST(MetricGroup, ScopesAndVariables) {
  MetricRegistry registry;
  MetricGroup& job = registry.add_job_group("demo");
  MetricGroup& op = job.add_operator_group("per-auction");
  MetricGroup& subtask = op.add_subtask_group(SubtaskIndex(1));
  EXPECT_EQ(registry.root().scope(), "");
  EXPECT_EQ(job.scope(), "demo");
  EXPECT_EQ(op.scope(), "demo.per-auction");
  EXPECT_EQ(subtask.scope(), "demo.per-auction.1");
  std::map<std::string, std::string> vars{{"job_name", "demo"}, {"operator_name", "per-auction"}, {"subtask_index", "1"}};
  EXPECT_EQ(subtask.variables(), vars);
  MetricGroup& plain = subtask.add_group("buffers");
  EXPECT_EQ(plain.scope(), "demo.per-auction.1.buffers");
  EXPECT_EQ(plain.variables(), vars);
  // Groups and metrics are get-or-create: the same name gives the same object.
  EXPECT_EQ(&registry.add_job_group("demo"), &job);
  EXPECT_EQ(&job.add_operator_group("per-auction"), &op);
  EXPECT_EQ(&subtask.counter(metric_names::kNumRecordsIn), &subtask.counter("numRecordsIn"));
  EXPECT_EQ(&subtask.histogram("latencyNs"), &subtask.histogram("latencyNs"));
  EXPECT_NE(&subtask.counter("numRecordsIn"), &op.counter("numRecordsIn"));
}

TEST(MetricRegistry, FindReadsCurrentValues) {
  MetricRegistry registry;
  MetricGroup& g = registry.add_job_group("demo").add_operator_group("src").add_subtask_group(SubtaskIndex(0));
  Counter& records = g.counter(metric_names::kNumRecordsOut);
  records.inc(41);
  records.inc();
  std::atomic<int64_t> state_bytes{1024};
  g.gauge(metric_names::kStateSizeBytes, [&] { return static_cast<double>(state_bytes.load()); });
  Histogram& h = g.histogram("latencyNs");
  h.record(10);
  h.record(30);

  EXPECT_EQ(registry.find("demo.src.0", "numRecordsOut"), 42.0);
  EXPECT_EQ(registry.find("demo.src.0", "stateSizeBytes"), 1024.0);
  state_bytes = 2048;
  EXPECT_EQ(registry.find("demo.src.0", "stateSizeBytes"), 2048.0);
  EXPECT_EQ(registry.find("demo.src.0", "latencyNs"), 2.0);  // a histogram's count
  auto stats = registry.find_histogram("demo.src.0", "latencyNs");
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->min, 10);
  EXPECT_EQ(stats->max, 30);
  EXPECT_DOUBLE_EQ(stats->mean, 20.0);

  EXPECT_FALSE(registry.find("demo.src.0", "nope").has_value());
  EXPECT_FALSE(registry.find("demo.src.1", "numRecordsOut").has_value());
  EXPECT_FALSE(registry.find("demo.src", "numRecordsOut").has_value());
  EXPECT_FALSE(registry.find_histogram("demo.src.0", "numRecordsOut").has_value());
}

TEST(MetricRegistry, GaugesCanBeReplacedAndRemoved) {
  MetricRegistry registry;
  MetricGroup& g = registry.add_job_group("j");
  g.gauge("g", [] { return 1.0; });
  g.gauge("g", [] { return 2.0; });
  EXPECT_EQ(registry.find("j", "g"), 2.0);
  g.remove_gauge("g");
  EXPECT_FALSE(registry.find("j", "g").has_value());
  g.remove_gauge("g");  // absent: no-op
}

TEST(MetricRegistry, SnapshotIsSortedAndComplete) {
  MetricRegistry registry;
  MetricGroup& job = registry.add_job_group("demo");
  MetricGroup& s1 = job.add_operator_group("op").add_subtask_group(SubtaskIndex(1));
  MetricGroup& s0 = job.add_operator_group("op").add_subtask_group(SubtaskIndex(0));
  s1.counter("numRecordsIn").inc(5);
  s0.counter("numRecordsIn").inc(7);
  s0.counter("numBytesIn").inc(70);
  s0.histogram("latencyNs").record(100);
  job.gauge("uptimeMs", [] { return 12.5; });

  std::vector<MetricValue> snap = registry.snapshot();
  ASSERT_EQ(snap.size(), 5u);
  EXPECT_EQ(snap[0].scope, "demo");
  EXPECT_EQ(snap[0].name, "uptimeMs");
  EXPECT_EQ(snap[0].kind, MetricKind::kGauge);
  EXPECT_EQ(snap[0].value, 12.5);
  EXPECT_EQ(snap[1].scope, "demo.op.0");
  EXPECT_EQ(snap[1].name, "latencyNs");
  EXPECT_EQ(snap[1].kind, MetricKind::kHistogram);
  EXPECT_EQ(snap[1].histogram.count, 1u);
  EXPECT_EQ(snap[1].histogram.p99, 100);
  EXPECT_EQ(snap[2].name, "numBytesIn");
  EXPECT_EQ(snap[2].value, 70.0);
  EXPECT_EQ(snap[3].name, "numRecordsIn");
  EXPECT_EQ(snap[3].value, 7.0);
  EXPECT_EQ(snap[4].scope, "demo.op.1");
  EXPECT_EQ(snap[4].value, 5.0);
}

TEST(MetricRegistry, SnapshotJsonHasTheDocumentedShape) {
  MetricRegistry registry;
  MetricGroup& g = registry.add_job_group("demo").add_operator_group("per-auction").add_subtask_group(SubtaskIndex(1));
  g.counter("numRecordsIn").inc(42);
  g.gauge("stateSizeBytes", [] { return 1.5e6; });
  g.gauge("broken", [] { return std::nan(""); });
  Histogram& h = g.histogram("latencyNs");
  for (int v : {3, 12, 90}) h.record(v);

  nlohmann::json j = registry.snapshot_json();
  const std::string scope = "demo.per-auction.1";
  nlohmann::json expected_metrics = nlohmann::json::parse(R"([
    {"scope": "demo.per-auction.1", "name": "broken", "kind": "gauge", "value": null},
    {"scope": "demo.per-auction.1", "name": "latencyNs", "kind": "histogram",
     "count": 3, "min": 3, "max": 90, "mean": 35.0, "p50": 12, "p95": 90, "p99": 90},
    {"scope": "demo.per-auction.1", "name": "numRecordsIn", "kind": "counter", "value": 42},
    {"scope": "demo.per-auction.1", "name": "stateSizeBytes", "kind": "gauge", "value": 1500000.0}
  ])");
  EXPECT_EQ(j["metrics"], expected_metrics) << j.dump(2);
  EXPECT_TRUE(j["metrics"][2]["value"].is_number_integer());
  nlohmann::json expected_scopes = nlohmann::json::parse(R"({
    "demo": {"job_name": "demo"},
    "demo.per-auction": {"job_name": "demo", "operator_name": "per-auction"},
    "demo.per-auction.1": {"job_name": "demo", "operator_name": "per-auction", "subtask_index": "1"}
  })");
  EXPECT_EQ(j["scopes"], expected_scopes) << j.dump(2);
}

TEST(MetricRegistry, ThrowingGaugeReportsNaN) {
  MetricRegistry registry;
  registry.add_job_group("j").gauge("bad", []() -> double { throw std::runtime_error("boom"); });
  auto v = registry.find("j", "bad");
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(std::isnan(*v));
  EXPECT_TRUE(registry.snapshot_json()["metrics"][0]["value"].is_null());
}

TEST(MetricRegistry, SameNameForTwoKindsIsKeptApartAndFindPrefersTheCounter) {
  MetricRegistry registry;
  MetricGroup& g = registry.add_job_group("j");
  g.counter("x").inc(3);
  g.histogram("x").record(1000);
  EXPECT_EQ(registry.find("j", "x"), 3.0);
  EXPECT_EQ(registry.find_histogram("j", "x")->max, 1000);
  EXPECT_EQ(registry.snapshot().size(), 2u);
}

TEST(MetricRegistry, SnapshotsIncludeReportedMetricSetsInTheirOwnScopes) {
  MetricRegistry registry;
  MetricGroup& job = registry.add_job_group("demo");
  job.counter("numRestarts").inc(2);
  std::vector<MetricValue> reported{{"demo.bids.0", std::string(metric_names::kNumRecordsOut), MetricKind::kCounter, 7, {},
                                     {{"job_name", "demo"}, {"operator_name", "bids"}, {"subtask_index", "0"},
                                      {"tm_id", "tm-1"}}}};
  job.reported_metrics("taskmanagers", [&] { return reported; });
  std::vector<MetricValue> snap = registry.snapshot();
  ASSERT_EQ(snap.size(), 2u);
  EXPECT_EQ(snap[0].scope, "demo");
  EXPECT_EQ(snap[1].scope, "demo.bids.0");
  EXPECT_EQ(snap[1].value, 7);
  EXPECT_EQ(snap[1].variables.at("tm_id"), "tm-1");
  EXPECT_EQ(registry.snapshot_json()["scopes"]["demo.bids.0"]["tm_id"], "tm-1");
  EXPECT_FALSE(registry.find("demo.bids.0", metric_names::kNumRecordsOut).has_value());  // registered metrics only

  job.reported_metrics("taskmanagers", []() -> std::vector<MetricValue> { throw std::runtime_error("broken"); });
  EXPECT_EQ(registry.snapshot().size(), 1u);  // a throwing set adds nothing
  job.remove_reported_metrics("taskmanagers");
  job.remove_reported_metrics("taskmanagers");  // absent: no-op
  EXPECT_EQ(registry.snapshot().size(), 1u);
}

TEST(MetricRegistry, EmptyRegistry) {
  MetricRegistry registry;
  EXPECT_TRUE(registry.snapshot().empty());
  nlohmann::json j = registry.snapshot_json();
  EXPECT_TRUE(j["metrics"].is_array());
  EXPECT_TRUE(j["metrics"].empty());
  EXPECT_TRUE(j["scopes"].is_object());
}

}  // namespace
}  // namespace sluice
