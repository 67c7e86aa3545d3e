#include "runtime/stream_task.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "core/log_context.h"
#include "graph/edge_topology.h"
#include "runtime/network/blocking_record_framing.h"
#include "runtime/network/partition_record_writer.h"
#include "runtime/network/watermark_event.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/metrics/counter.h"

namespace sluice::runtime {

namespace {

const std::atomic<uint32_t> kNothingArmed{0};
std::atomic<int32_t> g_input_suspended_vertex{-1};

}  // namespace

// Delivers coordinator events into this task's mailbox.
class StreamTask::EventSink final : public OperatorEventSink {
 public:
  explicit EventSink(StreamTask* task) : task_(task) {}
  void send(OperatorEvent event) override {
    auto shared = std::make_shared<OperatorEvent>(std::move(event));
    task_->mailbox_.put([t = task_, shared] { t->source_->handle_operator_event(*shared); });
  }

 private:
  StreamTask* task_;
};

struct StreamTask::OperatorSlot {
  int32_t node_id = -1;
  std::unique_ptr<StreamOperator> op;
  MetricGroup* metrics = nullptr;
  // Published by the task thread on every flush tick and at the end, read by the stateSizeBytes gauge on
  // other threads. Shared with the gauge: metrics stay readable after the task is gone.
  std::shared_ptr<std::atomic<int64_t>> state_size_bytes = std::make_shared<std::atomic<int64_t>>(0);
  // Watermarks into and out of the operator (currentInputWatermark, ...), written by its counting outputs.
  std::shared_ptr<OperatorWatermarks> watermarks = std::make_shared<OperatorWatermarks>();
};

void set_input_suspended_for_testing(int32_t vertex) {
  g_input_suspended_vertex.store(vertex, std::memory_order_relaxed);
}

bool input_suspended_for_testing(int32_t vertex) {
  return g_input_suspended_vertex.load(std::memory_order_relaxed) == vertex;
}

StreamTask::StreamTask(TaskDeployment deployment, TaskListener* listener)
    : d_(std::move(deployment)),
      listener_(listener),
      notifier_(d_.notifier),
      mailbox_(notifier_.get()),
      processing_time_(std::make_unique<QueuedProcessingTimeService>(d_.clock)),
      times_(std::make_shared<TaskTimes>(
          (d_.clock != nullptr ? d_.clock : SystemClock::shared().get())->monotonic_ns())) {
  if (d_.clock == nullptr) d_.clock = SystemClock::shared().get();
  armed_failures_ = d_.fault_injector ? d_.fault_injector->armed_points(d_.vertex, d_.subtask_index) : nullptr;
  if (armed_failures_ == nullptr) armed_failures_ = &kNothingArmed;
  name_ = subtask_name(*d_.job_graph, d_.vertex, d_.subtask_index);
}

StreamTask::~StreamTask() = default;

std::string subtask_name(const graph::JobGraph& job_graph, int32_t vertex, int32_t subtask) {
  const auto& vx = job_graph.vertices.at(static_cast<size_t>(vertex));
  return vx.name + " (" + std::to_string(subtask + 1) + "/" + std::to_string(vx.parallelism) + ")";
}

TaskInfo operator_task_info(const graph::JobGraph& job_graph, const StreamNode& node, int32_t vertex, int32_t subtask,
                            int32_t attempt_number) {
  TaskInfo info;
  info.task_name = subtask_name(job_graph, vertex, subtask);
  info.operator_name = node.name;
  info.operator_uid = node.uid;
  info.job_name = job_graph.job_name;
  info.subtask_index = subtask;
  info.parallelism = job_graph.vertices.at(static_cast<size_t>(vertex)).parallelism;
  info.max_parallelism = job_graph.max_parallelism;
  info.attempt_number = attempt_number;
  return info;
}

std::chrono::nanoseconds StreamTask::timer_wait_bound(std::chrono::nanoseconds max) const {
  return at_end_of_data_ ? max : processing_time_->wait_bound(max);
}

void StreamTask::wait_idle(std::chrono::nanoseconds max) {
  const int64_t start = d_.clock->monotonic_ns();
  notifier_->wait(timer_wait_bound(max));
  times_->add_idle_ns(d_.clock->monotonic_ns() - start);
}

void StreamTask::wait_back_pressured(std::chrono::nanoseconds max) {
  const int64_t start = d_.clock->monotonic_ns();
  notifier_->wait(timer_wait_bound(max));
  times_->add_back_pressured_ns(d_.clock->monotonic_ns() - start);
}

void StreamTask::cancel() {
  cancelled_.store(true);
  for (auto& o : d_.outputs) o.partition->cancel();
  notifier_->notify();
}

void StreamTask::request_flush() {
  flush_requested_.store(true, std::memory_order_relaxed);
  notifier_->notify();
}

// Builds the chain back to front: every node's outputs exist before the node is wired to them.
void StreamTask::build_chain() {
  const StreamGraph& sg = *d_.stream_graph;
  const auto& vx = d_.job_graph->vertices.at(static_cast<size_t>(d_.vertex));
  std::unordered_map<int32_t, StreamOperator*> op_of;
  for (int32_t node_id : vx.nodes) {
    auto slot = std::make_unique<OperatorSlot>();
    slot->node_id = node_id;
    slot->op = sg.node(node_id).create_operator();
    op_of[node_id] = slot->op.get();
    if (sg.node(node_id).keyed && keyed_op_ == nullptr) keyed_op_ = slot->op.get();
    if (sg.node(node_id).is_sink && sink_op_ == nullptr) sink_op_ = slot->op.get();
    slots_.push_back(std::move(slot));
  }

  // Input side of each non-source node, wrapped to count records in (numRecordsIn). A two-input node (always a
  // chain head) has its second input in input2_of.
  std::unordered_map<int32_t, OutputBase*> input_of;
  std::unordered_map<int32_t, OutputBase*> input2_of;
  for (auto& slot : slots_) {
    const StreamNode& node = sg.node(slot->node_id);
    slot->metrics = &d_.job_metrics->add_operator_group(node.name).add_subtask_group(SubtaskIndex(d_.subtask_index));
    if (node.kind == StreamNode::Kind::kSource) continue;
    const TypeGlue* in_type[3] = {nullptr, nullptr, nullptr};
    for (const auto& se : sg.edges)
      if (se.target_id == slot->node_id) in_type[se.type_number] = &se.type;
    Counter* records_in = &slot->metrics->counter(metric_names::kNumRecordsIn);
    if (node.kind == StreamNode::Kind::kTwoInput) {
      owned_outputs_.push_back(
          in_type[1]->make_counting_output(node.input_of(*slot->op), records_in, &slot->watermarks->input1_ms));
      input_of[slot->node_id] = owned_outputs_.back().get();
      owned_outputs_.push_back(
          in_type[2]->make_counting_output(node.input2_of(*slot->op), records_in, &slot->watermarks->input2_ms));
      input2_of[slot->node_id] = owned_outputs_.back().get();
      continue;
    }
    owned_outputs_.push_back(
        in_type[0]->make_counting_output(node.input_of(*slot->op), records_in, &slot->watermarks->input1_ms));
    input_of[slot->node_id] = owned_outputs_.back().get();
  }

  // Network outputs per (node, tag).
  std::map<std::pair<int32_t, std::string>, std::vector<OutputBase*>> outs;
  std::map<std::pair<int32_t, std::string>, const TypeGlue*> glue_of;
  for (const auto& ce : vx.chained) {
    outs[{ce.source_node, ce.side_output_tag}].push_back(input_of.at(ce.target_node));
  }
  for (const auto& o : d_.outputs) {
    const StreamEdge& se = sg.edges.at(static_cast<size_t>(o.edge->stream_edge));
    // One channel per consumer this subtask feeds: all of them, or its own on a pointwise edge (edge_topology.h).
    const int32_t channels = graph::consumers_of_producer(*d_.job_graph, *o.edge, d_.subtask_index).size();
    if (o.blocking) {
      writers_.push_back(std::make_unique<BlockingPartitionRecordWriter>(o.partition.get(), channels, o.sorted_by_key));
    } else {
      writers_.push_back(std::make_unique<PartitionRecordWriter>(o.partition.get(), channels));
    }
    // Hash and custom edges bring their own typed selector; the others take a standard one.
    auto selector = se.make_selector ? se.make_selector() : se.type.make_standard_selector(o.edge->partitioning);
    selector->setup(channels, d_.job_graph->max_parallelism, d_.subtask_index);
    owned_outputs_.push_back(se.type.make_writer_output(writers_.back().get(), std::move(selector),
                                                        o.edge->carries_timestamps ? &record_timestamp_ : nullptr));
    outs[{se.source_id, se.side_output_tag}].push_back(owned_outputs_.back().get());
    glue_of[{se.source_id, se.side_output_tag}] = &se.type;
  }
  for (const auto& ce : vx.chained) {
    for (const auto& se : sg.edges) {
      if (se.source_id == ce.source_node && se.target_id == ce.target_node && se.side_output_tag == ce.side_output_tag) {
        glue_of[{ce.source_node, ce.side_output_tag}] = &se.type;
      }
    }
  }

  auto combine = [&](const std::pair<int32_t, std::string>& key, const TypeGlue& glue) -> OutputBase* {
    auto it = outs.find(key);
    if (it == outs.end() || it->second.empty()) {
      owned_outputs_.push_back(glue.make_discarding_output());
      return owned_outputs_.back().get();
    }
    if (it->second.size() == 1) return it->second.front();
    owned_outputs_.push_back(glue.make_broadcasting_output(it->second));
    return owned_outputs_.back().get();
  };

  for (auto& slot : slots_) {
    const StreamNode& node = sg.node(slot->node_id);
    OutputBase* main_out = combine({slot->node_id, ""}, node.output_type);
    owned_outputs_.push_back(node.output_type.make_counting_output(
        main_out, &slot->metrics->counter(metric_names::kNumRecordsOut), &slot->watermarks->output_ms));
    node.set_output(*slot->op, owned_outputs_.back().get());
    for (const auto& [key, glue] : glue_of) {
      if (key.first != slot->node_id || key.second.empty()) continue;
      slot->op->side_outputs().add(key.second, glue->type, combine(key, *glue));
    }
  }

  // Task-level network figures on the head operator's group (gauges are read from other threads: the
  // partition counters are atomics).
  TaskMetricSources task_sources;
  task_sources.times = times_;
  for (const auto& o : d_.outputs) task_sources.partitions.push_back(o.partition);
  task_sources.clock = d_.clock;
  if (d_.input_gate) task_sources.bytes_in = bytes_in_published_;
  slots_.front()->metrics->gauge(metric_names::kBackPressuredTimeNs,
                                 [task_sources] { return static_cast<double>(back_pressured_ns(task_sources)); });
  slots_.back()->metrics->gauge(metric_names::kNumBytesOut, [parts = task_sources.partitions] {
    double b = 0;
    for (const auto& p : parts) b += static_cast<double>(p->bytes_out());
    return b;
  });
  // Flink's generic key/value group: scope <job>.task_name.<task>.<subtask>, apart from an operator's group of the
  // same name.
  register_task_metrics(d_.job_metrics->add_group(metric_scope::kTaskName)
                            .add_group(metric_scope::kTaskName, vx.name)
                            .add_subtask_group(SubtaskIndex(d_.subtask_index)),
                        task_sources);

  // Head: source reader or network input.
  auto& head = *slots_.front();
  if (vx.is_source) {
    source_ = static_cast<SourceOperatorBase*>(head.op.get());
    event_sink_ = std::make_unique<EventSink>(this);
    gateway_ = std::make_unique<SourceCoordinatorGateway>(d_.source_coordinator, d_.subtask_index, event_sink_.get());
  } else {
    build_inputs(input_of.at(head.node_id),
                 sg.node(head.node_id).kind == StreamNode::Kind::kTwoInput ? input2_of.at(head.node_id) : nullptr);
    auto bytes_in = bytes_in_published_;
    head.metrics->gauge(metric_names::kNumBytesIn, [bytes_in] { return static_cast<double>(bytes_in->load(std::memory_order_relaxed)); });
  }

  for (auto& slot : slots_) {
    const StreamNode& node = sg.node(slot->node_id);
    OperatorSetup s;
    s.info = operator_task_info(*d_.job_graph, node, d_.vertex, d_.subtask_index, d_.attempt_number);
    s.metrics = slot->metrics;
    s.clock = d_.clock;
    s.key_group_range = d_.key_group_range;
    s.state_backend_type = d_.state_backend_type;
    s.rocksdb = d_.rocksdb;
    s.source_gateway = gateway_.get();
    s.checkpointing = periodic_checkpoints() || d_.batch_commit_after_stage;
    s.incremental_checkpoints = periodic_checkpoints() && d_.incremental_checkpoints;
    s.job_id = d_.job_id;
    s.lineage_job_ids = d_.lineage_job_ids;
    s.file_systems = d_.file_systems;
    s.record_timestamp = &record_timestamp_;
    s.auto_watermark_interval_ms = d_.auto_watermark_interval_ms;
    s.processing_time_service = processing_time_.get();
    s.batch_sorted_input = d_.batch_sorted_input && slot.get() == slots_.front().get();
    slot->op->setup(s);
    chain_ops_.push_back(ChainOperator{graph::operator_id(node), node.name, slot->op.get()});
    auto size = slot->state_size_bytes;
    slot->metrics->gauge(metric_names::kStateSizeBytes,
                         [size] { return static_cast<double>(size->load(std::memory_order_relaxed)); });
    register_operator_metrics(*slot->metrics, slot->watermarks, node.kind != StreamNode::Kind::kSource,
                              node.kind == StreamNode::Kind::kTwoInput, d_.clock);
  }
}

// The task's inputs (one, or two for a two-input head) and which input each gate channel feeds. Gate channels are
// in the order the cluster wires them: incoming job edges in job-graph order, then producer subtasks (all of them,
// or on a pointwise edge the ones feeding this subtask: one per forward edge); an edge's type number says which
// input of the head it feeds.
void StreamTask::build_inputs(OutputBase* head_input1, OutputBase* head_input2) {
  const StreamGraph& sg = *d_.stream_graph;
  const size_t num_inputs = head_input2 != nullptr ? 2 : 1;
  inputs_.resize(num_inputs);
  inputs_[0].head = head_input1;
  if (num_inputs == 2) {
    inputs_[1].head = head_input2;
    two_input_head_ = dynamic_cast<TwoInputOperatorBase*>(slots_.front()->op.get());
    if (two_input_head_ == nullptr) throw std::logic_error("task " + name_ + ": a two-input head that is no TwoInputOperatorBase");
  }
  for (const graph::JobEdge* e : d_.job_graph->inputs_of(d_.vertex)) {
    const size_t input = e->type_number == 2 ? 1 : 0;
    if (input >= num_inputs) throw std::logic_error("task " + name_ + ": an edge into input 2 of a one-input head");
    const int32_t n = graph::producers_of_consumer(*d_.job_graph, *e, d_.subtask_index).size();
    TaskInput& in = inputs_[input];
    if (!in.deserializer) {
      const StreamEdge& se = sg.edges.at(static_cast<size_t>(e->stream_edge));
      in.deserializer = se.type.make_deserializer(in.head, e->carries_timestamps ? &record_timestamp_ : nullptr);
    }
    for (int32_t i = 0; i < n; ++i) {
      channel_input_.push_back(static_cast<uint8_t>(input));
      channel_local_.push_back(in.num_channels++);
      channel_aligned_.push_back(!holds_channel_state(e->partitioning));
    }
  }
  if (static_cast<int32_t>(channel_input_.size()) != d_.input_gate->num_channels()) {
    throw std::runtime_error("task " + name_ + ": " + std::to_string(d_.input_gate->num_channels()) +
                             " input channels, but the job graph gives " + std::to_string(channel_input_.size()));
  }
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs_[i].num_channels == 0) {
      throw std::logic_error("task " + name_ + ": input " + std::to_string(i + 1) + " has no channel");
    }
    inputs_[i].valve = std::make_unique<StatusWatermarkValve>(inputs_[i].num_channels);
  }
  channel_ended_.assign(channel_input_.size(), false);
  tagged_input_ = num_inputs == 2 && d_.batch_sorted_input;
}

