// StreamTask's unaligned-checkpoint side (stream_task.h describes the behaviour): barriers that overtake queued
// output, input channel state (what priority barriers overtook, what arrives before each channel's barrier; the
// decisions are UnalignedBarrierHandler's), the alignment timeout, and processing the restored in-flight data
// before new input. Task thread only.
#include <climits>
#include <stdexcept>

#include "runtime/stream_task.h"

namespace sluice::runtime {

void StreamTask::emit_barrier(const CheckpointBarrier& barrier, bool unaligned) {
  const RuntimeEvent event = encode_barrier(barrier);
  const int64_t promote_at_ms = d_.unaligned.promote_at_ms(barrier);
  for (size_t oi = 0; oi < d_.outputs.size(); ++oi) {
    ResultPartition& p = *d_.outputs[oi].partition;
    if (!holds_channel_state(d_.outputs[oi].edge->partitioning) || !d_.unaligned.may_be_unaligned(barrier)) {
      p.broadcast_event(event);  // forward and broadcast edges: in order, behind the data (aligned)
      continue;
    }
    for (int32_t sp = 0; sp < p.num_subpartitions(); ++sp) {
      if (!unaligned) {
        p.enqueue_event(sp, event, promote_at_ms);  // may overtake later, once the alignment timeout passed
        continue;
      }
      std::vector<Buffer> overtaken;
      p.enqueue_priority_event(sp, event, &overtaken);
      if (overtaken.empty()) continue;
      checkpoint::OutputChannelState out{static_cast<int32_t>(oi), sp, {}};
      out.buffers.reserve(overtaken.size());
      for (Buffer& b : overtaken) out.buffers.push_back(checkpoint::ChannelStateBuffer{b.num_records, std::move(b.bytes)});
      channel_state_.outputs.push_back(std::move(out));
    }
  }
}

void StreamTask::persist_overtaken(int32_t channel, CheckpointId checkpoint, int32_t buffers) {
  // The data the barrier overtook is still queued right behind it: input channel state of this channel, copied
  // now (the task may not read it for a while, e.g. under back-pressure) and processed as usual later. Before the
  // snapshot it waits in the stash, which holds one checkpoint's copies at a time.
  std::vector<Buffer> copies;
  d_.input_gate->copy_overtaken(channel, buffers, &copies);
  if (collecting_ != checkpoint && stash_checkpoint_ != checkpoint) {
    overtaken_stash_.clear();
    stash_checkpoint_ = checkpoint;
  }
  const size_t n = static_cast<size_t>(d_.input_gate->num_channels());
  auto& target = collecting_ == checkpoint ? input_state_ : overtaken_stash_;
  if (target.size() < n) target.resize(n);
  for (Buffer& b : copies) {
    target[static_cast<size_t>(channel)].push_back(checkpoint::ChannelStateBuffer{b.num_records, std::move(b.bytes)});
  }
}

bool StreamTask::take_priority_events() {
  if (!barriers_overtake_ || !d_.input_gate) return false;
  // Restored input channel state precedes everything in the gate, barriers included: a snapshot before it is
  // processed would lose it.
  if (recovered_next_ < recovered_input_.size()) return false;
  bool any = false;
  while (auto event = d_.input_gate->poll_priority_event()) {
    any = true;
    handle_event(event->channel_index, event->event(), event->overtaken_buffers);
  }
  return any;
}

void StreamTask::drop_channel_state() {
  subtask_checkpointing_->abort_channel_state(collecting_);
  collecting_ = CheckpointId(0);
  channel_state_ = checkpoint::SubtaskChannelState{};
  input_state_.clear();
}

void StreamTask::complete_channel_state() {
  if (collecting_.value() == 0) return;
  checkpoint::SubtaskChannelState state = std::move(channel_state_);
  for (size_t c = 0; c < input_state_.size(); ++c) {
    if (!input_state_[c].empty()) {
      state.inputs.push_back(checkpoint::InputChannelState{static_cast<int32_t>(c), std::move(input_state_[c])});
    }
  }
  subtask_checkpointing_->complete_channel_state(collecting_, std::move(state));
  collecting_ = CheckpointId(0);
  channel_state_ = checkpoint::SubtaskChannelState{};
  input_state_.clear();
}

// Once per loop turn: cheap unless a checkpoint is aligning with a timeout or a promotable barrier is queued.
void StreamTask::check_alignment_deadlines() {
  const int64_t timeout_at_ms = barrier_handler_ ? barrier_handler_->alignment_timeout_at_ms() : INT64_MAX;
  if (timeout_at_ms != INT64_MAX && d_.clock->now_ms() >= timeout_at_ms) {
    apply_barrier_actions(barrier_handler_->on_alignment_timeout());
  }
  if (d_.input_gate && d_.input_gate->next_promotion_ms() != INT64_MAX) {
    const int64_t now_ms = d_.clock->now_ms();
    if (now_ms >= d_.input_gate->next_promotion_ms()) d_.input_gate->promote_due_events(now_ms);
  }
}

void StreamTask::restore_input_channel_state() {
  if (!d_.restored_channel_state) return;
  checkpoint::SubtaskChannelState& st = *d_.restored_channel_state;
  // The cluster moves every in-flight record to the consumer (cluster/channel_state_assignment.h): nothing is
  // re-sent on an output, so output channel state here is a bug, never data to drop silently.
  if (!st.outputs.empty()) {
    throw std::runtime_error("task " + name_ + ": the restored channel state holds output data, which the cluster "
                             "assigns to the consuming subtasks");
  }
  for (auto& in : st.inputs) {
    if (!d_.input_gate || in.channel < 0 || in.channel >= d_.input_gate->num_channels()) {
      throw std::runtime_error("task " + name_ + ": the restored channel state holds data for input channel " +
                               std::to_string(in.channel) + ", which this task does not have");
    }
    for (auto& b : in.buffers) {
      recovered_input_.push_back(std::move(b));
      recovered_channel_.push_back(in.channel);
    }
  }
  d_.restored_channel_state.reset();
}

bool StreamTask::process_recovered_input() {
  if (recovered_next_ >= recovered_input_.size()) return false;
  const int32_t channel = recovered_channel_[recovered_next_];
  checkpoint::ChannelStateBuffer& b = recovered_input_[recovered_next_++];
  // The input the channel feeds: a two-input task's channel state goes back to the input it was taken from.
  auto n = inputs_[channel_input_[static_cast<size_t>(channel)]].deserializer->deserialize_buffer(b.bytes.data(),
                                                                                               b.bytes.size());
  if (!n.is_ok()) {
    throw StatusError(n.status().with_context("task " + name_ + ", restored input channel state"));
  }
  b.bytes = {};
  if (recovered_next_ == recovered_input_.size()) {
    recovered_input_ = {};
    recovered_channel_ = {};
    recovered_next_ = 0;
  }
  return true;
}

}  // namespace sluice::runtime
