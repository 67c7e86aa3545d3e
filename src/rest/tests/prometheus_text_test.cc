#include "rest/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sluice::rest {
namespace {

MetricValue operator_metric(const std::string& name, MetricKind kind, double value, const std::string& subtask) {
  return MetricValue{"job.op." + subtask, name, kind, value, {},
                     {{"job_name", "job"}, {"operator_name", "op"}, {"subtask_index", subtask}}};
}

TEST(PrometheusText, OneFamilyPerNameWithTheSamplesOfEveryJob) {
  JobMetrics a{{{"job_id", "aa"}}, {operator_metric("numRecordsOut", MetricKind::kCounter, 7, "0"),
                                    operator_metric("numRecordsOut", MetricKind::kCounter, 8, "1")}};
  JobMetrics b{{{"job_id", "bb"}}, {operator_metric("numRecordsOut", MetricKind::kCounter, 9, "0")}};
  EXPECT_EQ(prometheus_text({a, b}),
            "# TYPE flink_taskmanager_job_task_operator_numRecordsOut gauge\n"
            "flink_taskmanager_job_task_operator_numRecordsOut{job_id=\"aa\",job_name=\"job\",operator_name=\"op\","
            "subtask_index=\"0\"} 7\n"
            "flink_taskmanager_job_task_operator_numRecordsOut{job_id=\"aa\",job_name=\"job\",operator_name=\"op\","
            "subtask_index=\"1\"} 8\n"
            "flink_taskmanager_job_task_operator_numRecordsOut{job_id=\"bb\",job_name=\"job\",operator_name=\"op\","
            "subtask_index=\"0\"} 9\n");
}

TEST(PrometheusText, TaskAndJobMetricsAreNamedByTheirScopeAsFlinksReporterDoes) {
  JobMetrics a{{{"job_id", "aa"}},
               {MetricValue{"job.Source: in.0", "busyTimeMsPerSecond", MetricKind::kGauge, 250, {},
                            {{"job_name", "job"}, {"task_name", "Source: in"}, {"subtask_index", "0"}}},
                MetricValue{"job", "numRestarts", MetricKind::kGauge, 2, {}, {{"job_name", "job"}}}}};
  EXPECT_EQ(prometheus_text({a}),
            "# TYPE flink_jobmanager_job_numRestarts gauge\n"
            "flink_jobmanager_job_numRestarts{job_id=\"aa\",job_name=\"job\"} 2\n"
            "# TYPE flink_taskmanager_job_task_busyTimeMsPerSecond gauge\n"
            "flink_taskmanager_job_task_busyTimeMsPerSecond{job_id=\"aa\",job_name=\"job\",subtask_index=\"0\","
            "task_name=\"Source: in\"} 250\n");
}

TEST(PrometheusText, AHistogramIsASummaryWithQuantilesSumAndCount) {
  MetricValue h = operator_metric("latencyNs", MetricKind::kHistogram, 4, "0");
  h.histogram = HistogramStatistics{4, 1, 90, 25.5, 12, 88, 90};
  EXPECT_EQ(prometheus_text({JobMetrics{{}, {h}}}),
            "# TYPE flink_taskmanager_job_task_operator_latencyNs summary\n"
            "flink_taskmanager_job_task_operator_latencyNs{job_name=\"job\",operator_name=\"op\",quantile=\"0.5\","
            "subtask_index=\"0\"} 12\n"
            "flink_taskmanager_job_task_operator_latencyNs{job_name=\"job\",operator_name=\"op\",quantile=\"0.95\","
            "subtask_index=\"0\"} 88\n"
            "flink_taskmanager_job_task_operator_latencyNs{job_name=\"job\",operator_name=\"op\",quantile=\"0.99\","
            "subtask_index=\"0\"} 90\n"
            "flink_taskmanager_job_task_operator_latencyNs_sum{job_name=\"job\",operator_name=\"op\","
            "subtask_index=\"0\"} 102\n"
            "flink_taskmanager_job_task_operator_latencyNs_count{job_name=\"job\",operator_name=\"op\","
            "subtask_index=\"0\"} 4\n");
}

TEST(PrometheusText, NamesAreSanitizedLabelValuesEscapedAndNonFiniteGaugesSpelledOut) {
  MetricValue g{"job.Source: a \"b\"\\c\nd.0", "state.size-bytes", MetricKind::kGauge,
                std::numeric_limits<double>::quiet_NaN(), {},
                {{"job_name", "job"}, {"operator_name", "Source: a \"b\"\\c\nd"}, {"subtask_index", "0"}}};
  MetricValue inf{"job", "lag", MetricKind::kGauge, std::numeric_limits<double>::infinity(), {}, {{"job_name", "job"}}};
  EXPECT_EQ(prometheus_text({JobMetrics{{}, {g, inf}}}),
            "# TYPE flink_jobmanager_job_lag gauge\n"
            "flink_jobmanager_job_lag{job_name=\"job\"} +Inf\n"
            "# TYPE flink_taskmanager_job_task_operator_state_size_bytes gauge\n"
            "flink_taskmanager_job_task_operator_state_size_bytes{job_name=\"job\","
            "operator_name=\"Source: a \\\"b\\\"\\\\c\\nd\",subtask_index=\"0\"} NaN\n");
  EXPECT_EQ(prometheus_name("9lives.x"), "_9lives_x");
}

}  // namespace
}  // namespace sluice::rest
