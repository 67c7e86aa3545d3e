// A source whose poll_next is slow (30 ms per record, as a reader blocking on a remote system would be) delays a
// checkpoint by at most the poll in progress: the source task serves a trigger between two poll_next calls, never
// after a batch of them. Measured in records, not time: the position the checkpoint stored is read back by a
// restore, and compared with what the source had emitted when the checkpoint was triggered.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "checkpoint_it_util.h"
#include "sluice/sink/builtin_sinks.h"
#include "sluice/source/generator_source.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kRecords = 100'000;  // far more than a run emits at 30 ms each: the job never ends by itself
std::atomic<int64_t> g_emitted{0};
std::atomic<int64_t> g_first_index{-1};  // the first index the current run generated

Result<std::unique_ptr<JobClient>> start(const std::string& dir, const std::string& restore) {
  g_emitted = 0;
  g_first_index = -1;
  SLUICE_ASSIGN_OR_RETURN(Configuration config, it::manual_checkpoint_config(dir, restore));
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  env.from_source(make_generator_source(kRecords,
                                        [](int64_t i) {
                                          std::this_thread::sleep_for(30ms);
                                          int64_t none = -1;
                                          g_first_index.compare_exchange_strong(none, i);
                                          g_emitted.fetch_add(1);
                                          return i;
                                        }),
                  "slow-source")
      .uid("slow-source")
      .sink_to(DiscardingSink<int64_t>());
  return env.execute_async("slow-source");
}

TEST(SlowSourceCheckpoint, ATriggerIsServedWithinOnePollOfASlowSource) {
  const std::string dir = it::fresh_dir("slow-source") + "/ck";
  auto first = start(dir, "");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto& cp = it::checkpointing(**first);
  ASSERT_TRUE(it::wait_for([&] { return (*first)->status() == JobStatus::kRunning && g_emitted >= 5; }));
  const int64_t emitted_at_trigger = g_emitted.load();
  auto id = it::when_deployed([&] { return cp.trigger_checkpoint(); });
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 1; }, 60s));
  const auto stats = cp.checkpoint_stats();
  ASSERT_TRUE(stats.latest_completed.has_value());
  const std::string location = stats.latest_completed->location;
  (*first)->cancel();
  EXPECT_EQ((*first)->wait().status, JobStatus::kCanceled);

  auto second = start(dir, location);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  ASSERT_TRUE(it::wait_for([&] { return g_first_index >= 0; }));
  const int64_t position = g_first_index.load();  // the next index the checkpoint stored
  (*second)->cancel();
  EXPECT_EQ((*second)->wait().status, JobStatus::kCanceled);
  // At the trigger one poll may be in progress (its record counted after it returns); the next poll must not start.
  EXPECT_GE(position, emitted_at_trigger);
  EXPECT_LE(position, emitted_at_trigger + 1)
      << "the source polled " << position - emitted_at_trigger << " records between the trigger and its snapshot";
}

}  // namespace
}  // namespace sluice
