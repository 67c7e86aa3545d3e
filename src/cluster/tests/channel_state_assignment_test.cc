// Reassigning an unaligned checkpoint's in-flight data to the subtasks of a restoring job
// (cluster/channel_state_assignment.h): which new subtask gets which old buffers, filtering by key group,
// two-input heads, a stateless head, and refusals (topology changed, corrupt or missing files).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/jobmanager_checkpoint_storage.h"
#include "cluster/state_assignment.h"
#include "cluster/tests/channel_state_test_util.h"

namespace sluice::cluster {
namespace {

using checkpoint::ChannelStateBuffer;
using checkpoint::CheckpointMetadata;
using checkpoint::SubtaskChannelState;
using channel_state_test::buffer_of;
using channel_state_test::checkpoint_of;
using channel_state_test::inline_handle;
using channel_state_test::Job;
using channel_state_test::kMaxParallelism;
using channel_state_test::make_job;
using channel_state_test::records_of;

constexpr int64_t kKeys = 50;

int32_t owner(int64_t record, int32_t parallelism) {
  const KeyGroup kg = key_group_for_key<int64_t>(record % kKeys, kMaxParallelism);
  return subtask_for_key_group(kMaxParallelism, parallelism, kg).value();
}

struct Pass final : KeyedProcessFunction<int64_t, int64_t, int64_t> {
  void process_element(const int64_t& v, KeyedProcessContext<int64_t>&, Collector<int64_t>& out) override {
    out.collect(int64_t{v});
  }
};

// numbers (parallelism `src`) [-> rebalance -> map "parse", a stateless head at parallelism `parse` when > 0]
// -> key_by(v % kKeys) -> keyed (parallelism `keyed`) -> sink.
Job keyed_job(int32_t src, int32_t keyed, int32_t parse = 0) {
  StreamExecutionEnvironment env;
  env.set_parallelism(src);
  auto numbers = env.from_generator(100, [](int64_t i) { return i; }, 0, "numbers").uid("numbers");
  if (parse > 0) {
    auto parsed = numbers.rebalance().map([](const int64_t& v) { return v; });
    numbers = parsed.name("parse").uid("parse").set_parallelism(parse);
  }
  numbers.key_by([](const int64_t& v) { return v % kKeys; })
      .process(Pass{})
      .name("keyed")
      .uid("keyed")
      .set_parallelism(keyed)
      .sink_to(DiscardingSink<int64_t>())
      .set_parallelism(keyed);
  return make_job(env);
}

TEST(ChannelStateRoute, KeepsEachOldConsumerWhenTheConsumerKeepsItsParallelism) {
  for (Partitioning p :
       {Partitioning::kHash, Partitioning::kRebalance, Partitioning::kForward, Partitioning::kBroadcast}) {
    auto r = route_channel_state(ChannelStateEdge{p, 4, 3, 3, 128, 128}, 1, 2);
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(r->subtasks, std::vector<int32_t>{2});
    EXPECT_FALSE(r->filter_by_partitioner);
  }
}

TEST(ChannelStateRoute, HashEdgesGoToEveryOverlappingSubtaskAndEachKeyGroupHasExactlyOneOwner) {
  for (int32_t old_p : {1, 2, 3, 4, 5}) {
    for (int32_t new_p : {1, 2, 3, 4, 5, 7}) {
      if (old_p == new_p) continue;
      for (int32_t c = 0; c < old_p; ++c) {
        auto r = route_channel_state(ChannelStateEdge{Partitioning::kHash, 2, old_p, new_p, 128, 128}, 0, c);
        ASSERT_TRUE(r.is_ok());
        EXPECT_TRUE(r->filter_by_partitioner);
        // Every key group of old c is owned by exactly one target; every target owns some of them.
        const KeyGroupRange old_range = key_group_range_for_subtask(128, old_p, SubtaskIndex(c));
        std::set<int32_t> used;
        for (KeyGroup kg : old_range) {
          const int32_t s = subtask_for_key_group(128, new_p, kg).value();
          EXPECT_NE(std::find(r->subtasks.begin(), r->subtasks.end(), s), r->subtasks.end())
              << old_p << "->" << new_p << " old " << c << " key group " << kg.value();
          used.insert(s);
        }
        EXPECT_EQ(used.size(), r->subtasks.size()) << old_p << "->" << new_p << " old " << c;
      }
    }
  }
  // 4 -> 2: old 0 and 1 into new 0, old 2 and 3 into new 1.
  auto r = route_channel_state(ChannelStateEdge{Partitioning::kHash, 4, 4, 2, 128, 128}, 3, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->subtasks, std::vector<int32_t>{1});
  // Another max parallelism (re-hashed key groups): every subtask, each filtering.
  r = route_channel_state(ChannelStateEdge{Partitioning::kHash, 2, 2, 3, 128, 256}, 0, 0);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->subtasks, (std::vector<int32_t>{0, 1, 2}));
}

TEST(ChannelStateRoute, RebalanceEdgesSpreadTheOldChannelsRoundRobinUnfiltered) {
  std::map<int32_t, int> per_target;
  for (int32_t c = 0; c < 4; ++c) {
    for (int32_t p = 0; p < 3; ++p) {
      auto r = route_channel_state(ChannelStateEdge{Partitioning::kRebalance, 3, 4, 5, 128, 128}, p, c);
      ASSERT_TRUE(r.is_ok());
      ASSERT_EQ(r->subtasks.size(), 1u);
      EXPECT_FALSE(r->filter_by_partitioner);
      ++per_target[r->subtasks[0]];
    }
  }
  ASSERT_EQ(per_target.size(), 5u);  // 12 channels over 5 subtasks: 3, 3, 2, 2, 2
  for (const auto& [s, n] : per_target) EXPECT_TRUE(n == 2 || n == 3) << s;
}

TEST(ChannelStateRoute, ForwardAndBroadcastEdgesAtAChangedParallelismAreRefused) {
  for (Partitioning p : {Partitioning::kForward, Partitioning::kBroadcast}) {
    auto r = route_channel_state(ChannelStateEdge{p, 2, 2, 3, 128, 128}, 0, 0);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("from parallelism 2 to 3"), std::string::npos) << r.status().message();
  }
}

