// A StreamTask with unaligned checkpoints, driven channel by channel: the task under test is a sink with a
// rebalance input from two producer subtasks (all-to-all: its barriers may overtake data) and a forward input
// (always aligned), fed through ResultPartitions the test writes to. Its input is suspended (set_input_suspended_for_testing) while the test
// queues data and barriers, so the task takes only priority barriers until the test lets it read.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/jobmanager_checkpoint_storage.h"
#include "graph/job_graph.h"
#include "runtime/stream_task.h"
#include "sluice/api/environment.h"
#include "sluice/metrics/metric_registry.h"
#include "sluice/sink/builtin_sinks.h"

namespace sluice::runtime {
namespace {

using namespace std::chrono_literals;

// Records what the task reports to the coordinator and to the cluster.
class Recorder final : public CheckpointResponder, public TaskListener {
 public:
  void acknowledge(CheckpointId id, JobVertexId, SubtaskIndex, std::map<std::string, checkpoint::OperatorSubtaskState> state,
                   SubtaskSnapshotStats) override {
    std::lock_guard lock(mu_);
    acks_[id.value()] = std::move(state);
    cv_.notify_all();
  }
  void decline(CheckpointId id, JobVertexId, SubtaskIndex, const Status&) override {
    std::lock_guard lock(mu_);
    declines_.push_back(id.value());
    cv_.notify_all();
  }
  void on_task_end_of_data(int32_t, int32_t) override {}
  void on_task_finished(int32_t, int32_t) override {}
  void on_task_failed(int32_t, int32_t, const Status& cause) override {
    std::lock_guard lock(mu_);
    failure_ = cause.to_string();
    cv_.notify_all();
  }
  void on_task_cancelled(int32_t, int32_t) override {}

  // The acknowledged state of checkpoint `id` (waits up to a minute; a failure of the task ends the wait).
  std::optional<std::map<std::string, checkpoint::OperatorSubtaskState>> wait_ack(int64_t id) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 60s, [&] { return acks_.count(id) > 0 || !failure_.empty(); });
    EXPECT_TRUE(failure_.empty()) << failure_;
    if (!acks_.count(id)) return std::nullopt;
    return acks_[id];
  }
  std::vector<int64_t> wait_declines(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 60s, [&] { return declines_.size() >= n || !failure_.empty(); });
    return declines_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, std::map<std::string, checkpoint::OperatorSubtaskState>> acks_;
  std::vector<int64_t> declines_;
  std::string failure_;
};

class UnalignedTaskHarness {
 public:
  UnalignedTaskHarness() {
    env_.set_parallelism(1);
    auto rebalanced = env_.from_generator(10, [](int64_t i) { return i; }, 0, "a").set_parallelism(2).rebalance();
    auto forward = env_.from_generator(10, [](int64_t i) { return i; }, 0, "b");
    rebalanced.union_(forward).sink_to(DiscardingSink<int64_t>());
    auto jg = graph::build_job_graph(env_.stream_graph(), graph::JobGraphOptions{"harness", 1, -1});
    EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
    jg_ = std::move(jg).value();
    for (const auto& v : jg_.vertices)
      if (!v.is_source) vertex_ = v.id;
    NetworkConfig config;
    config.buffer_size_bytes = 64;  // a few records per buffer
    config.credits_per_channel = 100;
    config.max_buffers_per_channel = 100;
    // Input channels in the order the cluster wires them: incoming edges in job-graph order, then producer
    // subtasks; one single-subpartition ResultPartition per producer subtask.
    std::vector<std::shared_ptr<Channel>> channels;
    for (const auto& e : jg_.edges) {
      if (e.target_vertex != vertex_) continue;
      const int32_t producers = jg_.vertices.at(static_cast<size_t>(e.source_vertex)).parallelism;
      for (int32_t i = 0; i < producers; ++i) {
        auto p = std::make_shared<ResultPartition>(1, config, nullptr);
        if (e.partitioning == Partitioning::kForward) {
          forward_channel_ = static_cast<int32_t>(channels.size());
          forward_ = p;
        } else {
          rebalance_channels_.push_back(static_cast<int32_t>(channels.size()));
          rebalance_.push_back(p);
        }
        channels.push_back(p->channel(0));
      }
    }
    EXPECT_TRUE(forward_ != nullptr);
    EXPECT_EQ(rebalance_.size(), 2u);
    EXPECT_TRUE(storage_->initialize(JobId::generate()).is_ok());

    TaskDeployment d;
    d.stream_graph = &env_.stream_graph();
    d.job_graph = &jg_;
    d.vertex = vertex_;
    d.key_group_range = KeyGroupRange(0, jg_.max_parallelism - 1);
    d.notifier = std::make_shared<TaskNotifier>();
    d.input_gate = std::make_unique<InputGate>(std::move(channels), d.notifier.get());
    d.job_metrics = &registry_.add_job_group("harness");
    d.clock = &clock_;
    d.checkpoint_responder = &recorder_;
    d.checkpoint_storage = storage_;
    d.async_executor = &executor_;
    d.unaligned.enabled = true;
    notifier_ = d.notifier;
    task_ = std::make_unique<StreamTask>(std::move(d), &recorder_);
  }

