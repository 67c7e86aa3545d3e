// plan_stages: sources in stage 0, every network edge a stage boundary, chained operators in their producer's
// stage; which heads read sorted input; the unbounded sources a BATCH job refuses.
#include "batch/stage_plan.h"

#include <gtest/gtest.h>

#include "graph/job_graph.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/sluice.h"

namespace sluice::batch {
namespace {

graph::JobGraph job_graph_of(const StreamGraph& sg) {
  graph::JobGraphOptions o;
  o.default_parallelism = 2;
  auto jg = graph::build_job_graph(sg, o);
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  return *jg;
}

int32_t vertex_of_uid(const StreamGraph& sg, const graph::JobGraph& jg, const std::string& uid) {
  for (const StreamNode& n : sg.nodes)
    if (n.uid == uid) return jg.vertex_of_node[static_cast<size_t>(n.id)];
  ADD_FAILURE() << "no node " << uid;
  return -1;
}

TEST(StagePlanTest, NetworkEdgesSeparateStagesAndKeyedHeadsReadSortedInput) {
  StreamExecutionEnvironment env;
  auto src = env.from_sequence(0, 99).uid("src").map([](int64_t v) { return v + 1; }).uid("chained-map");
  auto keyed = src.key_by([](int64_t v) { return v % 7; }).sum().uid("sum");
  keyed.rebalance().map([](int64_t v) { return v; }).uid("relay").sink_to(DiscardingSink<int64_t>());
  auto other = env.from_sequence(0, 9).uid("src2");
  src.union_(other).key_by([](int64_t v) { return v % 3; }).sum().uid("union-sum").sink_to(DiscardingSink<int64_t>());
  const StreamGraph& sg = env.stream_graph();
  graph::JobGraph jg = job_graph_of(sg);
  StagePlan plan = plan_stages(sg, jg);

  auto stage = [&](const char* uid) { return plan.stage_of_vertex[static_cast<size_t>(vertex_of_uid(sg, jg, uid))]; };
  auto sorted = [&](const char* uid) { return plan.sorted_input[static_cast<size_t>(vertex_of_uid(sg, jg, uid))]; };
  EXPECT_EQ(stage("src"), 0);
  EXPECT_EQ(stage("chained-map"), 0);  // chained: same vertex
  EXPECT_EQ(stage("src2"), 0);
  EXPECT_EQ(stage("sum"), 1);
  EXPECT_EQ(stage("relay"), 2);
  EXPECT_EQ(stage("union-sum"), 1);  // two hash edges from stage 0
  EXPECT_TRUE(sorted("sum"));
  EXPECT_TRUE(sorted("union-sum"));
  EXPECT_FALSE(sorted("relay"));  // rebalance: not keyed
  EXPECT_FALSE(sorted("src"));
  ASSERT_EQ(plan.stages.size(), 3u);
  for (size_t s = 0; s < plan.stages.size(); ++s)
    for (int32_t v : plan.stages[s]) EXPECT_EQ(plan.stage_of_vertex[static_cast<size_t>(v)], static_cast<int32_t>(s));
  EXPECT_TRUE(unbounded_sources(sg).empty());
}

struct PassBoth final : KeyedCoProcessFunction<int64_t, int64_t, int64_t, int64_t> {
  void process_element1(const int64_t& v, KeyedProcessContext<int64_t>&, Collector<int64_t>& out) override { out.collect(v); }
  void process_element2(const int64_t& v, KeyedProcessContext<int64_t>&, Collector<int64_t>& out) override { out.collect(v); }
};

struct PassUnkeyed final : CoProcessFunction<int64_t, int64_t, int64_t> {
  void process_element1(const int64_t& v, ProcessContext&, Collector<int64_t>& out) override { out.collect(v); }
  void process_element2(const int64_t& v, ProcessContext&, Collector<int64_t>& out) override { out.collect(v); }
};

TEST(StagePlanTest, TwoInputKeyedHeadsReadSortedInputUnkeyedOnesDoNot) {
  StreamExecutionEnvironment env;
  auto a = env.from_sequence(0, 9).uid("a");
  auto b = env.from_sequence(0, 9).uid("b");
  a.connect(b)
      .key_by([](int64_t v) { return v % 2; }, [](int64_t v) { return v % 2; })
      .process(PassBoth{})
      .uid("co")
      .sink_to(DiscardingSink<int64_t>());
  a.rebalance().connect(b.rebalance()).process(PassUnkeyed{}).uid("unkeyed-co").sink_to(DiscardingSink<int64_t>());
  const StreamGraph& sg = env.stream_graph();
  graph::JobGraph jg = job_graph_of(sg);
  StagePlan plan = plan_stages(sg, jg);
  const int32_t co = vertex_of_uid(sg, jg, "co");
  EXPECT_EQ(plan.stage_of_vertex[static_cast<size_t>(co)], 1);
  EXPECT_TRUE(plan.sorted_input[static_cast<size_t>(co)]);  // both inputs in one key order
  EXPECT_FALSE(plan.sorted_input[static_cast<size_t>(vertex_of_uid(sg, jg, "unkeyed-co"))]);
}

TEST(StagePlanTest, NamesTheUnboundedSources) {
  StreamExecutionEnvironment env;
  nexmark::NexmarkSourceOptions o;  // max_events -1
  env.from_source(nexmark::NexmarkSource(o), "endless").sink_to(DiscardingSink<nexmark::Event>());
  env.from_sequence(0, 9, "finite").sink_to(DiscardingSink<int64_t>());
  EXPECT_EQ(unbounded_sources(env.stream_graph()), std::vector<std::string>{"endless"});
}

}  // namespace
}  // namespace sluice::batch
