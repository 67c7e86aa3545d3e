#include "graph/job_graph.h"
#include "graph/job_graph_fingerprint.h"

#include <gtest/gtest.h>

#include "sluice/sluice.h"

namespace sluice::graph {
namespace {

JobGraph build(const StreamExecutionEnvironment& env, int32_t p = 2, int32_t max_p = -1) {
  auto jg = build_job_graph(env.stream_graph(), JobGraphOptions{"t", p, max_p});
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  return jg.is_ok() ? std::move(jg).value() : JobGraph{};
}

// The program every process of a cluster builds: source -> key_by -> reduce -> sink.
void keyed_program(StreamExecutionEnvironment& env, const std::string& reduce_uid) {
  env.from_sequence(1, 10).name("src")
      .key_by([](const int64_t& x) { return x % 3; }).reduce([](const int64_t& a, const int64_t& b) { return a + b; })
      .name("r").uid(reduce_uid)
      .sink_to(DiscardingSink<int64_t>()).name("sink");
}

TEST(JobGraphFingerprint, TheSameProgramAgreesAndAnyDifferenceThatMattersDisagrees) {
  auto fingerprint = [](const std::string& uid, int32_t p, int32_t max_p, std::map<std::string, std::string> props) {
    StreamExecutionEnvironment env;
    keyed_program(env, uid);
    JobGraph jg = build(env, p, max_p);
    return job_graph_fingerprint(env.stream_graph(), jg, props);
  };
  const uint64_t base = fingerprint("r", 2, 128, {{"demo.seed", "1"}});
  EXPECT_EQ(fingerprint("r", 2, 128, {{"demo.seed", "1"}}), base) << "two processes building the same program";
  EXPECT_NE(fingerprint("r2", 2, 128, {{"demo.seed", "1"}}), base) << "another uid";
  EXPECT_NE(fingerprint("r", 3, 128, {{"demo.seed", "1"}}), base) << "another parallelism";
  EXPECT_NE(fingerprint("r", 2, 256, {{"demo.seed", "1"}}), base) << "another max parallelism";
  EXPECT_NE(fingerprint("r", 2, 128, {{"demo.seed", "2"}}), base) << "another job property";
  EXPECT_NE(fingerprint("r", 2, 128, {}), base) << "a job property missing";
  StreamExecutionEnvironment env;
  keyed_program(env, "r");
  JobGraph jg = build(env, 2, 128);
  const std::map<std::string, std::string> props{{"demo.seed", "1"}};
  EXPECT_EQ(job_graph_fingerprint(env.stream_graph(), jg, props, {}), base);
  EXPECT_NE(job_graph_fingerprint(env.stream_graph(), jg, props, {{"state.backend", "ROCKSDB"}}), base)
      << "another task setting";
  EXPECT_NE(job_graph_fingerprint(env.stream_graph(), jg, {}, {{"demo.seed", "1"}}), base)
      << "a job property is not a task setting";
}

TEST(JobGraph, ForwardEdgesOfEqualParallelismChain) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).name("src").map([](int64_t x) { return x; }).name("m").filter([](const int64_t&) { return true; }).name("f")
      .sink_to(DiscardingSink<int64_t>()).name("sink");
  JobGraph jg = build(env);
  ASSERT_EQ(jg.vertices.size(), 1u);
  EXPECT_EQ(jg.vertices[0].name, "Source: src -> m -> f -> sink");
  EXPECT_EQ(jg.vertices[0].nodes.size(), 4u);
  EXPECT_TRUE(jg.edges.empty());
}

TEST(JobGraph, KeyByRebalanceAndParallelismChangesBreakChains) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).name("src")
      .key_by([](const int64_t& x) { return x % 3; }).reduce([](const int64_t& a, const int64_t& b) { return a + b; }).name("r")
      .rebalance().map([](int64_t x) { return x; }).name("m")
      .map([](int64_t x) { return x; }).name("m2").set_parallelism(3)
      .sink_to(DiscardingSink<int64_t>()).name("sink").set_parallelism(3);
  JobGraph jg = build(env);
  ASSERT_EQ(jg.vertices.size(), 4u);  // src | r | m | m2 -> sink
  EXPECT_EQ(jg.vertices[3].name, "m2 -> sink");
  EXPECT_EQ(jg.vertices[3].parallelism, 3);
  ASSERT_EQ(jg.edges.size(), 3u);
  EXPECT_EQ(jg.edges[0].partitioning, Partitioning::kHash);
  EXPECT_EQ(jg.edges[1].partitioning, Partitioning::kRebalance);
  EXPECT_EQ(jg.edges[2].partitioning, Partitioning::kRebalance);  // default with differing parallelism
}

