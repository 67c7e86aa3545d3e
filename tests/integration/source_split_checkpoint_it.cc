// A checkpoint triggered while a source task is still opening - its reader asked for its split and the
// enumerator assigned it, but the task has not registered the reader yet - keeps that split: the enumerator's
// snapshot no longer has it, so the reader's must. The registration hands the assignment to the reader before
// the task runs the checkpoint's trigger. When it was mailed instead, it ran after the trigger, the split was in
// neither snapshot, and a job restored from that checkpoint found no split and FINISHED at once, without the
// records the split still had (seen in `sluice guarantees`, whose driver triggers a checkpoint right at start).
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "checkpoint_it_util.h"
#include "sluice/sink/builtin_sinks.h"
#include "sluice/source/generator_source.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kRecords = 2'000;
std::atomic<bool> g_hold_start{false};
std::atomic<bool> g_in_start{false};
std::mutex g_seen_mu;
std::set<int64_t> g_seen;

// The generator source (1000 records per second), whose reader, once it asked for its split in start(), waits
// there while g_hold_start is set: its task is still opening, its reader not registered.
class HeldStartSource final : public Source<int64_t, IndexRangeSplit> {
 public:
  Boundedness boundedness() const override { return Boundedness::kBounded; }
  std::unique_ptr<SplitEnumerator<IndexRangeSplit>> create_enumerator(
      SplitEnumeratorContext<IndexRangeSplit>& ctx) const override {
    return inner_.create_enumerator(ctx);
  }
  std::unique_ptr<SplitEnumerator<IndexRangeSplit>> restore_enumerator(
      SplitEnumeratorContext<IndexRangeSplit>& ctx, const std::vector<uint8_t>& state) const override {
    return inner_.restore_enumerator(ctx, state);
  }
  std::unique_ptr<SourceReader<int64_t, IndexRangeSplit>> create_reader(SourceReaderContext& ctx) const override {
    return std::make_unique<Reader>(inner_.create_reader(ctx));
  }

 private:
  static int64_t identity(int64_t i) { return i; }
  class Reader final : public SourceReader<int64_t, IndexRangeSplit> {
   public:
    explicit Reader(std::unique_ptr<SourceReader<int64_t, IndexRangeSplit>> inner) : inner_(std::move(inner)) {}
    void start() override {
      inner_->start();  // asks for its split
      g_in_start = true;
      for (int i = 0; i < 30'000 && g_hold_start; ++i) std::this_thread::sleep_for(1ms);
    }
    InputStatus poll_next(ReaderOutput<int64_t>& output) override { return inner_->poll_next(output); }
    void add_splits(std::vector<IndexRangeSplit> splits) override { inner_->add_splits(std::move(splits)); }
    void notify_no_more_splits() override { inner_->notify_no_more_splits(); }
    std::vector<IndexRangeSplit> snapshot_state() override { return inner_->snapshot_state(); }
    std::chrono::nanoseconds idle_wait_hint() const override { return inner_->idle_wait_hint(); }

   private:
    std::unique_ptr<SourceReader<int64_t, IndexRangeSplit>> inner_;
  };
  GeneratorSource<int64_t, int64_t (*)(int64_t)> inner_{kRecords, &identity, 1000};
};

TEST(SourceSplitCheckpoint, ACheckpointTriggeredWhileTheSourceOpensKeepsItsAssignedSplit) {
  const std::string dir = it::fresh_dir("split-at-open") + "/ck";
  g_hold_start = true;
  g_in_start = false;
  g_seen.clear();
  auto config = it::manual_checkpoint_config(dir);
  ASSERT_TRUE(config.is_ok()) << config.status().to_string();
  ASSERT_TRUE(config->set_string("restart-strategy.type", "fixed-delay").is_ok());
  ASSERT_TRUE(config->set_string("restart-strategy.fixed-delay.attempts", "3").is_ok());
  ASSERT_TRUE(config->set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  StreamExecutionEnvironment env(*config);
  env.set_parallelism(1);
  env.from_source(HeldStartSource(), "held-start")
      .uid("held-start")
      .map([](const int64_t& v) {
        std::lock_guard lock(g_seen_mu);
        g_seen.insert(v);
        return v;
      })
      .uid("record")
      .sink_to(DiscardingSink<int64_t>());
  auto submitted = env.execute_async("split-at-open");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);

  // The split is assigned and the reader waits in start(): the checkpoint's trigger is queued behind the open.
  ASSERT_TRUE(it::wait_for([&] { return g_in_start.load(); }));
  auto id = it::when_deployed([&] { return cp.trigger_checkpoint(); });
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  g_hold_start = false;
  ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 1; }, 60s));
  cp.fail_task(0, 0, "a failure after checkpoint 1, which the job restores");

  const bool ended = it::wait_for([&] { return is_globally_terminal(client->status()); }, 60s);
  if (!ended) client->cancel();
  const JobExecutionResult r = client->wait();
  EXPECT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
  EXPECT_EQ(cp.restarts(), 1);
  std::lock_guard lock(g_seen_mu);
  EXPECT_EQ(static_cast<int64_t>(g_seen.size()), kRecords) << "records the restored job never read";
}

}  // namespace
}  // namespace sluice
