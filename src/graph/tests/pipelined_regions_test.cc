#include "graph/pipelined_regions.h"

#include <gtest/gtest.h>

#include "sluice/sluice.h"

namespace sluice::graph {
namespace {

JobGraph regions_job_graph(const StreamExecutionEnvironment& env, int32_t p) {
  auto jg = build_job_graph(env.stream_graph(), JobGraphOptions{"t", p, -1});
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  return jg.is_ok() ? std::move(jg).value() : JobGraph{};
}

// The (vertex, subtask) pairs of one region, for readable expectations.
std::vector<std::pair<int32_t, int32_t>> members(const ExecutionGraph& eg, const std::vector<int32_t>& region) {
  std::vector<std::pair<int32_t, int32_t>> out;
  for (int32_t i : region) out.emplace_back(eg.subtasks[static_cast<size_t>(i)].vertex, eg.subtasks[static_cast<size_t>(i)].subtask_index);
  return out;
}

TEST(PipelinedRegions, AChainedPipelineHasOneRegionPerSubtask) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).map([](int64_t x) { return x; }).sink_to(DiscardingSink<int64_t>());
  JobGraph jg = regions_job_graph(env, 3);
  ExecutionGraph eg = build_execution_graph(jg);
  PipelinedRegions r = compute_pipelined_regions(jg, eg);
  ASSERT_EQ(r.regions.size(), 3u);
  for (int32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(members(eg, r.regions[static_cast<size_t>(i)]), (std::vector<std::pair<int32_t, int32_t>>{{0, i}}));
    EXPECT_EQ(r.region_of[static_cast<size_t>(i)], i);
  }
}

TEST(PipelinedRegions, ForwardEdgesJoinSubtaskIWithSubtaskI) {
  // A union is never chained: sources a and b feed the map through forward edges.
  StreamExecutionEnvironment env;
  auto a = env.from_sequence(1, 10);
  auto b = env.from_sequence(1, 10);
  a.union_(b).map([](int64_t x) { return x; }).sink_to(DiscardingSink<int64_t>());
  JobGraph jg = regions_job_graph(env, 2);
  ASSERT_EQ(jg.vertices.size(), 3u);
  ExecutionGraph eg = build_execution_graph(jg);
  PipelinedRegions r = compute_pipelined_regions(jg, eg);
  ASSERT_EQ(r.regions.size(), 2u);
  const int32_t m = jg.edges[0].target_vertex;
  EXPECT_EQ(members(eg, r.regions[0]), (std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 0}, {m, 0}}));
  EXPECT_EQ(members(eg, r.regions[1]), (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 1}, {m, 1}}));
  EXPECT_EQ(r.region_of[static_cast<size_t>(execution_index(jg, m, 1))], 1);
}

TEST(PipelinedRegions, AnAllToAllEdgeMakesOneRegion) {
  for (Partitioning p : {Partitioning::kHash, Partitioning::kRebalance, Partitioning::kBroadcast}) {
    StreamExecutionEnvironment env;
    auto src = env.from_sequence(1, 10);
    if (p == Partitioning::kHash) {
      src.key_by([](const int64_t& x) { return x % 3; })
          .reduce([](const int64_t& x, const int64_t& y) { return x + y; })
          .sink_to(DiscardingSink<int64_t>());
    } else {
      (p == Partitioning::kRebalance ? src.rebalance() : src.broadcast())
          .map([](int64_t x) { return x; })
          .sink_to(DiscardingSink<int64_t>());
    }
    JobGraph jg = regions_job_graph(env, 3);
    ASSERT_EQ(jg.edges.size(), 1u) << partitioning_name(p);
    EXPECT_FALSE(is_pointwise(jg.edges[0].partitioning));
    ExecutionGraph eg = build_execution_graph(jg);
    PipelinedRegions r = compute_pipelined_regions(jg, eg);
    ASSERT_EQ(r.regions.size(), 1u) << partitioning_name(p);
    EXPECT_EQ(r.regions[0].size(), 6u);
  }
}

TEST(PipelinedRegions, ParallelPipelinesJoinedDownstreamAreOneRegion) {
  // Two sources of parallelism 2 whose union is rebalanced to a sink: every subtask reaches the sink's subtasks.
  StreamExecutionEnvironment env;
  auto a = env.from_sequence(1, 10);
  auto b = env.from_sequence(1, 10);
  a.union_(b).rebalance().map([](int64_t x) { return x; }).sink_to(DiscardingSink<int64_t>());
  JobGraph jg = regions_job_graph(env, 2);
  ExecutionGraph eg = build_execution_graph(jg);
  EXPECT_EQ(compute_pipelined_regions(jg, eg).regions.size(), 1u);
}

// Rescale is pointwise: with 2 -> 4, producer 0 feeds consumers 0 and 1, producer 1 feeds 2 and 3 - two regions.
// Shuffle and global are all-to-all - one.
TEST(PipelinedRegions, RescaleJoinsEachProducerWithItsOwnConsumers) {
  for (Partitioning p : {Partitioning::kRescale, Partitioning::kShuffle, Partitioning::kGlobal}) {
    StreamExecutionEnvironment env;
    auto src = env.from_sequence(1, 10).set_parallelism(2);
    auto exchanged = p == Partitioning::kRescale ? src.rescale() : p == Partitioning::kShuffle ? src.shuffle() : src.global();
    exchanged.map([](int64_t x) { return x; }).set_parallelism(4).sink_to(DiscardingSink<int64_t>()).set_parallelism(4);
    JobGraph jg = regions_job_graph(env, 2);
    ASSERT_EQ(jg.vertices.size(), 2u) << partitioning_name(p);
    ExecutionGraph eg = build_execution_graph(jg);
    PipelinedRegions r = compute_pipelined_regions(jg, eg);
    if (p != Partitioning::kRescale) {
      EXPECT_EQ(r.regions.size(), 1u) << partitioning_name(p);
      continue;
    }
    ASSERT_EQ(r.regions.size(), 2u);
    EXPECT_EQ(members(eg, r.regions[0]), (std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 0}, {1, 1}}));
    EXPECT_EQ(members(eg, r.regions[1]), (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 2}, {1, 3}}));
  }
}

TEST(PipelinedRegions, ExecutionIndexRefusesWhatIsOutOfRange) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).map([](int64_t x) { return x; }).sink_to(DiscardingSink<int64_t>());
  JobGraph jg = regions_job_graph(env, 3);
  EXPECT_EQ(execution_index(jg, 0, 2), 2);
  EXPECT_EQ(execution_index(jg, 0, 3), -1);
  EXPECT_EQ(execution_index(jg, 1, 0), -1);
  EXPECT_EQ(execution_index(jg, -1, 0), -1);
}

}  // namespace
}  // namespace sluice::graph
