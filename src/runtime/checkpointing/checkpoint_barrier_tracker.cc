#include "runtime/checkpointing/checkpoint_barrier_tracker.h"

namespace sluice::runtime {

using Kind = BarrierAction::Kind;

CheckpointBarrierTracker::CheckpointBarrierTracker(int32_t num_channels)
    : num_channels_(num_channels), finished_(static_cast<size_t>(num_channels), false) {}

bool CheckpointBarrierTracker::complete(const Pending& p) const {
  if (p.aborted) return false;
  for (size_t c = 0; c < finished_.size(); ++c)
    if (!finished_[c] && !p.received[c]) return false;
  return true;
}

void CheckpointBarrierTracker::trigger_completed(std::vector<BarrierAction>& actions) {
  size_t newest = pending_.size();
  for (size_t i = pending_.size(); i-- > 0;) {
    if (complete(pending_[i])) {
      newest = i;
      break;
    }
  }
  if (newest == pending_.size()) return;
  for (size_t i = 0; i < newest; ++i) {
    // Already cancelled ones were reported when the marker came.
    if (!pending_[i].aborted) actions.push_back(BarrierAction{Kind::kAbortCheckpoint, -1, pending_[i].id});
  }
  const Pending& p = pending_[newest];
  last_handled_ = p.id;
  last_trigger_first_barrier_ns_ = p.first_barrier_ns;
  last_triggered_barrier_ = p.barrier;
  BarrierAction trigger{Kind::kTriggerCheckpoint, -1, p.id};
  trigger.barrier = p.barrier;
  trigger.first_barrier_ns = p.first_barrier_ns;
  actions.push_back(trigger);
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(newest) + 1);
}

std::vector<BarrierAction> CheckpointBarrierTracker::on_barrier(int32_t channel, const CheckpointBarrier& barrier,
                                                               int64_t now_ns) {
  std::vector<BarrierAction> actions;
  const CheckpointId id = barrier.id;
  if (id <= last_handled_) return actions;  // triggered, aborted or subsumed already
  auto c = static_cast<size_t>(channel);
  auto it = pending_.begin();
  while (it != pending_.end() && it->id < id) ++it;
  if (it == pending_.end() || it->id != id) {
    Pending p;
    p.id = id;
    p.barrier = barrier;
    p.received.assign(static_cast<size_t>(num_channels_), false);
    p.first_barrier_ns = now_ns;
    it = pending_.insert(it, std::move(p));
    if (pending_.size() > kMaxPending) {
      // Too many at once: give up the oldest (it would most likely be subsumed anyway).
      Pending& oldest = pending_.front();
      if (!oldest.aborted) actions.push_back(BarrierAction{Kind::kAbortCheckpoint, -1, oldest.id});
      if (oldest.id > last_handled_) last_handled_ = oldest.id;
      const bool was_new = oldest.id == id;
      pending_.pop_front();
      if (was_new) return actions;
      it = pending_.begin();
      while (it->id != id) ++it;
    }
  }
  it->received[c] = true;
  trigger_completed(actions);
  return actions;
}

std::vector<BarrierAction> CheckpointBarrierTracker::on_cancellation_marker(CheckpointId id) {
  std::vector<BarrierAction> actions;
  if (id <= last_handled_) return actions;
  bool found = false;
  for (auto& p : pending_) {
    if (p.id > id) break;
    if (p.id == id) found = true;
    if (!p.aborted) {
      p.aborted = true;
      actions.push_back(BarrierAction{Kind::kAbortCheckpoint, -1, p.id});
    }
  }
  // Older ones and id itself end here; ids in between that never had a barrier are simply never pending.
  while (!pending_.empty() && pending_.front().id <= id) pending_.pop_front();
  if (!found) actions.push_back(BarrierAction{Kind::kAbortCheckpoint, -1, id});
  last_handled_ = id;
  return actions;
}

std::vector<BarrierAction> CheckpointBarrierTracker::on_channel_finished(int32_t channel) {
  std::vector<BarrierAction> actions;
  auto c = static_cast<size_t>(channel);
  if (finished_[c]) return actions;
  finished_[c] = true;
  trigger_completed(actions);
  return actions;
}

bool CheckpointBarrierTracker::channel_past_pending_barrier(int32_t channel) const {
  return pending_barrier_of(channel).value() != 0;
}

CheckpointId CheckpointBarrierTracker::pending_barrier_of(int32_t channel) const {
  auto c = static_cast<size_t>(channel);
  for (const auto& p : pending_)
    if (!p.aborted && p.received[c]) return p.id;
  return CheckpointId(0);
}

}  // namespace sluice::runtime
