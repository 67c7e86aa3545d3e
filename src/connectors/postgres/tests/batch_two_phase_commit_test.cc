// The two-phase-commit sink in execution.runtime-mode BATCH (docs/batch.md, "Failure recovery"): a failure in the
// stage's commit phase - after a sink subtask committed its prepared transaction, or before it did - retries the
// commit of the kept committables (COMMIT PREPARED again; one that is committed already is recognised) instead of
// re-running the stage. Every row exactly once (plain INSERTs, so a duplicate shows), nothing left prepared.
#include <filesystem>
#include <random>

#include "batch/batch_job.h"
#include "graph/job_graph.h"
#include "pg_test_util.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"

namespace sluice::postgres::testing {
namespace {

class BatchTwoPhaseCommit : public ::testing::TestWithParam<uint64_t> {};

TEST_P(BatchTwoPhaseCommit, AFailureWhileCommittingRetriesTheCommitAndEveryRowIsThereOnce) {
  const uint64_t seed = GetParam();
  std::mt19937_64 rng(seed);
  const int32_t subtask = static_cast<int32_t>(rng() % 2);
  for (runtime::FailurePoint point : {runtime::FailurePoint::kAfterCommit, runtime::FailurePoint::kBetweenCompletionAndCommit}) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " subtask " + std::to_string(subtask) + " at " +
                 runtime::failure_point_name(point));
    const std::string table = fresh_table("batch_tpc_" + std::to_string(seed), false);
    JobSpec spec;
    spec.records = 5'000;
    spec.records_per_second = 0;  // as fast as it goes
    StreamExecutionEnvironment env;  // the graph only: the job goes straight to the batch runtime (failures armed)
    env.set_parallelism(2);
    PostgresTwoPhaseCommitSinkOptions o;
    o.connection = connection_options();
    o.table = table_options(table, WriteMode::kInsert);
    counts_stream(env, spec).sink_to(PostgresTwoPhaseCommitSink<Count>(o, encode)).name("sink").uid("batch-sink");

    auto sg = std::make_shared<StreamGraph>(env.stream_graph());
    graph::JobGraphOptions jo;
    jo.job_name = "batch-tpc";
    jo.default_parallelism = 2;
    auto jg = graph::build_job_graph(*sg, jo);
    ASSERT_TRUE(jg.is_ok()) << jg.status().to_string();
    int32_t sink_vertex = -1;
    for (const StreamNode& n : sg->nodes)
      if (n.uid == "batch-sink") sink_vertex = jg->vertex_of_node[static_cast<size_t>(n.id)];
    batch::BatchJobConfig bc;
    bc.tmp_dir = temp_dir("batch-tpc-tmp");
    std::filesystem::create_directories(bc.tmp_dir);
    bc.restart.type = RestartStrategyType::kFixedDelay;
    bc.restart.fixed_delay.attempts = 3;
    bc.restart.fixed_delay.delay_ms = 10;
    bc.failures.push_back(batch::ArmedFailure{point, sink_vertex, subtask, "seeded"});
    auto client = batch::submit_batch_job(sg, std::move(*jg), bc);
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    const JobExecutionResult res = (*client)->wait();
    ASSERT_EQ(res.status, JobStatus::kFinished) << res.error.to_string();
    EXPECT_EQ((*client)->injected_failures().size(), 1u);
    EXPECT_EQ((*client)->batch_stats().commit_retries, 1);
    for (int32_t runs : (*client)->stage_runs()) EXPECT_EQ(runs, 1);  // no stage ran again

    const auto got = table_rows(table);
    const auto want = expected_counts(spec);
    EXPECT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want) << "the table differs from the failure-free output";
    EXPECT_EQ(query("SELECT count(*) FROM pg_prepared_xacts")[0][0].as<int64_t>(), 0) << "prepared transactions left";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, BatchTwoPhaseCommit, ::testing::ValuesIn(seeds({1, 2})));

}  // namespace
}  // namespace sluice::postgres::testing