TEST(JobGraph, EdgesCarryTimestampsOnlyDownstreamOfAnAssigner) {
  StreamExecutionEnvironment env;
  auto plain = env.from_sequence(1, 10).name("plain");
  auto stamped = env.from_sequence(1, 10)
                     .name("stamped-src")
                     .rebalance()
                     .assign_timestamps_and_watermarks(WatermarkStrategy<int64_t>::for_monotonous_timestamps()
                                                           .with_timestamp_assigner([](const int64_t& x) { return x; }))
                     .name("ts");
  stamped.key_by([](const int64_t& x) { return x % 3; }).reduce([](const int64_t& a, const int64_t& b) { return a + b; })
      .name("r").sink_to(DiscardingSink<int64_t>());
  // A union of a stamped and a plain input: both edges into the node share the framing with timestamps.
  plain.rebalance().union_(stamped.rebalance()).map([](int64_t x) { return x; }).name("u").sink_to(DiscardingSink<int64_t>());
  JobGraph jg = build(env);
  auto vertex_named = [&](const std::string& n) {
    for (const auto& v : jg.vertices)
      if (v.name.rfind(n, 0) == 0 || v.name.rfind("Source: " + n, 0) == 0) return v.id;
    return -1;
  };
  int checked = 0;
  for (const auto& e : jg.edges) {
    const int32_t target = e.target_vertex;
    if (target == vertex_named("ts")) {
      EXPECT_FALSE(e.carries_timestamps) << "nothing upstream of the assigner has timestamps";
      ++checked;
    } else if (target == vertex_named("r") || target == vertex_named("u")) {
      EXPECT_TRUE(e.carries_timestamps);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}

TEST(JobGraph, UnionInputsAreNotChained) {
  StreamExecutionEnvironment env;
  auto a = env.from_sequence(1, 10);
  auto b = env.from_sequence(1, 10);
  a.union_(b).map([](int64_t x) { return x; }).sink_to(DiscardingSink<int64_t>());
  JobGraph jg = build(env);
  ASSERT_EQ(jg.vertices.size(), 3u);
  EXPECT_EQ(jg.edges.size(), 2u);
  EXPECT_EQ(jg.edges[0].partitioning, Partitioning::kForward);
}

TEST(JobGraph, MaxParallelismDefaultsAndChecks) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).sink_to(DiscardingSink<int64_t>()).set_parallelism(200);
  EXPECT_EQ(build(env, 2).max_parallelism, 512);  // round_up_pow2(200 + 100)
  EXPECT_EQ(build(env, 2, 1000).max_parallelism, 1000);
  auto bad = build_job_graph(env.stream_graph(), JobGraphOptions{"t", 2, 100});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("100"), std::string::npos) << bad.status().message();
}

TEST(ExecutionGraph, SubtasksGetContiguousKeyGroupRanges) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).key_by([](const int64_t& x) { return x; }).sum().set_parallelism(3).sink_to(DiscardingSink<int64_t>()).set_parallelism(3);
  JobGraph jg = build(env, 1, 128);
  ExecutionGraph eg = build_execution_graph(jg);
  std::vector<std::pair<int32_t, int32_t>> ranges;
  for (const auto& st : eg.subtasks)
    if (st.vertex == 1) ranges.push_back({st.key_group_range.start(), st.key_group_range.end_inclusive()});
  EXPECT_EQ(ranges, (std::vector<std::pair<int32_t, int32_t>>{{0, 42}, {43, 85}, {86, 127}}));
}

// A two-input node heads its own vertex (its forward input is not chained), its successors chain behind it,
// edges say which input they feed, and the timestamp framing is decided per input.
TEST(JobGraph, TwoInputNodesHeadTheirVertexAndEdgesCarryTheirInputNumber) {
  StreamExecutionEnvironment env;
  auto plain = env.from_sequence(1, 10).name("plain");
  auto stamped = env.from_sequence(1, 10)
                     .name("stamped")
                     .assign_timestamps_and_watermarks(WatermarkStrategy<int64_t>::for_monotonous_timestamps()
                                                           .with_timestamp_assigner([](const int64_t& x) { return x; }))
                     .map([](int64_t x) { return std::to_string(x); })
                     .name("str");
  plain.connect(stamped)
      .map([](int64_t&& x) { return x; }, [](std::string&& s) { return static_cast<int64_t>(s.size()); })
      .name("co")
      .map([](int64_t x) { return x; })
      .name("after")
      .sink_to(DiscardingSink<int64_t>())
      .name("sink");
  JobGraph jg = build(env);
  ASSERT_EQ(jg.vertices.size(), 3u);
  EXPECT_EQ(jg.vertices[2].name, "co -> after -> sink");
  ASSERT_EQ(jg.edges.size(), 2u);
  for (const auto& e : jg.edges) {
    EXPECT_EQ(e.partitioning, Partitioning::kForward);
    const bool from_plain = jg.vertices[static_cast<size_t>(e.source_vertex)].name == "Source: plain";
    EXPECT_EQ(e.type_number, from_plain ? 1 : 2);
    EXPECT_EQ(e.carries_timestamps, !from_plain) << "input 1 has no timestamps, input 2 has";
  }
}

TEST(JobGraph, ATwoInputNodeNeedsBothInputs) {
  StreamGraph g;
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).connect(env.from_sequence(1, 10))
      .map([](int64_t&& x) { return x; }, [](int64_t&& x) { return x; })
      .sink_to(DiscardingSink<int64_t>());
  g = env.stream_graph();
  ASSERT_TRUE(build_job_graph(g, JobGraphOptions{"t", 1, -1}).is_ok());
  for (auto& e : g.edges) {
    if (e.type_number == 2) e.type_number = 1;
  }
  auto jg = build_job_graph(g, JobGraphOptions{"t", 1, -1});
  ASSERT_FALSE(jg.is_ok());
  EXPECT_NE(jg.status().message().find("lacks its input 2"), std::string::npos) << jg.status().to_string();
}

}  // namespace
}  // namespace sluice::graph
