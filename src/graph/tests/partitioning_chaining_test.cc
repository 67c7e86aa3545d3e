// The DataStream partitionings (shuffle, rescale, global, partition_custom) and chaining controls
// (disable_chaining, start_new_chain) as the job graph sees them, their channel selectors, and the fingerprint.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "graph/job_graph.h"
#include "graph/job_graph_fingerprint.h"
#include "sluice/sluice.h"

namespace sluice::graph {
namespace {

JobGraph build(const StreamGraph& g, int32_t p = 2) {
  auto jg = build_job_graph(g, JobGraphOptions{"t", p, -1});
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  return jg.is_ok() ? std::move(jg).value() : JobGraph{};
}

std::vector<std::string> vertex_names(const JobGraph& jg) {
  std::vector<std::string> names;
  for (const auto& v : jg.vertices) names.push_back(v.name);
  return names;
}

int64_t identity(int64_t x) { return x; }

// src -> (partitioning) -> m -> sink, all at parallelism `p` unless `m_parallelism` > 0.
template <class Partition>
JobGraph two_stage(Partition partition, int32_t m_parallelism = 0, int32_t p = 2) {
  StreamExecutionEnvironment env;
  auto m = partition(env.from_sequence(1, 10).name("src")).map(identity).name("m");
  if (m_parallelism > 0) m.set_parallelism(m_parallelism);
  auto sink = m.sink_to(DiscardingSink<int64_t>()).name("sink");
  if (m_parallelism > 0) sink.set_parallelism(m_parallelism);
  return build(env.stream_graph(), p);
}

TEST(Partitioning, EachMethodGivesItsEdgeAndNoneButForwardChainsAtEqualParallelism) {
  const std::map<Partitioning, std::function<DataStream<int64_t>(DataStream<int64_t>)>> methods{
      {Partitioning::kShuffle, [](DataStream<int64_t> s) { return s.shuffle(); }},
      {Partitioning::kRescale, [](DataStream<int64_t> s) { return s.rescale(); }},
      {Partitioning::kGlobal, [](DataStream<int64_t> s) { return s.global(); }},
      {Partitioning::kCustom,
       [](DataStream<int64_t> s) {
         return s.partition_custom([](const int64_t& k, int32_t n) { return static_cast<int32_t>(k % n); },
                                   [](const int64_t& x) { return x; });
       }},
      {Partitioning::kRebalance, [](DataStream<int64_t> s) { return s.rebalance(); }},
  };
  for (const auto& [p, method] : methods) {
    const JobGraph jg = two_stage(method);
    EXPECT_EQ(vertex_names(jg), (std::vector<std::string>{"Source: src", "m -> sink"})) << partitioning_name(p);
    ASSERT_EQ(jg.edges.size(), 1u) << partitioning_name(p);
    EXPECT_EQ(jg.edges[0].partitioning, p);
  }
  // forward() at equal parallelism chains.
  const JobGraph fwd = two_stage([](DataStream<int64_t> s) { return s.forward(); });
  EXPECT_EQ(vertex_names(fwd), std::vector<std::string>{"Source: src -> m -> sink"});
}

TEST(Partitioning, NamesAreFlinks) {
  EXPECT_STREQ(partitioning_name(Partitioning::kRescale), "RESCALE");
  EXPECT_STREQ(partitioning_name(Partitioning::kShuffle), "SHUFFLE");
  EXPECT_STREQ(partitioning_name(Partitioning::kGlobal), "GLOBAL");
  EXPECT_STREQ(partitioning_name(Partitioning::kCustom), "CUSTOM");
}

TEST(Partitioning, RescaleAndGlobalJoinAnyParallelismsWhileForwardStillNeedsEqualOnes) {
  for (int32_t m : {1, 3, 4}) {
    const JobGraph rescale = two_stage([](DataStream<int64_t> s) { return s.rescale(); }, m);
    ASSERT_EQ(rescale.edges.size(), 1u);
    EXPECT_EQ(rescale.edges[0].partitioning, Partitioning::kRescale) << "2 -> " << m;
    const JobGraph global = two_stage([](DataStream<int64_t> s) { return s.global(); }, m);
    ASSERT_EQ(global.edges.size(), 1u);
    EXPECT_EQ(global.edges[0].partitioning, Partitioning::kGlobal) << "2 -> " << m;
  }
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).forward().map(identity).set_parallelism(3).sink_to(DiscardingSink<int64_t>());
  EXPECT_FALSE(build_job_graph(env.stream_graph(), JobGraphOptions{"t", 2, -1}).is_ok());
}

TEST(Partitioning, AHashOrCustomEdgeWithoutItsPartitionerIsRefused) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).name("src")
      .partition_custom([](const int64_t& k, int32_t n) { return static_cast<int32_t>(k % n); },
                        [](const int64_t& x) { return x; })
      .map(identity).name("m")
      .sink_to(DiscardingSink<int64_t>());
  StreamGraph g = env.stream_graph();
  ASSERT_EQ(g.edges[0].partitioning, Partitioning::kCustom);
  g.edges[0].make_selector = nullptr;
  auto jg = build_job_graph(g, JobGraphOptions{"t", 2, -1});
  ASSERT_FALSE(jg.is_ok());
  EXPECT_EQ(jg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(jg.status().message().find("CUSTOM edge from 'src' to 'm'"), std::string::npos) << jg.status().message();
}

