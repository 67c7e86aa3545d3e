// Unaligned checkpoints of a two-input task: its input reading suspended (the test hook), every record both
// sources emit is in flight, so each checkpoint persists input channel state on both of its inputs (hash edges);
// a restore replays each input's persisted buffers through that input's deserializer. The inputs have different
// record types (a mix-up fails to decode, or shows up as a record of the wrong shape), and each input's sequence
// numbers must come back complete and in order from 0.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/channel_state.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/restore_path.h"
#include "checkpoint_it_util.h"
#include "runtime/stream_task.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

struct Left {
  int64_t seq = 0;
  std::string pad;
  SLUICE_FIELDS(Left, seq, pad)
};
struct Right {
  std::string label;
  int64_t seq = 0;
  double weight = 0;
  SLUICE_FIELDS(Right, label, seq, weight)
};
Left left_of(int64_t i) { return Left{i, std::string(40, 'l')}; }
Right right_of(int64_t i) { return Right{"r" + std::to_string(i), i, static_cast<double>(i) * 0.5}; }

std::mutex g_mu;
std::vector<int64_t> g_left, g_right;  // sequence numbers each input delivered, in order
std::atomic<int64_t> g_malformed{0};

struct Record final : KeyedCoProcessFunction<int64_t, Left, Right, int64_t> {
  void process_element1(const Left& l, KeyedProcessContext<int64_t>&, Collector<int64_t>&) override {
    if (l.pad != left_of(l.seq).pad) g_malformed.fetch_add(1);
    std::lock_guard lock(g_mu);
    g_left.push_back(l.seq);
  }
  void process_element2(const Right& r, KeyedProcessContext<int64_t>&, Collector<int64_t>&) override {
    const Right want = right_of(r.seq);
    if (r.label != want.label || r.weight != want.weight) g_malformed.fetch_add(1);
    std::lock_guard lock(g_mu);
    g_right.push_back(r.seq);
  }
};

void build(StreamExecutionEnvironment& env) {
  env.set_parallelism(1);
  auto left = env.from_generator(int64_t{1} << 40, [](int64_t i) { return left_of(i); }, 0, "left").uid("left");
  auto right = env.from_generator(int64_t{1} << 40, [](int64_t i) { return right_of(i); }, 0, "right").uid("right");
  left.connect(right)
      .key_by([](const Left& l) { return l.seq % 16; }, [](const Right& r) { return r.seq % 16; })
      .process(Record{})
      .name("co")
      .uid("co")
      .sink_to(DiscardingSink<int64_t>())
      .uid("sink");
}

int32_t two_input_vertex(const StreamExecutionEnvironment& env) {
  auto jg = graph::build_job_graph(env.stream_graph(), graph::JobGraphOptions{"t", 1, -1});
  if (!jg.is_ok()) return -1;
  for (const auto& v : jg->vertices) {
    if (env.stream_graph().node(v.head_node).name == "co") return v.id;
  }
  return -1;
}

cluster::MiniClusterConfig config(const std::string& dir) { return it::unaligned_test_config(dir, 200ms); }

std::pair<std::vector<int64_t>, std::vector<int64_t>> seen() {
  std::lock_guard lock(g_mu);
  return {g_left, g_right};
}

TEST(TwoInputChannelState, BothInputsInFlightDataIsCheckpointedAndRestoredToItsInput) {
  const std::string dir = it::fresh_dir("two-input-channel-state");
  g_left.clear();
  g_right.clear();
  int32_t vertex = -1;
  {
    StreamExecutionEnvironment env;
    build(env);
    vertex = two_input_vertex(env);
    ASSERT_GE(vertex, 0);
    runtime::set_input_suspended_for_testing(vertex);
    auto client = it::submit(env, config(dir), "suspended");
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    auto& cp = it::checkpointing(**client);
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 2; }, 120s));
    (*client)->cancel();
    EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  }
  runtime::set_input_suspended_for_testing(-1);
  ASSERT_TRUE(seen().first.empty() && seen().second.empty()) << "the suspended task read records";

  // The two-input task's channel state holds buffers of both its input channels (0: left, 1: right).
  auto rp = checkpoint::resolve_restore_path("latest", dir);
  ASSERT_TRUE(rp.is_ok()) << rp.status().to_string();
  checkpoint::FileSystemCheckpointStorage reader(dir, {});
  std::set<int32_t> channels;
  int64_t records = 0;
  for (const auto& [op, state] : it::channel_states(*rp, reader)) {
    if (op != "co") continue;
    for (const auto& in : state.inputs) channels.insert(in.channel);
    records += static_cast<int64_t>(state.num_records());
  }
  EXPECT_EQ(channels, (std::set<int32_t>{0, 1})) << "in-flight data of both inputs";
  ASSERT_GT(records, 0);

  // Restore: each input sees its sequence from 0, complete and in order (its channel state, then the sources'
  // output channel state, then new records), decoded as its own type.
  {
    StreamExecutionEnvironment env;
    build(env);
    cluster::MiniClusterConfig mc = config(it::fresh_dir("two-input-channel-state-restored"));
    mc.restore = cluster::RestoreFrom{rp->metadata, rp->location, false};
    auto client = it::submit(env, mc, "restored");
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    const bool enough = it::wait_for(
        [&] {
          auto [l, r] = seen();
          return static_cast<int64_t>(l.size() + r.size()) >= records + 2000 && l.size() > 1000 && r.size() > 1000;
        },
        120s);
    (*client)->cancel();
    EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
    ASSERT_TRUE(enough);
  }
  EXPECT_EQ(g_malformed.load(), 0) << "a record decoded as the other input's type";
  auto [l, r] = seen();
  // Keyed by seq % 16 over one subtask: each input's records keep their order.
  for (size_t i = 0; i < l.size(); ++i) ASSERT_EQ(l[i], static_cast<int64_t>(i)) << "left record " << i;
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(r[i], static_cast<int64_t>(i)) << "right record " << i;
}

}  // namespace
}  // namespace sluice