Result<int64_t> StreamTask::deserialize_tagged(const uint8_t* data, size_t size) {
  int64_t n = 0;
  TaggedRecordView v;
  for (size_t at = 0; at < size; at += v.entry_size()) {
    if (!parse_tagged_record(data + at, size - at, &v) || (v.input != 1 && v.input != 2)) {
      return Status::corruption("sorted two-input buffer of " + std::to_string(size) + " bytes: entry " +
                                std::to_string(n) + " is no whole [input 1|2][size][record] entry");
    }
    SLUICE_ASSIGN_OR_RETURN(int64_t records,
                            inputs_[v.input - 1].deserializer->deserialize_buffer(v.record, v.record_size));
    n += records;
  }
  return n;
}

// A channel delivered end of data or end of partition (whichever first): once every channel of an input did,
// a two-input head learns that this input ended (end_input_of), before the chain ends. With tagged input both
// inputs end together, after the last channel.
void StreamTask::on_channel_ended(int32_t channel) {
  if (channel_ended_[static_cast<size_t>(channel)]) return;
  channel_ended_[static_cast<size_t>(channel)] = true;
  const size_t input = channel_input_[static_cast<size_t>(channel)];
  TaskInput& in = inputs_[input];
  ++in.ended_channels;
  if (tagged_input_) {  // either input's records may still come on another channel: both end with the last one
    if (inputs_[0].ended_channels == inputs_[0].num_channels && inputs_[1].ended_channels == inputs_[1].num_channels) {
      two_input_head_->end_input_of(1);
      two_input_head_->end_input_of(2);
    }
    return;
  }
  if (in.ended_channels == in.num_channels && two_input_head_ != nullptr) {
    two_input_head_->end_input_of(static_cast<int32_t>(input) + 1);
  }
}

}  // namespace sluice::runtime