// src -> a -> b -> sink at one parallelism, with `configure` applied to the streams of a and b.
template <class Configure>
std::vector<std::string> chain_of(Configure configure) {
  StreamExecutionEnvironment env;
  auto src = env.from_sequence(1, 10).name("src");
  auto a = src.map(identity).name("a");
  auto b = a.map(identity).name("b");
  DataStreamSink<int64_t> sink = b.sink_to(DiscardingSink<int64_t>()).name("sink");
  configure(src, a, b, sink);
  return vertex_names(build(env.stream_graph()));
}

TEST(Chaining, DisableChainingKeepsTheOperatorOutOfBothNeighboursChains) {
  EXPECT_EQ(chain_of([](auto&, auto& a, auto&, auto&) { a.disable_chaining(); }),
            (std::vector<std::string>{"Source: src", "a", "b -> sink"}));
  EXPECT_EQ(chain_of([](auto& src, auto&, auto&, auto&) { src.disable_chaining(); }),
            (std::vector<std::string>{"Source: src", "a -> b -> sink"}));
  EXPECT_EQ(chain_of([](auto&, auto&, auto&, auto& sink) { sink.disable_chaining(); }),
            (std::vector<std::string>{"Source: src -> a -> b", "sink"}));
}

TEST(Chaining, StartNewChainCutsOnlyBeforeTheOperator) {
  EXPECT_EQ(chain_of([](auto&, auto& a, auto&, auto&) { a.start_new_chain(); }),
            (std::vector<std::string>{"Source: src", "a -> b -> sink"}));
  EXPECT_EQ(chain_of([](auto&, auto&, auto& b, auto&) { b.start_new_chain(); }),
            (std::vector<std::string>{"Source: src -> a", "b -> sink"}));
  // A source has no predecessor: nothing changes.
  EXPECT_EQ(chain_of([](auto& src, auto&, auto&, auto&) { src.start_new_chain(); }),
            (std::vector<std::string>{"Source: src -> a -> b -> sink"}));
  // Both on neighbours: each its own chain.
  EXPECT_EQ(chain_of([](auto&, auto& a, auto& b, auto&) {
              a.start_new_chain();
              b.disable_chaining();
            }),
            (std::vector<std::string>{"Source: src", "a", "b", "sink"}));
}

TEST(Chaining, AnUnchainedForwardEdgeBecomesAForwardJobEdge) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).name("src").map(identity).name("a").disable_chaining().sink_to(DiscardingSink<int64_t>());
  const JobGraph jg = build(env.stream_graph(), 3);
  ASSERT_EQ(jg.edges.size(), 2u);
  for (const JobEdge& e : jg.edges) EXPECT_EQ(e.partitioning, Partitioning::kForward);
  EXPECT_THROW(env.from_sequence(1, 2).union_(env.from_sequence(3, 4)).disable_chaining(), std::logic_error)
      << "a union is no operator";
}

