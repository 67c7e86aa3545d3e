// The in-flight data of an unaligned checkpoint on rescale (pointwise), shuffle, global and custom edges
// (cluster/channel_state_assignment.h): the old channels are numbered by the pointwise wiring, and at another
// parallelism each record goes where the edge's partitioner allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "checkpoint/jobmanager_checkpoint_storage.h"
#include "cluster/tests/channel_state_test_util.h"
#include "graph/edge_topology.h"

namespace sluice::cluster {
namespace {

using checkpoint::CheckpointMetadata;
using checkpoint::SubtaskChannelState;
using channel_state_test::buffer_of;
using channel_state_test::checkpoint_of;
using channel_state_test::Job;
using channel_state_test::make_job;
using channel_state_test::records_of;

constexpr const char* kLocation = "jobmanager://x/7";

// numbers (parallelism `src`) -> `exchange` -> map "parse" (parallelism `parse`) -> sink.
template <class Exchange>
Job exchange_job(int32_t src, int32_t parse, Exchange exchange) {
  StreamExecutionEnvironment env;
  env.set_parallelism(src);
  auto numbers = env.from_generator(100, [](int64_t i) { return i; }, 0, "numbers").uid("numbers");
  exchange(numbers)
      .map([](const int64_t& v) { return v; })
      .name("parse")
      .uid("parse")
      .set_parallelism(parse)
      .sink_to(DiscardingSink<int64_t>())
      .set_parallelism(parse);
  return make_job(env);
}

Job rescale_job(int32_t src, int32_t parse) {
  return exchange_job(src, parse, [](DataStream<int64_t> s) { return s.rescale(); });
}

// The records of pair (p, c): p * 10000 + c * 100 + i.
std::vector<int64_t> pair_records(int32_t p, int32_t c, int32_t from, int32_t to) {
  std::vector<int64_t> r;
  for (int32_t i = from; i < to; ++i) r.push_back(p * 10000 + c * 100 + i);
  return r;
}

// In-flight data of a rescale edge numbers (P) -> parse (C) as the runtime writes it: each pointwise pair's first
// records in the consumer's input state (on the channel of its producer), the rest in the producer's output state
// (on the subpartition of its consumer).
std::map<std::pair<std::string, int32_t>, SubtaskChannelState> rescale_in_flight(const Job& job, int32_t P, int32_t C,
                                                                               std::vector<int64_t>* all) {
  std::map<std::pair<std::string, int32_t>, SubtaskChannelState> states;
  for (int32_t p = 0; p < P; ++p) {
    const graph::SubtaskRange to = graph::consumers_of_producer(Partitioning::kRescale, p, P, C);
    for (int32_t c = to.begin; c < to.end; ++c) {
      const int32_t channel = p - graph::producers_of_consumer(Partitioning::kRescale, c, P, C).begin;
      states[{job.id("parse"), c}].inputs.push_back({channel, {buffer_of(pair_records(p, c, 0, 3))}});
      states[{job.id("numbers"), p}].outputs.push_back({0, c - to.begin, {buffer_of(pair_records(p, c, 3, 10))}});
      const auto r = pair_records(p, c, 0, 10);
      all->insert(all->end(), r.begin(), r.end());
    }
  }
  return states;
}

TEST(ChannelStateRoute, RescaleAndShuffleSpreadTheOldChannelsGlobalGoesToTheFirstSubtask) {
  // Rescale 2 -> 4 checkpointed, consumer now 3: the four pointwise channels (one per old consumer) spread.
  std::map<int32_t, int> per_target;
  for (int32_t c = 0; c < 4; ++c) {
    auto r = route_channel_state(ChannelStateEdge{Partitioning::kRescale, 2, 4, 3, 128, 128}, c / 2, c);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r->subtasks.size(), 1u);
    EXPECT_FALSE(r->filter_by_partitioner);
    ++per_target[r->subtasks[0]];
  }
  EXPECT_EQ(per_target, (std::map<int32_t, int>{{0, 2}, {1, 1}, {2, 1}}));
  // Rescale 4 -> 2, consumer now 4: one channel per old producer.
  std::set<int32_t> targets;
  for (int32_t p = 0; p < 4; ++p) {
    auto r = route_channel_state(ChannelStateEdge{Partitioning::kRescale, 4, 2, 4, 128, 128}, p, p / 2);
    ASSERT_TRUE(r.is_ok());
    targets.insert(r->subtasks.at(0));
  }
  EXPECT_EQ(targets, (std::set<int32_t>{0, 1, 2, 3}));
  // Shuffle as rebalance: 3 x 4 channels over 5 subtasks.
  std::map<int32_t, int> shuffled;
  for (int32_t c = 0; c < 4; ++c) {
    for (int32_t p = 0; p < 3; ++p) {
      auto r = route_channel_state(ChannelStateEdge{Partitioning::kShuffle, 3, 4, 5, 128, 128}, p, c);
      ASSERT_TRUE(r.is_ok());
      ++shuffled[r->subtasks.at(0)];
    }
  }
  EXPECT_EQ(shuffled.size(), 5u);
  for (int32_t new_p : {1, 2, 5}) {
    auto r = route_channel_state(ChannelStateEdge{Partitioning::kGlobal, 2, 3, new_p, 128, 128}, 1, 0);
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(r->subtasks, std::vector<int32_t>{0});
  }
  auto custom = route_channel_state(ChannelStateEdge{Partitioning::kCustom, 2, 3, 2, 128, 128}, 1, 2);
  ASSERT_TRUE(custom.is_ok());
  EXPECT_EQ(custom->subtasks, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(custom->filter_by_partitioner);
}

TEST(ChannelStateAssignment, RescaleEdgeAtTheSameParallelismKeepsEachPointwiseChannelInOrder) {
  for (auto [P, C] : std::vector<std::pair<int32_t, int32_t>>{{2, 4}, {4, 2}, {3, 5}, {5, 3}}) {
    const Job job = rescale_job(P, C);
    std::vector<int64_t> all;
    const auto states = rescale_in_flight(job, P, C, &all);
    const CheckpointMetadata md = checkpoint_of({{job.id("numbers"), P}, {job.id("parse"), C}}, states);
    checkpoint::JobManagerCheckpointStorage storage;
    auto a = ChannelStateAssignment::build(md, kLocation, storage, *job.sg, job.jg);
    ASSERT_TRUE(a.is_ok()) << a.status().to_string();
    EXPECT_EQ(a->num_records(), all.size());
    for (int32_t c = 0; c < C; ++c) {
      auto st = a->take(job.vertex.at("parse"), c);
      ASSERT_TRUE(st.has_value()) << P << "->" << C << " consumer " << c;
      std::vector<int64_t> want;
      const graph::SubtaskRange from = graph::producers_of_consumer(Partitioning::kRescale, c, P, C);
      for (int32_t p = from.begin; p < from.end; ++p) {
        const auto r = pair_records(p, c, 0, 10);  // input state, then output state: the channel's order
        want.insert(want.end(), r.begin(), r.end());
      }
      EXPECT_EQ(records_of(st->inputs), want) << P << "->" << C << " consumer " << c;
      for (const auto& in : st->inputs) EXPECT_EQ(in.channel, 0) << "the edge's first channel";
    }
    EXPECT_NE(a->summary().at(0).find("each subtask its own"), std::string::npos) << a->summary()[0];
  }
}

TEST(ChannelStateAssignment, RescaleEdgeAtAnotherParallelismRestoresEveryRecordOnceInChannelOrder) {
  const Job old_job = rescale_job(2, 4);
  std::vector<int64_t> all;
  const auto states = rescale_in_flight(old_job, 2, 4, &all);
  const CheckpointMetadata md = checkpoint_of({{old_job.id("numbers"), 2}, {old_job.id("parse"), 4}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  for (auto [P, C] : std::vector<std::pair<int32_t, int32_t>>{{2, 3}, {4, 2}, {1, 5}, {3, 4}, {2, 1}}) {
    Job job = rescale_job(P, C);
    auto a = ChannelStateAssignment::build(md, kLocation, storage, *job.sg, job.jg);
    ASSERT_TRUE(a.is_ok()) << P << "->" << C << ": " << a.status().to_string();
    std::multiset<int64_t> got;
    for (int32_t s = 0; s < C; ++s) {
      auto st = a->take(job.vertex.at("parse"), s);
      if (!st) continue;
      for (const auto& in : st->inputs) EXPECT_EQ(in.channel, 0);
      const std::vector<int64_t> records = records_of(st->inputs);
      // Each old pair's records stay together and in order.
      std::map<int64_t, std::vector<int64_t>> per_pair;
      for (int64_t v : records) per_pair[v / 100].push_back(v);
      for (const auto& [pair, vs] : per_pair) {
        EXPECT_TRUE(std::is_sorted(vs.begin(), vs.end())) << "pair " << pair;
        EXPECT_EQ(vs.size(), 10u) << "pair " << pair << " restored whole at one subtask";
      }
      got.insert(records.begin(), records.end());
    }
    EXPECT_EQ(got, std::multiset<int64_t>(all.begin(), all.end())) << P << "->" << C;
    if (C != 4) {
      EXPECT_NE(a->summary().at(0).find("spread round robin"), std::string::npos) << a->summary()[0];
    }
  }
}

TEST(ChannelStateAssignment, RescaleChannelStateOutsideThePointwiseWiringIsRefused) {
  const Job job = rescale_job(4, 2);  // consumer c reads producers 2c, 2c+1: channels 0 and 1
  checkpoint::JobManagerCheckpointStorage storage;
  SubtaskChannelState in;
  in.inputs.push_back({2, {buffer_of({1})}});
  auto a = ChannelStateAssignment::build(
      checkpoint_of({{job.id("numbers"), 4}, {job.id("parse"), 2}}, {{{job.id("parse"), 1}, in}}), kLocation, storage,
      *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("input channel 2, but its inputs had 2 channels"), std::string::npos)
      << a.status().message();
  SubtaskChannelState out;  // producer 3 feeds consumer 1 only: one subpartition
  out.outputs.push_back({0, 1, {buffer_of({1})}});
  a = ChannelStateAssignment::build(
      checkpoint_of({{job.id("numbers"), 4}, {job.id("parse"), 2}}, {{{job.id("numbers"), 3}, out}}), kLocation,
      storage, *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("subpartition 1, but that output had 1 subpartitions"), std::string::npos)
      << a.status().message();
}

Job custom_job(int32_t src, int32_t parse, bool in_range = true) {
  return exchange_job(src, parse, [in_range](DataStream<int64_t> s) {
    return s.partition_custom(
        [in_range](const int64_t& key, int32_t n) { return in_range ? static_cast<int32_t>(key % n) : n; },
        [](const int64_t& v) { return v; });
  });
}

TEST(ChannelStateAssignment, CustomEdgeRescaledEachRecordGoesWhereThePartitionerSendsItNow) {
  const Job old_job = custom_job(2, 3);
  std::map<std::pair<std::string, int32_t>, SubtaskChannelState> states;
  std::vector<int64_t> all;
  for (int32_t c = 0; c < 3; ++c) {
    for (int32_t p = 0; p < 2; ++p) {
      std::vector<int64_t> r;
      for (int64_t v = p; v < 300; v += 2)
        if (v % 3 == c) r.push_back(v);
      states[{old_job.id("parse"), c}].inputs.push_back({p, {buffer_of(r)}});
      all.insert(all.end(), r.begin(), r.end());
    }
  }
  const CheckpointMetadata md = checkpoint_of({{old_job.id("numbers"), 2}, {old_job.id("parse"), 3}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  for (int32_t C : {2, 4}) {
    Job job = custom_job(2, C);
    auto a = ChannelStateAssignment::build(md, kLocation, storage, *job.sg, job.jg);
    ASSERT_TRUE(a.is_ok()) << a.status().to_string();
    std::multiset<int64_t> got;
    for (int32_t s = 0; s < C; ++s) {
      auto st = a->take(job.vertex.at("parse"), s);
      if (!st) continue;
      for (int64_t v : records_of(st->inputs)) {
        EXPECT_EQ(v % C, s) << "record " << v;
        got.insert(v);
      }
    }
    EXPECT_EQ(got, std::multiset<int64_t>(all.begin(), all.end()));
    EXPECT_NE(a->summary().at(0).find("split by the custom partitioner"), std::string::npos) << a->summary()[0];
  }
  // A partitioner that answers out of range fails the restore, naming the index and the operator.
  Job bad = custom_job(2, 2, false);
  auto a = ChannelStateAssignment::build(md, kLocation, storage, *bad.sg, bad.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("returned partition 2 for 2 partitions"), std::string::npos)
      << a.status().message();
  EXPECT_NE(a.status().message().find("operator 'parse'"), std::string::npos) << a.status().message();
}

TEST(ChannelStateAssignment, GlobalEdgeRescaledGoesToTheFirstSubtask) {
  auto global_job = [](int32_t parse) {
    return exchange_job(2, parse, [](DataStream<int64_t> s) { return s.global(); });
  };
  const Job old_job = global_job(3);
  std::map<std::pair<std::string, int32_t>, SubtaskChannelState> states;
  states[{old_job.id("parse"), 0}].inputs.push_back({1, {buffer_of({1, 2, 3})}});
  states[{old_job.id("numbers"), 0}].outputs.push_back({0, 0, {buffer_of({4, 5})}});
  const CheckpointMetadata md = checkpoint_of({{old_job.id("numbers"), 2}, {old_job.id("parse"), 3}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  Job job = global_job(2);
  auto a = ChannelStateAssignment::build(md, kLocation, storage, *job.sg, job.jg);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  auto st = a->take(job.vertex.at("parse"), 0);
  ASSERT_TRUE(st.has_value());
  const std::vector<int64_t> records = records_of(st->inputs);
  EXPECT_EQ(std::multiset<int64_t>(records.begin(), records.end()), (std::multiset<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_FALSE(a->take(job.vertex.at("parse"), 1).has_value());
  EXPECT_NE(a->summary().at(0).find("all to subtask 0"), std::string::npos) << a->summary()[0];
}

}  // namespace
}  // namespace sluice::cluster