namespace sluice::runtime {

void StreamTask::open_chain() {
  if (takes_snapshots()) {
    subtask_checkpointing_ = std::make_unique<SubtaskCheckpointCoordinator>(
        d_.vertex, d_.subtask_index, d_.checkpoint_responder, d_.checkpoint_storage, d_.async_executor, d_.clock);
    if (d_.input_gate) {
      // build_inputs checked that channel_aligned_ has one entry per gate channel.
      barrier_handler_ =
          make_checkpoint_barrier_handler(BarrierHandlingConfig{d_.at_least_once, d_.unaligned}, channel_aligned_);
      barriers_overtake_ = barrier_handler_->barriers_overtake_data();
      end_of_data_.assign(static_cast<size_t>(d_.input_gate->num_channels()), false);
    }
  }
  // State first (Flink's initializeState before open), then open.
  OperatorRestoreState empty;
  for (auto& c : chain_ops_) {
    auto it = d_.restore.find(c.operator_id);
    c.op->initialize_state(it != d_.restore.end() ? &it->second : (d_.restored ? &empty : nullptr));
  }
  d_.restore.clear();  // the restored bytes are in the backends now
  if (d_.restored && failure_armed(FailurePoint::kRestore)) inject_failure(FailurePoint::kRestore, nullptr, -1);
  // In-flight data of an unaligned checkpoint: queued as recovered input, processed before the gate's first buffer.
  restore_input_channel_state();
  // Tail first: downstream operators are ready before upstream ones emit (open may emit, e.g. a source).
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) (*it)->op->open();
  opened_ = true;
  // The restore's per-state schema resolution is known only now: the program registered its states in open().
  for (auto& c : chain_ops_) {
    for (const std::string& line : c.op->state_schema_reports()) {
      spdlog::info("operator '{}' subtask {}: restored {}", c.op->info().operator_name, c.op->info().subtask_index,
                   line);
    }
  }
}