TEST(Partitioning, FingerprintChangesWithThePartitioningAndTheChaining) {
  auto fingerprint = [](const std::function<DataStream<int64_t>(DataStream<int64_t>)>& partition,
                        ChainingStrategy m_chaining) {
    StreamExecutionEnvironment env;
    auto m = partition(env.from_sequence(1, 10).name("src")).map(identity).name("m");
    if (m_chaining == ChainingStrategy::kNever) m.disable_chaining();
    if (m_chaining == ChainingStrategy::kHead) m.start_new_chain();
    m.sink_to(DiscardingSink<int64_t>()).name("sink");
    const JobGraph jg = build(env.stream_graph(), 2);
    return job_graph_fingerprint(env.stream_graph(), jg, {});
  };
  const auto custom = [](DataStream<int64_t> s) {
    return s.partition_custom([](const int64_t& k, int32_t n) { return static_cast<int32_t>(k % n); },
                              [](const int64_t& x) { return x; });
  };
  std::set<uint64_t> seen;
  for (const auto& method : std::vector<std::function<DataStream<int64_t>(DataStream<int64_t>)>>{
           [](DataStream<int64_t> s) { return s; }, [](DataStream<int64_t> s) { return s.rebalance(); },
           [](DataStream<int64_t> s) { return s.shuffle(); }, [](DataStream<int64_t> s) { return s.rescale(); },
           [](DataStream<int64_t> s) { return s.global(); }, custom}) {
    for (ChainingStrategy c : {ChainingStrategy::kAlways, ChainingStrategy::kHead, ChainingStrategy::kNever}) {
      const uint64_t f = fingerprint(method, c);
      EXPECT_EQ(fingerprint(method, c), f) << "the same program agrees";
      seen.insert(f);
    }
  }
  EXPECT_EQ(seen.size(), 18u) << "every partitioning and chaining strategy has a fingerprint of its own";
}

TEST(Partitioners, RescaleRoundRobinsOverItsOwnChannelsFromTheFirst) {
  RescalePartitioner<int64_t> r;
  r.setup(2, 128, 1);
  std::vector<int32_t> got;
  for (int i = 0; i < 5; ++i) got.push_back(r.select_channel(0));
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 0, 1, 0}));
}

TEST(Partitioners, ShuffleIsUniformAndReproduciblePerSubtask) {
  constexpr int kRecords = 60'000;
  std::vector<int32_t> first;
  for (int32_t subtask : {0, 1}) {
    ShufflePartitioner<int64_t> s;
    s.setup(6, 128, subtask);
    std::vector<int> count(6, 0);
    std::vector<int32_t> seq;
    for (int i = 0; i < kRecords; ++i) {
      const int32_t c = s.select_channel(i);
      ASSERT_GE(c, 0);
      ASSERT_LT(c, 6);
      ++count[static_cast<size_t>(c)];
      if (i < 64) seq.push_back(c);
    }
    for (int c : count) EXPECT_NEAR(c, kRecords / 6, kRecords / 60) << "within 10% of a uniform share";
    ShufflePartitioner<int64_t> again;
    again.setup(6, 128, subtask);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(again.select_channel(i), seq[static_cast<size_t>(i)]) << "same seed";
    if (subtask == 0) {
      first = seq;
    } else {
      EXPECT_NE(seq, first) << "another subtask draws another sequence";
    }
  }
}

TEST(Partitioners, GlobalSendsEverythingToTheFirstChannel) {
  GlobalPartitioner<int64_t> g;
  g.setup(4, 128, 3);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(g.select_channel(i), 0);
}

TEST(Partitioners, CustomUsesTheKeyAndFailsOnAnIndexOutOfRangeNamingIt) {
  auto by_key = [](const std::string& key, int32_t n) {
    return key == "bad" ? n : static_cast<int32_t>(key.size()) % n;
  };
  auto key_of = [](const std::pair<std::string, int64_t>& r) { return r.first; };
  CustomPartitionerWrapper<std::pair<std::string, int64_t>, decltype(by_key), decltype(key_of)> c(by_key, key_of);
  c.setup(3, 128, 0);
  EXPECT_EQ(c.select_channel({"ab", 1}), 2);
  EXPECT_EQ(c.select_channel({"abcd", 1}), 1);
  try {
    c.select_channel({"bad", 1});
    ADD_FAILURE() << "an index out of range must fail";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find("returned partition 3 for 3 partitions"), std::string::npos)
        << e.status().message();
  }
  auto negative = [](const std::string&, int32_t) { return -1; };
  CustomPartitionerWrapper<std::pair<std::string, int64_t>, decltype(negative), decltype(key_of)> n(negative, key_of);
  n.setup(3, 128, 0);
  EXPECT_THROW(n.select_channel({"x", 1}), StatusError);
}

}  // namespace
}  // namespace sluice::graph