TEST(ChannelStateAssignment, FilterByKeyGroupKeepsExactlyTheRecordsEachSubtaskOwnsInOrder) {
  Job job = keyed_job(2, 3);
  const graph::JobEdge& e = *job.jg.inputs_of(job.vertex.at("keyed")).front();
  const StreamEdge& edge = job.sg->edges[static_cast<size_t>(e.stream_edge)];
  std::vector<ChannelStateBuffer> buffers;
  std::vector<int64_t> all;
  for (int64_t b = 0; b < 5; ++b) {
    std::vector<int64_t> r;
    for (int64_t i = 0; i < 40; ++i) r.push_back(b * 40 + i);
    all.insert(all.end(), r.begin(), r.end());
    buffers.push_back(buffer_of(r));
  }
  std::vector<int64_t> kept_total;
  for (int32_t s = 0; s < 3; ++s) {
    auto kept = filter_by_partitioner(edge, e.carries_timestamps, buffers, s, 3, kMaxParallelism, "test");
    ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
    const std::vector<int64_t> got = records_of({checkpoint::InputChannelState{0, std::move(kept).value()}});
    std::vector<int64_t> want;
    for (int64_t r : all)
      if (owner(r, 3) == s) want.push_back(r);
    EXPECT_EQ(got, want) << "subtask " << s;
    kept_total.insert(kept_total.end(), got.begin(), got.end());
  }
  EXPECT_EQ(kept_total.size(), all.size());
  // A buffer that does not decode as the edge's records fails, naming what was restored.
  std::vector<ChannelStateBuffer> bad{{1, {0xff}}};
  auto r = filter_by_partitioner(edge, e.carries_timestamps, bad, 0, 3, kMaxParallelism, "restoring X");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("restoring X"), std::string::npos) << r.status().message();
}

