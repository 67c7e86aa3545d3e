// Exactly-once barrier alignment in a running job: a task with two input channels, A (a fast source) and B (a
// slow one whose barriers come late). Each upstream tags its records with the last checkpoint it snapshotted
// (its "epoch"); the two-input task records what it processes and when it snapshots. Alignment means: no
// record emitted after barrier n (epoch >= n) is processed before the task's snapshot n, while records that B
// sent before its barrier n keep being processed after A's barrier n arrived (A waits, B flows); after the
// snapshot A's queued records follow.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "checkpoint_it_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

constexpr int32_t kA = 0;
constexpr int32_t kB = 1;

struct Tagged {
  int32_t channel = 0;  // which upstream (= input channel of the two-input task)
  int64_t seq = 0;
  int64_t epoch = 0;    // the last checkpoint the upstream snapshotted before emitting this record
  SLUICE_FIELDS(Tagged, channel, seq, epoch)
};

// Set by A when it emits its first record of a new epoch: barrier `epoch` is then already in A's channel.
std::atomic<int64_t> g_a_emitted_epoch{0};

// Tags records with the upstream's epoch; B's also sleeps 1 ms per record, so its source task polls its mailbox
// (where checkpoint triggers arrive) only every batch of records: its barriers come late, after a stream of
// records sent before them.
struct TagEpoch : RichFunction, CheckpointedFunction {
  explicit TagEpoch(int32_t c) : channel(c) {}
  int32_t channel = kA;
  int64_t epoch = 0;
  Tagged operator()(Tagged&& t) {
    if (channel == kB) std::this_thread::sleep_for(1ms);
    t.channel = channel;
    t.epoch = epoch;
    if (channel == kA && g_a_emitted_epoch.load() < epoch) g_a_emitted_epoch.store(epoch);
    return std::move(t);
  }
  void initialize_state(FunctionInitializationContext&) override {}
  void snapshot_state(const FunctionSnapshotContext& ctx) override { epoch = ctx.checkpoint_id.value(); }
};

struct Seen {
  bool snapshot = false;
  int64_t checkpoint = 0;  // snapshot: its id
  int32_t channel = 0;     // record
  int64_t epoch = 0;       // record
  int64_t a_emitted = 0;   // record: g_a_emitted_epoch when it was processed
};

std::mutex g_seen_mu;
std::vector<Seen> g_seen;

struct RecordArrivals : ProcessFunction<Tagged, Tagged>, CheckpointedFunction {
  void process_element(const Tagged& t, ProcessContext&, Collector<Tagged>&) override {
    std::lock_guard lock(g_seen_mu);
    g_seen.push_back(Seen{false, 0, t.channel, t.epoch, g_a_emitted_epoch.load()});
  }
  void initialize_state(FunctionInitializationContext&) override {}
  void snapshot_state(const FunctionSnapshotContext& ctx) override {
    std::lock_guard lock(g_seen_mu);
    g_seen.push_back(Seen{true, ctx.checkpoint_id.value(), 0, 0, 0});
  }
};

TEST(AlignmentInARunningJob, FastChannelWaitsBehindItsBarrierWhileTheOtherFlowsUntilItsBarrier) {
  g_a_emitted_epoch = 0;
  {
    std::lock_guard lock(g_seen_mu);
    g_seen.clear();
  }
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "40ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.buffer-timeout.interval", "1ms").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.type", "none").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  auto a = env.from_generator(45'000, [](int64_t i) { return Tagged{kA, i, 0}; }, 30'000, "fast A")
               .map(TagEpoch(kA))
               .name("tag A");
  auto b = env.from_generator(1'500, [](int64_t i) { return Tagged{kB, i, 0}; }, 0, "slow B")
               .map(TagEpoch(kB))
               .name("tag B");
  a.union_(b).rebalance().process(RecordArrivals{}).name("two inputs").sink_to(DiscardingSink<Tagged>());
  auto result = env.execute("alignment");
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();

  std::vector<Seen> seen;
  {
    std::lock_guard lock(g_seen_mu);
    seen = g_seen;
  }
  int64_t records = 0, snapshots = 0, last_snapshot = 0, violations = 0;
  std::string first_violation;
  for (const Seen& s : seen) {
    if (s.snapshot) {
      EXPECT_GT(s.checkpoint, last_snapshot);
      last_snapshot = s.checkpoint;
      ++snapshots;
      continue;
    }
    ++records;
    // A record sent after barrier n is processed only after this task's snapshot n.
    if (s.epoch > last_snapshot) {
      if (violations++ == 0) {
        first_violation = "record of channel " + std::to_string(s.channel) + " from epoch " + std::to_string(s.epoch) +
                          " processed before snapshot " + std::to_string(s.epoch);
      }
    }
  }
  EXPECT_EQ(records, 46'500);
  EXPECT_EQ(violations, 0) << first_violation;
  ASSERT_GE(snapshots, 3);

  // For each snapshot n: after A's last record from before barrier n, and once barrier n was in A's channel
  // (A had emitted a record after it), how many of B's records from before barrier n were still processed -
  // A being blocked, with data queued behind its barrier, while B flows. The gate polls channels round-robin,
  // so without blocking A's queued records would be interleaved with B's.
  int64_t best_window = 0;
  int64_t best_checkpoint = 0;
  size_t epoch_start = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i].snapshot) continue;
    const int64_t n = seen[i].checkpoint;
    size_t last_a = epoch_start;
    bool any_a = false;
    for (size_t j = epoch_start; j < i; ++j) {
      if (!seen[j].snapshot && seen[j].channel == kA) {
        last_a = j;
        any_a = true;
      }
    }
    int64_t window = 0;
    for (size_t j = any_a ? last_a + 1 : epoch_start; j < i; ++j) {
      const Seen& r = seen[j];
      if (!r.snapshot && r.channel == kB && r.epoch == n - 1 && r.a_emitted >= n) ++window;
    }
    if (window > best_window) {
      best_window = window;
      best_checkpoint = n;
    }
    // After the snapshot, A's queued records (sent after barrier n) come next from A.
    for (size_t j = i + 1; j < seen.size(); ++j) {
      if (seen[j].snapshot) break;
      if (seen[j].channel == kA) {
        EXPECT_GE(seen[j].epoch, n) << "the first record of A after snapshot " << n;
        break;
      }
    }
    epoch_start = i + 1;
  }
  // B's source polls its mailbox every 256 records of 1 ms each: its barrier comes on average more than a
  // hundred records after the trigger, A's at once.
  EXPECT_GE(best_window, 10) << "B's records processed while A waited behind its barrier, best at checkpoint "
                             << best_checkpoint;
  std::printf("%lld snapshots; at checkpoint %lld, %lld records of B were processed while A waited\n",
              static_cast<long long>(snapshots), static_cast<long long>(best_checkpoint),
              static_cast<long long>(best_window));
}

}  // namespace
}  // namespace sluice
