// Unaligned checkpoints and the alignment timeout in running jobs, judged by the checkpoint statistics (with
// generous margins, never tight wall-clock numbers) and by the records a restore replays:
//  - back-pressure: the sink (behind a hash exchange) runs at half the rate of the fast source; aligned
//    checkpoints spend most of their time aligning, unaligned ones almost none; with a 2 s checkpoint timeout
//    aligned ones time out while unaligned ones complete;
//  - a sink whose input reading is suspended (its mailbox still runs): unaligned checkpoints complete with
//    in-flight data persisted, and a restore replays exactly those records, in order, before new ones;
//  - restoring that channel state at another parallelism splits it by key group; with its file missing the
//    restore is refused loudly.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "checkpoint/channel_state.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/restore_path.h"
#include "checkpoint_it_util.h"
#include "runtime/stream_task.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

struct Rec {
  int64_t seq = 0;
  std::string pad;
  SLUICE_FIELDS(Rec, seq, pad)
};

std::atomic<int64_t> g_sink_sleep_us{0};
std::mutex g_seen_mu;
std::vector<int64_t> g_seen;  // fast-source records the sink received, in order

struct SlowPassThrough : KeyedProcessFunction<int64_t, Rec, Rec> {
  void process_element(const Rec& r, KeyedProcessContext<int64_t>&, Collector<Rec>& out) override {
    const int64_t us = g_sink_sleep_us.load(std::memory_order_relaxed);
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    out.collect(r);
  }
};

class RecordingSink final : public Sink<Rec> {
 public:
  std::unique_ptr<SinkWriter<Rec>> create_writer(SinkInitContext&) const override { return std::make_unique<Writer>(); }

 private:
  struct Writer final : SinkWriter<Rec> {
    void write(Rec&& r) override {
      if (r.seq < 0) return;  // the tiny source's records
      std::lock_guard lock(g_seen_mu);
      g_seen.push_back(r.seq);
    }
    void flush(bool) override {}
  };
};

void reset_seen() {
  std::lock_guard lock(g_seen_mu);
  g_seen.clear();
}
std::vector<int64_t> seen() {
  std::lock_guard lock(g_seen_mu);
  return g_seen;
}

cluster::MiniClusterConfig base_config(const std::string& dir, bool unaligned) {
  return it::unaligned_test_config(dir, 300ms, unaligned);
}

// A fast source (about twice what the sink takes) and a tiny one that ends at once (its task stays, taking
// checkpoint triggers), unioned and keyed into the throttled sink: the sink has two input channels, the fast one
// full (back-pressure), the other empty - so an aligned checkpoint's barrier arrives at once on the empty channel
// and waits there for the fast channel's queue (alignment), while an unaligned one overtakes that queue.
void build_backpressured_job(StreamExecutionEnvironment& env) {
  env.set_parallelism(1);
  auto fast = env.from_generator(int64_t{1} << 40, [](int64_t i) { return Rec{i, std::string(100, 'f')}; }, 1000,
                                 "fast");
  auto tiny = env.from_generator(16, [](int64_t i) { return Rec{-1 - i, std::string(100, 't')}; }, 0, "tiny");
  fast.union_(tiny)
      .key_by([](const Rec& r) { return r.seq % 64; })
      .process(SlowPassThrough{})
      .name("throttled")
      .uid("throttled")
      .sink_to(RecordingSink{});
}

struct SinkFigures {
  std::vector<int64_t> alignment_ms;
  std::vector<double> alignment_share;  // alignment / end-to-end duration
  int64_t persisted_bytes = 0;
  int completed = 0;
  int unaligned = 0;
};

