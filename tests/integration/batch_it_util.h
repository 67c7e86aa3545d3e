// Shared by the BATCH integration tests (batch_mode_it, batch_two_input_it): the test configuration and one way to
// run a program to its end - through execute_async in any runtime mode, or, with injected failures, on the batch
// runtime directly so the failures are armed before the first stage starts.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "batch/batch_job.h"
#include "graph/job_graph.h"
#include "sluice/sluice.h"

namespace sluice::batch_test {

// parallelism 2, scratch under the test's temp dir, a fixed-delay restart strategy (5 attempts, 10 ms).
inline Configuration base_config(const std::string& mode) {
  Configuration c;
  EXPECT_TRUE(c.apply_dynamic_property("execution.runtime-mode=" + mode).is_ok());
  EXPECT_TRUE(c.apply_dynamic_property("parallelism.default=2").is_ok());
  EXPECT_TRUE(c.apply_dynamic_property("io.tmp.dirs=" + ::testing::TempDir()).is_ok());
  EXPECT_TRUE(c.apply_dynamic_property("restart-strategy.type=fixed-delay").is_ok());
  EXPECT_TRUE(c.apply_dynamic_property("restart-strategy.fixed-delay.attempts=5").is_ok());
  EXPECT_TRUE(c.apply_dynamic_property("restart-strategy.fixed-delay.delay=10ms").is_ok());
  return c;
}

// An injected failure at `point` in the vertex holding the operator with uid `uid`.
struct Failure {
  runtime::FailurePoint point;
  std::string uid;
  int32_t subtask = 0;
};

struct BatchRun {
  std::vector<int32_t> stage_runs;  // empty: not the batch runtime
  batch::BatchStats stats;
  std::vector<runtime::InjectedFailure> injected;
};

// Runs env's program to the end and expects it FINISHED. Without failures through execute_async (the mode of
// env's configuration); with failures in BATCH on the batch runtime (parallelism 2, the restart strategy of
// base_config).
inline BatchRun execute(StreamExecutionEnvironment& env, const std::vector<Failure>& failures) {
  BatchRun r;
  if (failures.empty()) {
    auto client = env.execute_async("batch-it");
    EXPECT_TRUE(client.is_ok()) << client.status().to_string();
    if (!client.is_ok()) return r;
    JobExecutionResult res = (*client)->wait();
    EXPECT_EQ(res.status, JobStatus::kFinished) << res.error.to_string();
    if (auto* b = dynamic_cast<batch::BatchJobClient*>(client->get())) {
      r.stage_runs = b->stage_runs();
      r.stats = b->batch_stats();
    }
    return r;
  }
  auto sg = std::make_shared<StreamGraph>(env.stream_graph());
  graph::JobGraphOptions jo;
  jo.job_name = "batch-it";
  jo.default_parallelism = 2;
  auto jg = graph::build_job_graph(*sg, jo);
  EXPECT_TRUE(jg.is_ok());
  if (!jg.is_ok()) return r;
  batch::BatchJobConfig bc;
  bc.tmp_dir = ::testing::TempDir();
  bc.restart.type = RestartStrategyType::kFixedDelay;
  bc.restart.fixed_delay.attempts = 5;
  bc.restart.fixed_delay.delay_ms = 10;
  for (const Failure& f : failures) {
    int32_t vertex = -1;
    for (const StreamNode& n : sg->nodes)
      if (n.uid == f.uid) vertex = jg->vertex_of_node[static_cast<size_t>(n.id)];
    EXPECT_GE(vertex, 0) << f.uid;
    bc.failures.push_back(batch::ArmedFailure{f.point, vertex, f.subtask, "seeded"});
  }
  auto client = batch::submit_batch_job(sg, std::move(*jg), bc);
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  if (!client.is_ok()) return r;
  JobExecutionResult res = (*client)->wait();
  EXPECT_EQ(res.status, JobStatus::kFinished) << res.error.to_string();
  r.stage_runs = (*client)->stage_runs();
  r.stats = (*client)->batch_stats();
  r.injected = (*client)->injected_failures();
  return r;
}

}  // namespace sluice::batch_test