void StreamTask::end_chain() {
  // Head first: what an operator flushes at end of input reaches the next one before it ends.
  for (auto& slot : slots_) slot->op->end_input();
}

void StreamTask::close_chain() noexcept {
  for (auto& slot : slots_) {
    try {
      slot->op->close();
    } catch (...) {
      // Closing after a failure must not mask the original cause.
    }
  }
}

void StreamTask::close_chain_or_throw() {
  // Normal end: every operator is closed, and the first close() that threw fails the task.
  std::exception_ptr first;
  for (auto& slot : slots_) {
    try {
      call_user(slot->op->info(), [&] { slot->op->close(); });
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  closed_ = true;
  if (first) std::rethrow_exception(first);
}

bool StreamTask::outputs_available() const {
  for (const auto& o : d_.outputs)
    if (!o.partition->is_available()) return false;
  return true;
}

void StreamTask::flush_outputs() {
  for (auto& o : d_.outputs) o.partition->flush_all();
}

void StreamTask::publish_state_sizes() {
  for (auto& slot : slots_) slot->state_size_bytes->store(slot->op->state_size_bytes(), std::memory_order_relaxed);
  if (d_.input_gate) bytes_in_published_->store(d_.input_gate->bytes_in(), std::memory_order_relaxed);
}

bool StreamTask::process_input() {
  auto next = d_.input_gate->poll_next();
  if (!next) {
    if (d_.input_gate->is_finished()) return false;
    wait_idle(std::chrono::milliseconds(50));
    return true;
  }
  if (next->is_buffer()) {
    // As the keyed operator's function throwing on the buffer's first record.
    if (keyed_op_ != nullptr && failure_armed(FailurePoint::kKeyedOperator)) {
      inject_failure(FailurePoint::kKeyedOperator, keyed_op_, -1);
    }
    Buffer& buf = next->buffer();
    if (collecting_.value() != 0 && barrier_handler_ && barrier_handler_->persist_buffer(next->channel_index)) {
      // Sent before this channel's barrier, taken after the unaligned snapshot: part of the checkpoint, and
      // processed as usual (it belongs to the stream after the snapshot).
      input_state_[static_cast<size_t>(next->channel_index)].push_back(
          checkpoint::ChannelStateBuffer{buf.num_records, buf.bytes});
    }
    auto n = tagged_input_ ? deserialize_tagged(buf.bytes.data(), buf.bytes.size())
                           : inputs_[channel_input_[static_cast<size_t>(next->channel_index)]]
                                 .deserializer->deserialize_buffer(buf.bytes.data(), buf.bytes.size());
    if (!n.is_ok()) {
      throw std::runtime_error("task " + name_ + ", input channel " + std::to_string(next->channel_index) + ": " +
                               n.status().to_string());
    }
    d_.input_gate->recycle(std::move(buf));
    if (d_.records_after_barrier_hook != nullptr && barrier_handler_) {
      CheckpointId pending = barrier_handler_->pending_barrier_of(next->channel_index);
      if (pending.value() != 0) (*d_.records_after_barrier_hook)(d_.vertex, d_.subtask_index, next->channel_index, pending, *n);
    }
    return true;
  }
  handle_event(next->channel_index, next->event(), next->overtaken_buffers);
  return !d_.input_gate->is_finished();
}

void StreamTask::handle_event(int32_t channel, const RuntimeEvent& event, int32_t overtaken_buffers) {
  auto check = [&](const Status& s) {
    if (!s.is_ok()) throw std::runtime_error("task " + name_ + ", input channel " + std::to_string(channel) + ": " + s.to_string());
  };
  switch (event.type) {
    case EventType::kCheckpointBarrier: {
      auto b = decode_barrier(event);
      check(b.status());
      if (!barrier_handler_) return;  // checkpointing off: cannot happen within one job
      const BarrierArrival arrival{d_.clock->monotonic_ns(), d_.clock->now_ms(), overtaken_buffers};
      apply_barrier_actions(barrier_handler_->on_barrier(channel, *b, arrival));
      return;
    }
    case EventType::kCancelCheckpointMarker: {
      auto id = decode_cancel_marker(event);
      check(id.status());
      if (barrier_handler_) apply_barrier_actions(barrier_handler_->on_cancellation_marker(*id));
      return;
    }
    case EventType::kEndOfPartition:
      apply_valve_output(channel, input_valve(channel).on_channel_finished(local_channel(channel)));
      on_channel_ended(channel);
      if (barrier_handler_) apply_barrier_actions(barrier_handler_->on_channel_finished(channel));
      return;
    case EventType::kEndOfData:
      on_channel_ended(channel);
      if (!end_of_data_.empty() && !end_of_data_[static_cast<size_t>(channel)]) {
        end_of_data_[static_cast<size_t>(channel)] = true;
        if (++end_of_data_count_ == static_cast<int32_t>(end_of_data_.size())) reach_end_of_data();
      }
      return;
    case EventType::kWatermark: {
      auto wm = decode_watermark(event);
      check(wm.status());
      apply_valve_output(channel, input_valve(channel).on_watermark(local_channel(channel), *wm));
      return;
    }
    case EventType::kWatermarkStatus: {
      auto idle = decode_watermark_status(event);
      check(idle.status());
      apply_valve_output(channel, input_valve(channel).on_watermark_status(local_channel(channel), *idle));
      return;
    }
  }
}

// To the head's input of `channel` (a two-input head combines its inputs' watermarks itself).
void StreamTask::apply_valve_output(int32_t channel, const StatusWatermarkValve::Output& out) {
  OutputBase* head = inputs_[channel_input_[static_cast<size_t>(channel)]].head;
  if (out.idle.has_value() && !*out.idle) head->emit_watermark_status(false);
  if (out.watermark.has_value()) head->emit_watermark(*out.watermark);
  if (out.idle.has_value() && *out.idle) head->emit_watermark_status(true);
}

void StreamTask::apply_barrier_actions(const std::vector<BarrierAction>& actions) {
  for (const auto& a : actions) {
    switch (a.kind) {
      case BarrierAction::Kind::kNone:
        break;
      case BarrierAction::Kind::kBlockChannel:
        d_.input_gate->block_channel(a.channel);
        break;
      case BarrierAction::Kind::kPersistOvertaken:
        persist_overtaken(a.channel, a.checkpoint, a.buffers);
        break;
      case BarrierAction::Kind::kTriggerCheckpoint: {
        // Unaligned: the time from the first barrier to the snapshot is (nearly) none, however full the buffers.
        const int64_t alignment_ms = (d_.clock->monotonic_ns() - a.first_barrier_ns) / 1'000'000;
        CheckpointBarrier b = a.barrier;
        b.id = a.checkpoint;
        perform_checkpoint(b, alignment_ms, a.unaligned);
        d_.input_gate->unblock_all();
        break;
      }
      case BarrierAction::Kind::kChannelStateComplete:
        if (collecting_ == a.checkpoint) complete_channel_state();
        break;
      case BarrierAction::Kind::kAbortCheckpoint:
        if (collecting_ == a.checkpoint) drop_channel_state();
        // Only the stash of the aborted checkpoint (or an older one) goes: a newer barrier that aborted it may
        // stash what it overtook next in this same action list.
        if (stash_checkpoint_ <= a.checkpoint) overtaken_stash_.clear();
        d_.input_gate->unblock_all();
        for (auto& o : d_.outputs) o.partition->broadcast_event(encode_cancel_marker(a.checkpoint));
        d_.checkpoint_responder->decline(a.checkpoint, JobVertexId(d_.vertex), SubtaskIndex(d_.subtask_index),
                                         Status::cancelled("barrier handling aborted (a newer checkpoint or a "
                                                           "cancellation marker arrived)"));
        break;
    }
  }
}

void StreamTask::perform_checkpoint(const CheckpointBarrier& barrier, int64_t alignment_ms, bool unaligned) {
  // `unaligned`: the barrier handler took the snapshot unaligned and collects input channel state. The
  // checkpoint is unaligned here also when its alignment timeout passed meanwhile: its barriers then overtake
  // the queued output, and its channel state is complete once that is copied.
  const bool collects_input = unaligned;
  unaligned = unaligned || d_.unaligned.unaligned_at(barrier, d_.clock->now_ms());
  if (unaligned) {
    collecting_ = barrier.id;
    channel_state_ = checkpoint::SubtaskChannelState{};
    // What priority barriers overtook before the snapshot opens each channel's input state.
    input_state_ = std::move(overtaken_stash_);
    input_state_.resize(d_.input_gate ? static_cast<size_t>(d_.input_gate->num_channels()) : 0);
  }
  overtaken_stash_.clear();
  bool ok = subtask_checkpointing_->checkpoint_state(
      barrier, chain_ops_,
      [&] {
        // Called after every operator's synchronous snapshot (a sink's pre-commit) and before the asynchronous
        // part is submitted; an exception here propagates and nothing is submitted.
        if (sink_op_ != nullptr && failure_armed(FailurePoint::kSink)) {
          inject_failure(FailurePoint::kSink, sink_op_, barrier.id.value());
        }
        emit_barrier(barrier, unaligned);
        if (failure_armed(FailurePoint::kBetweenSyncAndAsyncSnapshot)) {
          inject_failure(FailurePoint::kBetweenSyncAndAsyncSnapshot, nullptr, barrier.id.value());
        }
      },
      alignment_ms, unaligned);
  times_->last_alignment_ns.store(alignment_ms * 1'000'000, std::memory_order_relaxed);
  times_->last_start_delay_ns.store(subtask_checkpointing_->last_start_delay_ms() * 1'000'000,
                                    std::memory_order_relaxed);
  if (!ok) {
    // Declined in the synchronous part: nothing of this checkpoint is collected any more, so no later buffer is
    // kept as its channel state.
    if (collecting_ == barrier.id) drop_channel_state();
    for (auto& o : d_.outputs) o.partition->broadcast_event(encode_cancel_marker(barrier.id));
    return;
  }
  if (unaligned && !collects_input) complete_channel_state();
}

void StreamTask::trigger_checkpoint(const CheckpointBarrier& barrier, std::vector<uint8_t> enumerator_state) {
  if (!subtask_checkpointing_ || source_ == nullptr) return;
  source_->set_enumerator_state(barrier.id, std::move(enumerator_state));
  perform_checkpoint(barrier, 0, /*unaligned=*/false);  // unaligned by its timestamp: output state only
}

void StreamTask::notify_checkpoint_complete(CheckpointId id) {
  // Checkpoint id is complete and durable; the sink has not committed its committables yet.
  if (sink_op_ != nullptr && failure_armed(FailurePoint::kBetweenCompletionAndCommit)) {
    inject_failure(FailurePoint::kBetweenCompletionAndCommit, sink_op_, id.value());
  }
  for (auto& c : chain_ops_) c.op->notify_checkpoint_complete(id);
  // Committed: a failure now must not show the output twice (the restore or commit retry commits it again).
  if (sink_op_ != nullptr && failure_armed(FailurePoint::kAfterCommit)) {
    inject_failure(FailurePoint::kAfterCommit, sink_op_, id.value());
  }
}

void StreamTask::notify_checkpoint_aborted(CheckpointId id) {
  for (auto& c : chain_ops_) c.op->notify_checkpoint_aborted(id);
}

void StreamTask::finish() {
  finish_requested_ = true;
  notifier_->notify();
}

void StreamTask::stop_source(bool drain) {
  if (source_ == nullptr || at_end_of_data_) return;
  if (!drain) {
    source_stopped_ = true;
    flush_outputs();  // what the source produced before the stop goes ahead of the savepoint's barrier
    return;
  }
  source_->process_watermark(kMaxWatermark);  // the end of event time: every event-time timer fires
  reach_end_of_data();
  flush_outputs();
}

void StreamTask::resume_source() {
  source_stopped_ = false;
  notifier_->notify();
}

void StreamTask::reach_end_of_data() {
  if (at_end_of_data_) return;
  end_chain();
  at_end_of_data_ = true;
  for (auto& o : d_.outputs) o.partition->broadcast_event(end_of_data_event());
  if (d_.batch_commit_after_stage) {  // BATCH: pre-commit now, commit once the stage succeeded
    const StreamGraph& sg = *d_.stream_graph;
    std::vector<BatchPrecommit> precommits;
    for (auto& slot : slots_) {
      if (!sg.node(slot->node_id).commits_on_checkpoint_complete) continue;
      OperatorSnapshot snap = slot->op->snapshot_state(CheckpointId(kBatchCommitCheckpoint), d_.clock->now_ms());
      precommits.push_back(BatchPrecommit{slot->node_id, std::move(snap.operator_state)});
    }
    // The task's data is complete: its exchange files commit before the sinks do, so a failure in the commit
    // phase never needs this stage's output again.
    for (auto& o : d_.outputs) o.partition->finish();
    listener_->on_task_precommitted(d_.vertex, d_.subtask_index, std::move(precommits));
  }
  listener_->on_task_end_of_data(d_.vertex, d_.subtask_index);
}

void StreamTask::loop() {
  constexpr int kSourceBatch = 256;  // records polled between mailbox checks
  while (true) {
    if (mailbox_.has_mail()) mailbox_.drain();
    // Processing-time timers (keyed operators' timers, periodic watermark emission) run between records like
    // mails; not after end of input (operators are ended).
    if (processing_time_->has_timers() && !at_end_of_data_) processing_time_->fire_due();
    if (cancelled_.load(std::memory_order_relaxed) || finish_requested_) return;
    if (barriers_overtake_) check_alignment_deadlines();
    if (failure_armed(FailurePoint::kTask)) inject_failure(FailurePoint::kTask, nullptr, -1);
    if (flush_requested_.load(std::memory_order_relaxed)) {
      flush_requested_.store(false, std::memory_order_relaxed);
      flush_outputs();
      publish_state_sizes();
    }
    if (!outputs_available() || (d_.input_gate && input_suspended_for_testing(d_.vertex))) {
      // Back-pressured (or input suspended by a test): no data is read, but unaligned barriers are taken, so
      // the checkpoint does not wait for the output to drain (Flink runs priority events as mails).
      if (take_priority_events()) continue;
      wait_back_pressured(std::chrono::milliseconds(50));
      continue;
    }
    if (source_ != nullptr) {
      if (at_end_of_data_ || source_stopped_) {  // only mails now: checkpoint triggers, notifications, finish
        wait_idle(std::chrono::milliseconds(50));
        continue;
      }
      if (failure_armed(FailurePoint::kSource)) inject_failure(FailurePoint::kSource, source_, -1);
      InputStatus st = InputStatus::kMoreAvailable;
      for (int i = 0; i < kSourceBatch && st == InputStatus::kMoreAvailable; ++i) {
        st = source_->emit_next();
        // A mail (a checkpoint trigger above all) waits for one poll_next at most, however slow the reader is;
        // a due processing-time timer (periodic watermarks) for at most 16.
        if (mailbox_.has_mail()) break;
        if ((i & 15) == 15 && processing_time_->has_timers() &&
            *processing_time_->next_timer_ms() <= processing_time_->current_processing_time_ms()) {
          break;
        }
      }
      if (st == InputStatus::kEndOfInput) {
        source_->process_watermark(kMaxWatermark);  // the end of event time: every event-time timer fires
        if (!d_.batch_commit_after_stage && (!periodic_checkpoints() || !d_.checkpoints_after_tasks_finish)) {
          mailbox_.drain();  // e.g. an earlier checkpoint's notify-complete: its commit still happens
          return;
        }
        reach_end_of_data();
        flush_outputs();
        continue;
      }
      if (st == InputStatus::kNothingAvailable) {
        flush_outputs();  // an idle source must not hold back what it already produced
        wait_idle(source_->idle_wait_hint());
      }
    } else if (recovered_next_ < recovered_input_.size()) {
      process_recovered_input();  // restored input channel state goes before new input
    } else if (at_end_of_data_ && d_.batch_commit_after_stage) {
      wait_idle(std::chrono::milliseconds(50));  // only mails now: commit, finish
    } else if (!process_input()) {
      if (!d_.batch_commit_after_stage) {
        // Mails posted before the last end of partition run first: the cluster posts the final checkpoint's
        // notify-complete to every task before it tells the sources to finish, so it may still be queued here.
        mailbox_.drain();
        return;
      }
      reach_end_of_data();
      flush_outputs();
    }
  }
}

void StreamTask::run() {
  // Flink's task names on the thread's log lines: "<chain name> (2/4)#0" (subtask 2 of 4, attempt 0).
  log::ScopedLogContext log_context(
      d_.job_id, d_.job_graph != nullptr ? subtask_name(*d_.job_graph, d_.vertex, d_.subtask_index) + "#" +
                                               std::to_string(d_.attempt_number)
                                         : std::string());
  try {
    build_chain();
    open_chain();
    spdlog::debug("task running: {} operator(s) open, {} input channel(s), {} output(s)", chain_ops_.size(),
                  d_.input_gate != nullptr ? d_.input_gate->num_channels() : 0, d_.outputs.size());
    loop();
    if (cancelled_.load()) {
      close_chain();
      listener_->on_task_cancelled(d_.vertex, d_.subtask_index);
      return;
    }
    if (!at_end_of_data_ && !skip_end_input_.load()) end_chain();
    publish_state_sizes();
    close_chain_or_throw();
    for (auto& o : d_.outputs) o.partition->finish();
    spdlog::debug("task finished: its input ended and its operators closed");
    listener_->on_task_finished(d_.vertex, d_.subtask_index);
  } catch (const OperatorFailure& e) {
    fail(Status::user_function(e.what()));
  } catch (const StatusError& e) {
    fail(e.status());
  } catch (const std::exception& e) {
    fail(Status::internal(e.what()));
  }
}

void StreamTask::inject_failure(FailurePoint point, const StreamOperator* op, int64_t checkpoint_id) {
  auto message = d_.fault_injector->claim(point, d_.vertex, d_.subtask_index, d_.attempt_number, checkpoint_id);
  if (!message) return;  // another subtask took it first
  if (op != nullptr) throw OperatorFailure(op->info(), *message);
  throw std::runtime_error(*message);
}

void StreamTask::fail(const Status& cause) {
  if (!closed_) close_chain();
  for (auto& o : d_.outputs) o.partition->cancel();
  if (cancelled_.load()) {
    listener_->on_task_cancelled(d_.vertex, d_.subtask_index);
  } else {
    listener_->on_task_failed(d_.vertex, d_.subtask_index, cause.with_context("task " + name_));
  }
}

}  // namespace sluice::runtime
