// StreamTask's unaligned-checkpoint side (stream_task.h describes the behaviour): barriers that overtake queued
// output, the barrier handling that snapshots on the first barrier and collects input channel state, the
// alignment timeout, and processing the restored in-flight data before new input. Task thread only.
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

void StreamTask::handle_unaligned_barrier(int32_t channel, const CheckpointBarrier& barrier, int32_t overtaken_buffers) {
  const bool busy_any = unaligned_handler_->is_aligning() || unaligned_handler_->is_collecting();
  const bool busy = busy_any && unaligned_handler_->current_checkpoint() == barrier.id;
  const bool relevant = barrier.id > unaligned_handler_->last_handled() &&
                        !(busy_any && barrier.id < unaligned_handler_->current_checkpoint());
  if (relevant && !busy) {  // a new checkpoint starts here
    overtaken_stash_.clear();
    stash_checkpoint_ = barrier.id;
  }
  if (relevant && overtaken_buffers > 0) {
    // The data this barrier overtook is still queued right behind it: input channel state of this channel,
    // copied now (the task may not read it for a while, e.g. under back-pressure) and processed as usual later.
    std::vector<Buffer> copies;
    d_.input_gate->copy_overtaken(channel, overtaken_buffers, &copies);
    const size_t n = static_cast<size_t>(d_.input_gate->num_channels());
    auto& target = collecting_ == barrier.id ? input_state_ : overtaken_stash_;
    if (target.size() < n) target.resize(n);
    for (Buffer& b : copies) {
      target[static_cast<size_t>(channel)].push_back(checkpoint::ChannelStateBuffer{b.num_records, std::move(b.bytes)});
    }
  }
  const int64_t now_ms = d_.clock->now_ms();
  const bool unaligned_now = d_.unaligned.unaligned_at(barrier, now_ms);
  auto actions = unaligned_handler_->on_barrier(channel, barrier.id, unaligned_now, overtaken_buffers);
  if (relevant && !busy) {  // the handler started aligning (or snapshotted) this checkpoint
    alignment_start_ns_ = d_.clock->monotonic_ns();
    pending_barrier_ = barrier;
    const int64_t timeout_ms = d_.unaligned.aligned_checkpoint_timeout.count();
    alignment_timeout_at_ms_ = d_.unaligned.may_be_unaligned(barrier) && timeout_ms > 0
                                   ? barrier.timestamp_ms + timeout_ms + 1
                                   : INT64_MAX;
  }
  apply_unaligned_actions(actions);
}

void StreamTask::apply_unaligned_actions(const std::vector<BarrierAction>& actions) {
  for (const auto& a : actions) {
    switch (a.kind) {
      case BarrierAction::Kind::kNone:
        break;
      case BarrierAction::Kind::kBlockChannel:
        d_.input_gate->block_channel(a.channel);
        break;
      case BarrierAction::Kind::kTriggerCheckpoint: {
        // Unaligned: the time from the first barrier to the snapshot is (nearly) none, however full the buffers.
        const int64_t alignment_ms = (d_.clock->monotonic_ns() - alignment_start_ns_) / 1'000'000;
        CheckpointBarrier b = pending_barrier_;
        b.id = a.checkpoint;
        alignment_timeout_at_ms_ = INT64_MAX;
        perform_checkpoint(b, alignment_ms, a.unaligned);
        d_.input_gate->unblock_all();
        break;
      }
      case BarrierAction::Kind::kChannelStateComplete:
        if (collecting_ == a.checkpoint) complete_channel_state();
        break;
      case BarrierAction::Kind::kAbortCheckpoint:
        alignment_timeout_at_ms_ = INT64_MAX;
        if (collecting_ == a.checkpoint) drop_channel_state();
        // Only the stash of the aborted checkpoint (or an older one) goes: a newer barrier that aborted it has
        // already stashed what it overtook, and the trigger that follows in this same action list needs it.
        if (stash_checkpoint_ <= a.checkpoint) overtaken_stash_.clear();
        d_.input_gate->unblock_all();
        for (auto& o : d_.outputs) o.partition->broadcast_event(encode_cancel_marker(a.checkpoint));
        d_.checkpoint_responder->decline(d_.vertex, d_.subtask_index, a.checkpoint,
                                         Status::cancelled("barrier handling aborted (a newer checkpoint or a "
                                                           "cancellation marker arrived)"));
        break;
    }
  }
}

bool StreamTask::take_priority_events() {
  if (!unaligned_handler_ || !d_.input_gate) return false;
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
  if (alignment_timeout_at_ms_ != INT64_MAX && unaligned_handler_ && unaligned_handler_->is_aligning() &&
      d_.clock->now_ms() >= alignment_timeout_at_ms_) {
    alignment_timeout_at_ms_ = INT64_MAX;
    apply_unaligned_actions(unaligned_handler_->on_alignment_timeout());
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