// The sink subtask (the one with an alignment) of each completed checkpoint in the history.
// The first checkpoint is left out: it comes while the queues fill.
SinkFigures sink_figures(const coordinator::CheckpointStatsSnapshot& s) {
  SinkFigures f;
  for (const auto& e : s.history) {
    if (e.status != coordinator::CheckpointStatus::kCompleted || e.id.value() == 1) continue;
    ++f.completed;
    f.persisted_bytes += static_cast<int64_t>(e.persisted_data_bytes);
    if (e.unaligned) ++f.unaligned;
    int64_t alignment = 0;
    for (const auto& st : e.subtasks) alignment = std::max(alignment, st.stats.alignment_duration_ms);
    f.alignment_ms.push_back(alignment);
    f.alignment_share.push_back(static_cast<double>(alignment) /
                                static_cast<double>(std::max<int64_t>(1, e.end_to_end_duration_ms)));
  }
  return f;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs the back-pressured job until `done` holds for its statistics (or two minutes pass), then cancels it.
coordinator::CheckpointStatsSnapshot run_backpressured(const std::string& name, cluster::MiniClusterConfig mc,
                                                       const std::function<bool(const coordinator::CheckpointStatsSnapshot&)>& done) {
  reset_seen();
  // The sink nearly stops at first, so the fast channel's queue (8 KiB buffers, 2 credits + 30 sender buffers:
  // about 2300 records) fills within a second or two; then it takes 2 ms a record, half the fast source's rate.
  mc.network.buffer_size_bytes = 8192;
  mc.network.max_buffers_per_channel = 30;
  g_sink_sleep_us = 20'000;
  StreamExecutionEnvironment env;
  build_backpressured_job(env);
  auto client = it::submit(env, mc, name);
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  if (!client.is_ok()) return {};
  auto& cp = it::checkpointing(**client);
  std::this_thread::sleep_for(1500ms);
  g_sink_sleep_us = 2000;
  EXPECT_TRUE(it::wait_for([&] { return done(cp.checkpoint_stats()); }, 180s)) << name;
  auto stats = cp.checkpoint_stats();
  for (const auto& e : stats.history) {
    std::printf("  %s checkpoint %lld: status %d, %lld ms, %llu bytes persisted:", name.c_str(),
                static_cast<long long>(e.id.value()), static_cast<int>(e.status),
                static_cast<long long>(e.end_to_end_duration_ms), static_cast<unsigned long long>(e.persisted_data_bytes));
    for (const auto& st : e.subtasks) {
      std::printf(" [v%d delay %lld align %lld]", st.vertex, static_cast<long long>(st.stats.start_delay_ms),
                  static_cast<long long>(st.stats.alignment_duration_ms));
    }
    std::printf("\n");
  }
  std::printf("  the sink saw %zu records\n", seen().size());
  g_sink_sleep_us = 0;
  (*client)->cancel();
  EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  return stats;
}

TEST(UnalignedCheckpoints, UnderBackPressureAlignedOnesMostlyAlignUnalignedOnesHardlyAtAll) {
  auto aligned = run_backpressured("aligned", base_config(it::fresh_dir("bp-aligned"), false),
                                   [](const auto& s) { return s.num_completed >= 3; });
  auto unaligned = run_backpressured("unaligned", base_config(it::fresh_dir("bp-unaligned"), true),
                                     [](const auto& s) { return s.num_completed >= 4; });
  SinkFigures a = sink_figures(aligned);
  SinkFigures u = sink_figures(unaligned);
  ASSERT_GE(a.completed, 2);
  ASSERT_GE(u.completed, 3);
  std::printf("aligned: median alignment share %.2f; unaligned: %.2f, %lld bytes persisted over %d checkpoints\n",
              median(a.alignment_share), median(u.alignment_share), static_cast<long long>(u.persisted_bytes),
              u.completed);
  // Aligned: the barrier waits behind the fast channel's full queue for most of the checkpoint.
  EXPECT_EQ(a.unaligned, 0);
  EXPECT_EQ(a.persisted_bytes, 0);
  EXPECT_GT(median(a.alignment_share), 0.5);
  // Unaligned: the sink snapshots on the first barrier; the overtaken data is persisted instead.
  EXPECT_EQ(u.unaligned, u.completed);
  EXPECT_GT(u.persisted_bytes, 0);
  EXPECT_LT(median(u.alignment_share), 0.1);
  std::vector<int64_t> ua = u.alignment_ms, aa = a.alignment_ms;
  std::sort(ua.begin(), ua.end());
  std::sort(aa.begin(), aa.end());
  EXPECT_LT(ua[ua.size() / 2] * 4, aa[aa.size() / 2]) << "unaligned alignment p50 vs aligned";
  // Nothing lost or duplicated in the part the sink saw (no failure: a plain prefix of the sequence).
  const auto s = seen();
  for (size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s[i], static_cast<int64_t>(i));
}

TEST(UnalignedCheckpoints, WithATwoSecondTimeoutAlignedOnesTimeOutUnalignedOnesComplete) {
  auto with_timeout = [](cluster::MiniClusterConfig mc) {
    mc.checkpoint_config.timeout = 2s;
    return mc;
  };
  // Aligned: once the fast channel's queue has filled (the first checkpoints, taken while it fills, may still
  // make it), every checkpoint times out. Unaligned: all complete.
  auto aligned = run_backpressured("aligned-2s", with_timeout(base_config(it::fresh_dir("to-aligned"), false)),
                                   [](const auto& s) { return s.num_failed >= 3; });
  auto unaligned = run_backpressured("unaligned-2s", with_timeout(base_config(it::fresh_dir("to-unaligned"), true)),
                                     [](const auto& s) { return s.num_completed >= 5; });
  EXPECT_GE(aligned.num_failed, 3);
  int64_t first_timeout_trigger_ms = INT64_MAX;
  int timed_out = 0;
  for (const auto& e : aligned.history) {
    if (e.status != coordinator::CheckpointStatus::kFailed) continue;
    if (e.failure_reason == coordinator::CheckpointFailureReason::kTimeout) {
      ++timed_out;
      first_timeout_trigger_ms = std::min(first_timeout_trigger_ms, e.trigger_timestamp_ms);
    }
  }
  EXPECT_GE(timed_out, 2);
  for (const auto& e : aligned.history) {
    if (e.status == coordinator::CheckpointStatus::kCompleted) {
      EXPECT_LT(e.trigger_timestamp_ms, first_timeout_trigger_ms)
          << "aligned checkpoint " << e.id.value() << " completed after one had timed out";
    }
  }
  EXPECT_GE(unaligned.num_completed, 5);
  EXPECT_EQ(unaligned.num_failed, 0);
  EXPECT_EQ(sink_figures(unaligned).unaligned, sink_figures(unaligned).completed);
}

// Alignment timeout 1.5 s: each checkpoint starts aligned - the sink blocks the tiny source's channel and waits
// for the fast one's barrier, queued in order behind its data - and switches once 1.5 s passed since the trigger:
// the sink snapshots (its alignment is about the timeout, not the queue's 4 s) and promotes the queued barrier,
// persisting the data it overtook as its input channel state, while the fast source, whose barrier went out in
// order, persisted nothing.
TEST(UnalignedCheckpoints, AlignmentTimeoutSwitchesAligningTasksAndPromotesQueuedBarriers) {
  cluster::MiniClusterConfig mc = base_config(it::fresh_dir("alignment-timeout"), true);
  mc.unaligned.aligned_checkpoint_timeout = 1500ms;
  auto stats = run_backpressured("timeout-1.5s", mc, [](const auto& s) { return s.num_completed >= 4; });
  int switched = 0, promoted = 0;
  for (const auto& e : stats.history) {
    if (e.status != coordinator::CheckpointStatus::kCompleted || e.id.value() == 1) continue;
    int64_t sink_alignment = 0, sink_bytes = 0, fast_bytes = 0;
    for (const auto& st : e.subtasks) {
      if (st.vertex == 2) {
        sink_alignment = st.stats.alignment_duration_ms;
        sink_bytes = static_cast<int64_t>(st.stats.persisted_data_bytes);
      }
      if (st.vertex == 0) fast_bytes = static_cast<int64_t>(st.stats.persisted_data_bytes);
    }
    if (e.unaligned && sink_bytes > 0 && sink_alignment >= 500) ++switched;
    if (sink_bytes > 0 && fast_bytes == 0) ++promoted;
  }
  EXPECT_GE(switched, 2) << "checkpoints that aligned first, then went unaligned with in-flight data";
  EXPECT_GE(promoted, 1) << "checkpoints whose queued barrier the sink promoted";
}

// One source into the keyed sink, whose input reading is suspended: every record the source emitted is in
// flight - queued at the sink's input (its input channel state) or behind the barrier in the source's output
// (the source's output channel state).
void build_suspended_job(StreamExecutionEnvironment& env, int32_t sink_parallelism) {
  env.set_parallelism(1);
  env.from_generator(int64_t{1} << 40, [](int64_t i) { return Rec{i, std::string(40, 'x')}; }, 0, "numbers")
      .uid("numbers")
      .key_by([](const Rec& r) { return r.seq % 16; })
      .process(SlowPassThrough{})
      .name("suspended")
      .uid("suspended")
      .set_parallelism(sink_parallelism)
      .sink_to(RecordingSink{})
      .set_parallelism(sink_parallelism);
}

// Records in the channel state of every subtask of the checkpoint at `rp`.
int64_t channel_state_records(const checkpoint::RestorePoint& rp, checkpoint::CheckpointStorage& storage,
                              int64_t* bytes) {
  int64_t records = 0;
  *bytes = 0;
  for (const auto& [op, state] : it::channel_states(rp, storage)) {
    records += static_cast<int64_t>(state.num_records());
    *bytes += static_cast<int64_t>(state.data_bytes());
  }
  return records;
}

TEST(UnalignedCheckpoints, SuspendedSinkCheckpointsInFlightDataAndARestoreReplaysExactlyIt) {
  const std::string dir = it::fresh_dir("suspended");
  g_sink_sleep_us = 0;
  reset_seen();
  // Vertex 1 is the keyed chain (the source is vertex 0, the job graph being in topological order).
  runtime::set_input_suspended_for_testing(1);
  {
    StreamExecutionEnvironment env;
    build_suspended_job(env, 1);
    auto client = it::submit(env, base_config(dir, true), "suspended");
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    auto& cp = it::checkpointing(**client);
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 2; }, 120s));
    const auto stats = cp.checkpoint_stats();
    ASSERT_TRUE(stats.latest_completed.has_value());
    EXPECT_TRUE(stats.latest_completed->unaligned);
    EXPECT_GT(stats.latest_completed->persisted_data_bytes, 0u);
    (*client)->cancel();
    EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  }
  runtime::set_input_suspended_for_testing(-1);
  EXPECT_TRUE(seen().empty()) << "the suspended sink read records";

  auto rp = checkpoint::resolve_restore_path("latest", dir);
  ASSERT_TRUE(rp.is_ok()) << rp.status().to_string();
  EXPECT_TRUE(rp->metadata.has_channel_state());
  checkpoint::FileSystemCheckpointStorage reader(dir, {});
  int64_t persisted_bytes = 0;
  const int64_t in_flight = channel_state_records(*rp, reader, &persisted_bytes);
  ASSERT_GT(in_flight, 0);
  EXPECT_GT(persisted_bytes, 0);

  // Restore: the sink first receives exactly the persisted records, 0 .. in_flight-1 (its own input channel
  // state, then the source's output channel state), then the source continues from where it was.
  {
    StreamExecutionEnvironment env;
    build_suspended_job(env, 1);
    cluster::MiniClusterConfig mc = base_config(it::fresh_dir("suspended-restored"), true);
    mc.restore = cluster::RestoreFrom{rp->metadata, rp->location, false};
    auto client = it::submit(env, mc, "restored");
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    ASSERT_TRUE(it::wait_for([&] { return static_cast<int64_t>(seen().size()) >= in_flight + 1000; }, 120s));
    (*client)->cancel();
    EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  }
  const auto s = seen();
  ASSERT_GE(static_cast<int64_t>(s.size()), in_flight + 1000);
  for (size_t i = 0; i < s.size(); ++i) {
    ASSERT_EQ(s[i], static_cast<int64_t>(i)) << "record " << i << " after the restore (" << in_flight
                                             << " were in flight in the checkpoint)";
  }
  std::printf("%lld records (%lld bytes) were in flight in checkpoint %lld and replayed first\n",
              static_cast<long long>(in_flight), static_cast<long long>(persisted_bytes),
              static_cast<long long>(rp->metadata.checkpoint_id.value()));

  // At parallelism 2 the in-flight data is split by key group (cluster/channel_state_assignment.h): every
  // persisted record comes back once, and each key's records in order - the persisted ones before new ones.
  reset_seen();
  auto persisted_seen = [&] {
    int64_t n = 0;
    for (int64_t seq : seen()) n += seq < in_flight ? 1 : 0;
    return n;
  };
  {
    StreamExecutionEnvironment env;
    build_suspended_job(env, 2);
    cluster::MiniClusterConfig mc = base_config(it::fresh_dir("suspended-rescaled"), true);
    mc.restore = cluster::RestoreFrom{rp->metadata, rp->location, false};
    auto client = it::submit(env, mc, "rescaled");
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    // Each subtask goes at its own pace: wait until both have replayed all of theirs and moved on.
    ASSERT_TRUE(it::wait_for([&] { return persisted_seen() >= in_flight && static_cast<int64_t>(seen().size()) >=
                                                                              in_flight + 1000; },
                             120s));
    (*client)->cancel();
    EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  }
  EXPECT_EQ(persisted_seen(), in_flight) << "each persisted record exactly once";
  {
    std::map<int64_t, int64_t> next_of_key;  // key -> the sequence number its next record must have
    for (int64_t k = 0; k < 16; ++k) next_of_key[k] = k;
    for (int64_t seq : seen()) {
      ASSERT_EQ(seq, next_of_key[seq % 16]) << "key " << seq % 16 << " after the restore at parallelism 2";
      next_of_key[seq % 16] += 16;
    }
  }

  // A missing channel-state file fails the restore, naming the operator (never a silent restore without it).
  std::string removed;
  for (const auto& op : rp->metadata.operators) {
    for (const auto& st : op.subtasks) {
      if (st.channel_state && !st.channel_state->is_inline() && removed.empty()) {
        removed = op.operator_name;
        std::filesystem::remove(std::filesystem::path(rp->location).parent_path() / st.channel_state->relative_path);
      }
    }
  }
  ASSERT_FALSE(removed.empty()) << "no channel state in a file";
  {
    StreamExecutionEnvironment env;
    build_suspended_job(env, 1);
    cluster::MiniClusterConfig mc = base_config(it::fresh_dir("suspended-missing"), true);
    mc.restore = cluster::RestoreFrom{rp->metadata, rp->location, false};
    auto client = it::submit(env, mc, "missing");
    ASSERT_FALSE(client.is_ok());
    const std::string error = client.status().to_string();
    EXPECT_NE(error.find("channel state"), std::string::npos) << error;
    EXPECT_NE(error.find("operator '" + removed + "'"), std::string::npos) << error;
  }
}

TEST(UnalignedCheckpoints, NeedOneCheckpointAtATimeOrTheJobIsRefused) {
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "100ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.unaligned", "true").is_ok());  // Flink's older key
  ASSERT_TRUE(config.set_string("execution.checkpointing.max-concurrent-checkpoints", "2").is_ok());
  StreamExecutionEnvironment env(config);
  env.from_generator(10, [](int64_t i) { return i; }).rebalance().sink_to(DiscardingSink<int64_t>());
  auto client = env.execute_async("refused");
  ASSERT_FALSE(client.is_ok());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find("max-concurrent-checkpoints = 1, got 2"), std::string::npos)
      << client.status().to_string();
}

}  // namespace
}  // namespace sluice