  ~UnalignedTaskHarness() {
    set_input_suspended_for_testing(-1);
    task_->cancel();
    if (thread_.joinable()) thread_.join();
    executor_.drain();
  }

  void start_suspended() {
    set_input_suspended_for_testing(vertex_);
    thread_ = std::thread([this] { task_->run(); });
  }
  void resume() {
    set_input_suspended_for_testing(-1);
    notifier_->notify();
  }

  void emit(ResultPartition& p, int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) {
      uint8_t bytes[8];
      std::memcpy(bytes, &i, sizeof bytes);
      p.emit_record(0, bytes, sizeof bytes);
    }
    p.flush_all();
  }
  RuntimeEvent barrier(int64_t id) const { return encode_barrier(CheckpointBarrier{CheckpointId(id), clock_.now_ms(), {}}); }

  // A priority barrier on rebalance channel `producer`, overtaking what is queued there; returns once the
  // (suspended) task took it.
  void priority_barrier(size_t producer, int64_t id) {
    ResultPartition& p = *rebalance_.at(producer);
    Channel& ch = *p.channel(0);
    const int32_t data_buffers = ch.stats().receiver_queued_buffers;
    ASSERT_EQ(ch.stats().sender_queued_buffers, 0);
    p.enqueue_priority_event(0, barrier(id));
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (ch.stats().receiver_queued_buffers > data_buffers && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(ch.stats().receiver_queued_buffers, data_buffers) << "the task did not take barrier " << id;
  }

  // The records of the input channel state checkpoint `id` acknowledged, by channel.
  std::map<int32_t, int64_t> input_state_records(int64_t id) {
    std::map<int32_t, int64_t> out;
    auto ack = recorder_.wait_ack(id);
    EXPECT_TRUE(ack.has_value()) << "checkpoint " << id << " was not acknowledged";
    if (!ack) return out;
    for (const auto& [op, st] : *ack) {
      if (!st.channel_state) continue;
      auto bytes = storage_->read_state("harness", *st.channel_state);
      EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
      auto decoded = checkpoint::decode_channel_state(*bytes, "harness");
      EXPECT_TRUE(decoded.is_ok()) << decoded.status().to_string();
      for (const auto& in : decoded->inputs) {
        for (const auto& b : in.buffers) out[in.channel] += b.num_records;
      }
    }
    return out;
  }

  StreamExecutionEnvironment env_;
  graph::JobGraph jg_;
  int32_t vertex_ = -1;
  int32_t forward_channel_ = -1;
  std::vector<int32_t> rebalance_channels_;
  std::shared_ptr<ResultPartition> forward_;
  std::vector<std::shared_ptr<ResultPartition>> rebalance_;
  SystemClock clock_;
  MetricRegistry registry_;
  Recorder recorder_;
  std::shared_ptr<checkpoint::CheckpointStorage> storage_ = std::make_shared<checkpoint::JobManagerCheckpointStorage>();
  AsyncSnapshotExecutor executor_{1};
  std::shared_ptr<TaskNotifier> notifier_;
  std::unique_ptr<StreamTask> task_;
  std::thread thread_;
};

// Checkpoint 1 aligns: its priority barrier overtook records on rebalance channel 0 (now blocked), and the forward
// channel's barrier is still queued behind data. Barrier 2 overtakes records on rebalance channel 1 and aborts
// checkpoint 1. Checkpoint 2's channel state must hold every record its barriers overtook on both rebalance
// channels: the snapshot is taken before the task reads them, so a restore from 2 replays them from the channel
// state or loses them (a review finding: the abort of 1 used to drop the copies barrier 2 had just stashed,
// losing channel 1's records).
TEST(StreamTaskUnaligned, NewerBarrierThatAbortsAnAligningCheckpointKeepsWhatItOvertook) {
  UnalignedTaskHarness h;
  h.start_suspended();
  h.emit(*h.forward_, 0, 5);
  h.forward_->broadcast_event(h.barrier(1));
  h.forward_->broadcast_event(h.barrier(2));
  h.emit(*h.rebalance_[0], 0, 10);
  h.priority_barrier(0, 1);
  h.emit(*h.rebalance_[1], 100, 120);
  h.priority_barrier(1, 2);  // aborts checkpoint 1
  EXPECT_EQ(h.recorder_.wait_declines(1), std::vector<int64_t>{1});
  h.priority_barrier(0, 2);
  // Reading resumes: the forward channel's barriers 1 (obsolete) and 2 (completes the alignment) arrive.
  h.resume();
  const auto records = h.input_state_records(2);
  EXPECT_EQ(records.count(h.forward_channel_), 0u) << "forward inputs are aligned: never channel state";
  ASSERT_EQ(records.count(h.rebalance_channels_[0]), 1u);
  EXPECT_EQ(records.at(h.rebalance_channels_[0]), 10);
  ASSERT_EQ(records.count(h.rebalance_channels_[1]), 1u)
      << "checkpoint 2 lost what its barrier overtook on the channel that aborted checkpoint 1";
  EXPECT_EQ(records.at(h.rebalance_channels_[1]), 20);
}

}  // namespace
}  // namespace sluice::runtime