// Checkpoint at numbers 2 -> keyed 4: keyed subtask c holds input state on channel p, numbers subtask p holds
// output state for subpartition c. Records (p, c, i) are numbered so that each is routed to c at parallelism 4.
std::map<std::pair<std::string, int32_t>, SubtaskChannelState> keyed_in_flight(const Job& old_job,
                                                                             std::vector<int64_t>* all) {
  std::map<std::pair<std::string, int32_t>, SubtaskChannelState> states;
  std::map<int32_t, std::vector<int64_t>> by_consumer;
  for (int64_t v = 0; v < 400; ++v) by_consumer[owner(v, 4)].push_back(v);
  for (int32_t c = 0; c < 4; ++c) {
    const auto& vs = by_consumer[c];
    for (int32_t p = 0; p < 2; ++p) {
      // The first third of (p, c)'s share in c's input state, the rest in p's output state (in that order).
      std::vector<int64_t> mine;  // producer p sent the records with v % 2 == p (so each key has one producer)
      for (int64_t v : vs)
        if (v % 2 == p) mine.push_back(v);
      const size_t cut = mine.size() / 3;
      std::vector<int64_t> in(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(cut));
      std::vector<int64_t> out(mine.begin() + static_cast<std::ptrdiff_t>(cut), mine.end());
      states[{old_job.id("keyed"), c}].inputs.push_back({p, {buffer_of(in)}});
      states[{old_job.id("numbers"), p}].outputs.push_back({0, c, {buffer_of(out)}});
      all->insert(all->end(), mine.begin(), mine.end());
    }
  }
  return states;
}

