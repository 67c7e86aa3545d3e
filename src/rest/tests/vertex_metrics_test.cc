// Flink's per-vertex `metrics` object of GET /jobs/:jobid, summed from per-operator subtask metrics.
#include "rest/vertex_metrics.h"

#include <gtest/gtest.h>

#include "sluice/metrics/metric_names.h"

namespace sluice::rest {
namespace {

MetricValue counter(const std::string& op, int32_t subtask, std::string_view name, double value,
                    const std::string& tm = "") {
  MetricValue m;
  m.scope = "job." + op + "." + std::to_string(subtask);
  m.name = std::string(name);
  m.value = value;
  m.variables = {{"job_name", "job"}, {"operator_name", op}, {"subtask_index", std::to_string(subtask)}};
  if (!tm.empty()) m.variables["tm_id"] = tm;
  return m;
}

RestVertex keyed_vertex() {
  RestVertex v;
  v.id = 1;
  v.name = "count -> Map";
  v.parallelism = 2;
  v.input_operator = "count";
  v.output_operators = {"Map"};
  return v;
}

TEST(VertexMetrics, SumsTheHeadsInputAndTheOutputOperatorsOutputOverSubtasks) {
  std::vector<MetricValue> metrics{
      counter("count", 0, metric_names::kNumRecordsIn, 10, "tm-a"), counter("count", 1, metric_names::kNumRecordsIn, 5, "tm-b"),
      counter("count", 0, metric_names::kNumRecordsOut, 10), counter("Map", 0, metric_names::kNumRecordsOut, 7),
      counter("Map", 1, metric_names::kNumRecordsOut, 3), counter("count", 0, metric_names::kNumBytesIn, 100),
      counter("count", 1, metric_names::kNumBytesIn, 50), counter("other", 0, metric_names::kNumRecordsIn, 99),
      counter("count", 2, metric_names::kNumRecordsIn, 1000)};  // no subtask 2 at parallelism 2: ignored
  nlohmann::json j = vertex_metrics_json(keyed_vertex(), metrics);
  EXPECT_EQ(j["read-records"], 15);
  EXPECT_EQ(j["read-records-complete"], true);
  EXPECT_EQ(j["write-records"], 10);
  EXPECT_EQ(j["write-records-complete"], true);
  EXPECT_EQ(j["read-bytes"], 150);
  EXPECT_EQ(j["read-bytes-complete"], true);
  EXPECT_EQ(j["write-bytes"], 0);
  EXPECT_EQ(j["write-bytes-complete"], false);  // no subtask reported numBytesOut
}

TEST(VertexMetrics, ASubtaskWithoutFiguresLeavesTheSumIncomplete) {
  std::vector<MetricValue> metrics{counter("count", 1, metric_names::kNumRecordsIn, 4)};
  nlohmann::json j = vertex_metrics_json(keyed_vertex(), metrics);
  EXPECT_EQ(j["read-records"], 4);
  EXPECT_EQ(j["read-records-complete"], false);
}

TEST(VertexMetrics, ASourceReadsAndASinkWritesNothingOverTheNetwork) {
  RestVertex source;
  source.parallelism = 1;
  source.output_operators = {"bids"};
  RestVertex sink;
  sink.parallelism = 1;
  sink.input_operator = "sink";
  std::vector<MetricValue> metrics{counter("bids", 0, metric_names::kNumRecordsOut, 42),
                                   counter("sink", 0, metric_names::kNumRecordsIn, 42)};
  nlohmann::json s = vertex_metrics_json(source, metrics);
  EXPECT_EQ(s["read-records"], 0);
  EXPECT_EQ(s["read-records-complete"], true);
  EXPECT_EQ(s["write-records"], 42);
  nlohmann::json k = vertex_metrics_json(sink, metrics);
  EXPECT_EQ(k["read-records"], 42);
  EXPECT_EQ(k["write-records"], 0);
  EXPECT_EQ(k["write-records-complete"], true);
  EXPECT_EQ(k.size(), 8u);  // Flink's four figures and their -complete flags
}

}  // namespace
}  // namespace sluice::rest
