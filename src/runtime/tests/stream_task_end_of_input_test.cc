// A StreamTask whose input ends must run the mails posted before it read its last end of partition. The cluster
// posts the final checkpoint's notify-complete to every task before it tells the sources to finish, so a sink
// reads its last end of partition with that mail possibly still queued; a task that ended without running it never
// committed the final checkpoint's output (found by the fresh-clone review: `sluice guarantees` lost committed
// results, the job FINISHED).
//
// Deterministic: a sink task with one input channel whose end of partition is queued while the task's input is
// suspended; a mail then resumes the input and posts a second mail, which the mailbox keeps for its next drain.
// The task's very next read is the end of partition.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "graph/job_graph.h"
#include "runtime/stream_task.h"
#include "sluice/api/environment.h"
#include "sluice/metrics/metric_registry.h"
#include "sluice/sink/builtin_sinks.h"

namespace sluice::runtime {
namespace {

class Listener final : public TaskListener {
 public:
  void on_task_end_of_data(int32_t, int32_t) override {}
  void on_task_finished(int32_t, int32_t) override { finished = true; }
  void on_task_failed(int32_t, int32_t, const Status& cause) override { failure = cause.to_string(); }
  void on_task_cancelled(int32_t, int32_t) override {}
  std::atomic<bool> finished{false};
  std::string failure;
};

TEST(StreamTaskEndOfInput, MailsPostedBeforeTheLastEndOfPartitionRun) {
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  env.from_generator(10, [](int64_t i) { return i; }, 0, "numbers").rebalance().sink_to(DiscardingSink<int64_t>());
  auto jg = graph::build_job_graph(env.stream_graph(), graph::JobGraphOptions{"end-of-input", 1, -1});
  ASSERT_TRUE(jg.is_ok()) << jg.status().to_string();
  int32_t sink_vertex = -1;
  for (const auto& v : jg->vertices)
    if (!v.is_source) sink_vertex = v.id;
  ASSERT_GE(sink_vertex, 0);

  NetworkConfig config;
  auto producer = std::make_shared<ResultPartition>(1, config, nullptr);
  SystemClock clock;
  MetricRegistry registry;
  Listener listener;
  TaskDeployment d;
  d.stream_graph = &env.stream_graph();
  d.job_graph = &*jg;
  d.vertex = sink_vertex;
  d.key_group_range = KeyGroupRange(0, jg->max_parallelism - 1);
  d.notifier = std::make_shared<TaskNotifier>();
  d.input_gate = std::make_unique<InputGate>(std::vector<std::shared_ptr<Channel>>{producer->channel(0)}, d.notifier.get());
  d.job_metrics = &registry.add_job_group("end-of-input");
  d.clock = &clock;
  StreamTask task(std::move(d), &listener);

  set_input_suspended_for_testing(sink_vertex);
  producer->finish();  // the only channel's end of partition, queued before the task reads anything
  std::atomic<bool> second_mail_ran{false};
  task.mailbox().put([&] {
    set_input_suspended_for_testing(-1);  // the read right after this drain finds the end of partition
    task.mailbox().put([&] { second_mail_ran = true; });
  });
  std::thread thread([&] { task.run(); });
  thread.join();  // the task ends by itself at the end of its input

  set_input_suspended_for_testing(-1);
  EXPECT_TRUE(listener.failure.empty()) << listener.failure;
  EXPECT_TRUE(listener.finished.load());
  EXPECT_TRUE(second_mail_ran.load()) << "a mail posted before the last end of partition was dropped";
}

}  // namespace
}  // namespace sluice::runtime