TEST(ChannelStateAssignment, KeyedEdgeRescaledEveryRecordReachesTheSubtaskOwningItsKeyInChannelOrder) {
  const Job old_job = keyed_job(2, 4);
  std::vector<int64_t> all;
  const auto states = keyed_in_flight(old_job, &all);
  const CheckpointMetadata md = checkpoint_of({{old_job.id("numbers"), 2}, {old_job.id("keyed"), 4}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  for (auto [src, keyed] : std::vector<std::pair<int32_t, int32_t>>{{2, 4}, {3, 2}, {1, 5}, {2, 1}, {2, 3}}) {
    Job job = keyed_job(src, keyed);
    auto a = ChannelStateAssignment::build(md, "jobmanager://x/7", storage, *job.sg, job.jg);
    ASSERT_TRUE(a.is_ok()) << a.status().to_string();
    EXPECT_EQ(a->num_records(), all.size());
    std::multiset<int64_t> got_all;
    for (int32_t s = 0; s < src; ++s) EXPECT_FALSE(a->take(job.vertex.at("numbers"), s).has_value());
    for (int32_t s = 0; s < keyed; ++s) {
      auto st = a->take(job.vertex.at("keyed"), s);
      if (!st) continue;
      EXPECT_TRUE(st->outputs.empty());
      for (const auto& in : st->inputs) EXPECT_EQ(in.channel, 0) << "the keyed edge's first channel";
      const std::vector<int64_t> got = records_of(st->inputs);
      for (int64_t v : got) EXPECT_EQ(owner(v, keyed), s) << src << "x" << keyed << " record " << v;
      got_all.insert(got.begin(), got.end());
      // A key's records (one producer, one old channel) keep their order: increasing here.
      std::map<int64_t, std::vector<int64_t>> per_key;
      for (int64_t v : got) per_key[v % kKeys].push_back(v);
      for (const auto& [k, vs] : per_key) EXPECT_TRUE(std::is_sorted(vs.begin(), vs.end())) << "key " << k;
    }
    EXPECT_EQ(got_all, std::multiset<int64_t>(all.begin(), all.end())) << src << "x" << keyed;
    EXPECT_EQ(a->summary().size(), 1u);
    EXPECT_NE(a->summary()[0].find(keyed == 4 ? "each subtask its own" : "split by key group"), std::string::npos)
        << a->summary()[0];
  }
}

TEST(ChannelStateAssignment, SameParallelismKeepsInputStateBeforeOutputStatePerChannel) {
  const Job job = keyed_job(2, 4);
  std::vector<int64_t> all;
  const auto states = keyed_in_flight(job, &all);
  const CheckpointMetadata md = checkpoint_of({{job.id("numbers"), 2}, {job.id("keyed"), 4}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  Job same = keyed_job(2, 4);
  auto a = ChannelStateAssignment::build(md, "jobmanager://x/7", storage, *same.sg, same.jg);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  for (int32_t c = 0; c < 4; ++c) {
    auto st = a->take(same.vertex.at("keyed"), c);
    ASSERT_TRUE(st.has_value());
    // (p, c) in order: c's input state from p, then p's output state for c - exactly the old channel's order.
    std::vector<int64_t> want;
    for (int32_t p = 0; p < 2; ++p) {
      const auto in = records_of(states.at({job.id("keyed"), c}).inputs, p, p + 1);
      want.insert(want.end(), in.begin(), in.end());
      for (const auto& out : states.at({job.id("numbers"), p}).outputs) {
        if (out.subpartition != c) continue;
        const auto o = records_of({checkpoint::InputChannelState{0, out.buffers}});
        want.insert(want.end(), o.begin(), o.end());
      }
    }
    EXPECT_EQ(records_of(st->inputs), want) << "subtask " << c;
  }
}

TEST(ChannelStateAssignment, AStatelessHeadGetsItsInFlightDataAndPassesItsOutputStateOn) {
  const Job old_job = keyed_job(2, 4, 4);
  std::map<std::pair<std::string, int32_t>, SubtaskChannelState> states;
  std::vector<int64_t> into_parse, into_keyed;
  int64_t next = 0;
  for (int32_t m = 0; m < 4; ++m) {
    for (int32_t p = 0; p < 2; ++p) {  // parse m's input state from numbers p
      std::vector<int64_t> r{next, next + 1};
      next += 2;
      into_parse.insert(into_parse.end(), r.begin(), r.end());
      states[{old_job.id("parse"), m}].inputs.push_back({p, {buffer_of(r)}});
    }
    for (int32_t c = 0; c < 4; ++c) {  // parse m's output state for keyed c
      std::vector<int64_t> r;
      for (int64_t v = 1000 + m * 100; v < 1000 + m * 100 + 100; ++v)
        if (owner(v, 4) == c) r.push_back(v);
      into_keyed.insert(into_keyed.end(), r.begin(), r.end());
      states[{old_job.id("parse"), m}].outputs.push_back({0, c, {buffer_of(r)}});
    }
  }
  const CheckpointMetadata md = checkpoint_of(
      {{old_job.id("numbers"), 2}, {old_job.id("parse"), 4}, {old_job.id("keyed"), 4}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  Job job = keyed_job(2, 2, 3);
  auto a = ChannelStateAssignment::build(md, "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  std::multiset<int64_t> parse_got, keyed_got;
  for (int32_t s = 0; s < 3; ++s) {
    auto st = a->take(job.vertex.at("parse"), s);
    ASSERT_TRUE(st.has_value()) << "parse subtask " << s << " gets some of 8 old channels";
    for (int64_t v : records_of(st->inputs)) parse_got.insert(v);
  }
  for (int32_t s = 0; s < 2; ++s) {
    auto st = a->take(job.vertex.at("keyed"), s);
    ASSERT_TRUE(st.has_value());
    for (int64_t v : records_of(st->inputs)) {
      EXPECT_EQ(owner(v, 2), s);
      keyed_got.insert(v);
    }
  }
  EXPECT_EQ(parse_got, std::multiset<int64_t>(into_parse.begin(), into_parse.end()));
  EXPECT_EQ(keyed_got, std::multiset<int64_t>(into_keyed.begin(), into_keyed.end()));
}

template <class IN2>
struct FirstInputPass final : KeyedCoProcessFunction<int64_t, int64_t, IN2, int64_t> {
  void process_element1(const int64_t& v, KeyedProcessContext<int64_t>&, Collector<int64_t>& out) override {
    out.collect(int64_t{v});
  }
  void process_element2(const IN2&, KeyedProcessContext<int64_t>&, Collector<int64_t>&) override {}
};

// `left` (int64, keyed by |v| % kKeys) and `right` connected into the keyed two-input operator `name` at
// parallelism `co`, then a sink.
template <class IN2, class L, class R, class KR>
void connect_into(L left, R right, KR right_key, const std::string& name, int32_t co) {
  left.connect(right)
      .key_by([](const int64_t& v) { return (v < 0 ? -v : v) % kKeys; }, right_key)
      .process(FirstInputPass<IN2>{})
      .name(name)
      .uid(name)
      .set_parallelism(co)
      .sink_to(DiscardingSink<int64_t>())
      .set_parallelism(co);
}

// left (1) and right (2) sources connected into "co" (parallelism `co`): channels 0 from left, 1-2 from right.
Job two_input_job(int32_t co) {
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  auto left = env.from_generator(10, [](int64_t i) { return i; }, 0, "left").uid("left");
  auto right = env.from_generator(10, [](int64_t i) { return std::to_string(i); }, 0, "right").uid("right")
                   .set_parallelism(2);
  connect_into<std::string>(
      left, right, [](const std::string& s) { return static_cast<int64_t>(std::stoll(s)) % kKeys; }, "co", co);
  return make_job(env);
}

TEST(ChannelStateAssignment, TwoInputHeadsGetEachRecordBackOnTheInputItCameFrom) {
  const Job old_job = two_input_job(2);
  std::map<std::pair<std::string, int32_t>, SubtaskChannelState> states;
  std::vector<std::string> right_all;
  for (int32_t c = 0; c < 2; ++c) {
    std::vector<int64_t> left;
    for (int64_t v = 0; v < 200; ++v)
      if (owner(v, 2) == c) left.push_back(v);
    states[{old_job.id("co"), c}].inputs.push_back({0, {buffer_of(left)}});
    for (int32_t p = 0; p < 2; ++p) {
      ChannelStateBuffer b;
      DataOutputView out(&b.bytes);
      for (int64_t v = 0; v < 200; ++v) {
        if (owner(v, 2) != c || v % 2 != p) continue;
        TypeSerializer<std::string>::serialize(std::to_string(v), out);
        ++b.num_records;
        right_all.push_back(std::to_string(v));
      }
      states[{old_job.id("co"), c}].inputs.push_back({1 + p, {b}});
    }
  }
  const CheckpointMetadata md = checkpoint_of(
      {{old_job.id("left"), 1}, {old_job.id("right"), 2}, {old_job.id("co"), 2}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  Job job = two_input_job(3);
  auto a = ChannelStateAssignment::build(md, "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  std::multiset<int64_t> left_got;
  std::multiset<std::string> right_got;
  for (int32_t s = 0; s < 3; ++s) {
    auto st = a->take(job.vertex.at("co"), s);
    ASSERT_TRUE(st.has_value());
    for (const auto& in : st->inputs) {
      ASSERT_TRUE(in.channel == 0 || in.channel == 1) << "left: channel 0, right: its first channel, 1";
      for (const auto& b : in.buffers) {
        DataInputView view(b.bytes.data(), b.bytes.size());
        while (!view.at_end()) {
          if (in.channel == 0) {
            const int64_t v = TypeSerializer<int64_t>::deserialize(view);
            EXPECT_EQ(owner(v, 3), s);
            left_got.insert(v);
          } else {
            const std::string v = TypeSerializer<std::string>::deserialize(view);
            EXPECT_EQ(owner(std::stoll(v), 3), s);
            right_got.insert(v);
          }
        }
      }
    }
  }
  EXPECT_EQ(left_got.size(), 200u);
  EXPECT_EQ(right_got, std::multiset<std::string>(right_all.begin(), right_all.end()));
}

// Two edges between the same two vertices (a stream connected with itself): each edge's data stays on its input.
TEST(ChannelStateAssignment, TwoEdgesFromTheSameProducerKeepTheirInputs) {
  auto job_at = [](int32_t co) {
    StreamExecutionEnvironment env;
    env.set_parallelism(2);
    auto numbers = env.from_generator(10, [](int64_t i) { return i; }, 0, "numbers").uid("numbers");
    connect_into<int64_t>(numbers, numbers, [](const int64_t& v) { return (v < 0 ? -v : v) % kKeys; }, "self", co);
    return make_job(env);
  };
  const Job old_job = job_at(2);
  ASSERT_EQ(old_job.jg.inputs_of(old_job.vertex.at("self")).size(), 2u);
  // Old gate: channels 0-1 from the first edge, 2-3 from the second. Input 1 gets v >= 0, input 2 gets -v.
  std::map<std::pair<std::string, int32_t>, SubtaskChannelState> states;
  for (int32_t c = 0; c < 2; ++c) {
    for (int32_t ch = 0; ch < 4; ++ch) {
      std::vector<int64_t> r;
      for (int64_t v = 1; v < 200; ++v)
        if (owner(v, 2) == c && v % 2 == ch % 2) r.push_back(ch < 2 ? v : -v);
      states[{old_job.id("self"), c}].inputs.push_back({ch, {buffer_of(r)}});
    }
  }
  const CheckpointMetadata md = checkpoint_of({{old_job.id("numbers"), 2}, {old_job.id("self"), 2}}, states);
  checkpoint::JobManagerCheckpointStorage storage;
  Job job = job_at(3);
  auto a = ChannelStateAssignment::build(md, "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  size_t first = 0, second = 0;
  for (int32_t s = 0; s < 3; ++s) {
    auto st = a->take(job.vertex.at("self"), s);
    ASSERT_TRUE(st.has_value());
    for (int64_t v : records_of(st->inputs, 0, 2)) {
      EXPECT_GT(v, 0) << "first input";
      ++first;
    }
    for (int64_t v : records_of(st->inputs, 2, 4)) {
      EXPECT_LT(v, 0) << "second input";
      ++second;
    }
  }
  EXPECT_EQ(first, 199u);
  EXPECT_EQ(second, 199u);
}

TEST(ChannelStateAssignment, ChannelStateTheTopologyHasNoRoomForIsRefusedNamingTheOperator) {
  const Job job = keyed_job(2, 4);
  checkpoint::JobManagerCheckpointStorage storage;
  SubtaskChannelState in;
  in.inputs.push_back({2, {buffer_of({1})}});  // numbers had 2 subtasks: channels 0 and 1
  auto a = ChannelStateAssignment::build(checkpoint_of({{job.id("numbers"), 2}, {job.id("keyed"), 4}},
                                                       {{{job.id("keyed"), 1}, in}}),
                                         "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("operator 'keyed'"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("input channel 2"), std::string::npos) << a.status().message();

  SubtaskChannelState out;
  out.outputs.push_back({1, 0, {buffer_of({1})}});
  a = ChannelStateAssignment::build(checkpoint_of({{job.id("numbers"), 2}, {job.id("keyed"), 4}},
                                                  {{{job.id("numbers"), 0}, out}}),
                                    "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("output 1"), std::string::npos) << a.status().message();
  out.outputs[0] = {0, 4, {buffer_of({1})}};
  a = ChannelStateAssignment::build(checkpoint_of({{job.id("numbers"), 2}, {job.id("keyed"), 4}},
                                                  {{{job.id("numbers"), 0}, out}}),
                                    "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("output 0 subpartition 4"), std::string::npos) << a.status().message();
}

TEST(ChannelStateAssignment, CorruptOrMissingChannelStateFailsLoudlyNamingTheCheckpointAndOperator) {
  const Job job = keyed_job(2, 4);
  SubtaskChannelState in;
  in.inputs.push_back({0, {buffer_of({1, 2})}});
  CheckpointMetadata md = checkpoint_of({{job.id("numbers"), 2}, {job.id("keyed"), 4}}, {{{job.id("keyed"), 1}, in}});
  // Bytes that are not a channel state (with a matching checksum: the decoder notices).
  md.operators[1].subtasks[0].channel_state = inline_handle({'n', 'o', 'p', 'e'});
  checkpoint::JobManagerCheckpointStorage storage;
  auto a = ChannelStateAssignment::build(md, "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().code(), StatusCode::kCorruption);
  EXPECT_NE(a.status().message().find("checkpoint 7 (jobmanager://x/7)"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("operator 'keyed'"), std::string::npos) << a.status().message();
  // A flipped byte: the checksum.
  md = checkpoint_of({{job.id("numbers"), 2}, {job.id("keyed"), 4}}, {{{job.id("keyed"), 1}, in}});
  md.operators[1].subtasks[0].channel_state->inline_bytes.back() ^= 1;
  a = ChannelStateAssignment::build(md, "jobmanager://x/7", storage, *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("operator 'keyed'"), std::string::npos) << a.status().message();
  // A missing file.
  const std::string dir = (std::filesystem::temp_directory_path() / "sluice_channel_state_missing").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/chk-7");
  checkpoint::FileSystemCheckpointStorage fs_storage(dir, {});
  md = checkpoint_of({{job.id("numbers"), 2}, {job.id("keyed"), 4}}, {{{job.id("keyed"), 1}, in}});
  auto& handle = *md.operators[1].subtasks[0].channel_state;
  handle.relative_path = "chk-7/gone";
  handle.inline_bytes.clear();
  a = ChannelStateAssignment::build(md, dir + "/chk-7", fs_storage, *job.sg, job.jg);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("checkpoint 7"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("operator 'keyed'"), std::string::npos) << a.status().message();
  std::filesystem::remove_all(dir);
}

TEST(ChannelStateAssignment, RefusesChannelStateOfAnOperatorThatIsNoLongerAChainHead) {
  const SubtaskChannelState in{{{0, {buffer_of({1})}}}, {}};
  CheckpointMetadata md = checkpoint_of({{"chained", 1}}, {{{"chained", 0}, in}});
  md.operators[0].operator_name = "keyed sum";
  EXPECT_TRUE(check_channel_state_heads(md, {"src", "chained"}).is_ok());
  Status s = check_channel_state_heads(md, {"src", "head"});
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("operator 'keyed sum' (chained)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not the head of an operator chain"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sluice::cluster
