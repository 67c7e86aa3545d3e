// CommittableCollector: the committables of one two-phase-commit sink subtask that are not committed yet, by the
// checkpoint that pre-committed them (Flink's sink2 CommittableCollector). Kept in the operator list state
// "pending-committables" as (checkpoint id, committable) pairs, split-distributed on a rescaled restore, and
// handed to the committer in checkpoint order. It does not depend on the sink's record type, so a sink's
// committable type is compiled once (see the explicit instantiations at the end of a connector's sink header)
// instead of once per record type.
// Thread-safety: the task thread only.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/state/operator_state_store.h"

namespace sluice::detail {

template <class CommT>
class CommittableCollector {
 public:
  // Registers the state in `store` and takes back what it restored. `restored`: the subtask restores from
  // checkpoint `restored_checkpoint_id` (ignored otherwise). Throws std::invalid_argument on a state of another type.
  void initialize(OperatorStateStore& store, bool restored, int64_t restored_checkpoint_id);
  // The committables pre-committed at checkpoint `checkpoint_id`'s barrier; writes every pending one to the state
  // (the checkpoint keeps them until it completes).
  void add_and_snapshot(int64_t checkpoint_id, std::vector<CommT> committables);
  // Removes and returns the pending committables of checkpoints <= `checkpoint_id`, oldest checkpoint first.
  std::vector<CommT> take_up_to(int64_t checkpoint_id);

  bool is_restored() const { return restored_; }
  // The restored committables, serialized (TypeSerializer<CommT>), for the writer to keep what they own.
  const std::vector<std::vector<uint8_t>>& restored_bytes() const { return restored_bytes_; }
  // The next checkpoint id the writer's data belongs to: the restored one + 1, then the last snapshot's + 1.
  int64_t next_checkpoint_id() const { return next_checkpoint_; }

 private:
  ListState<std::pair<int64_t, CommT>>* state_ = nullptr;
  std::map<int64_t, std::vector<CommT>> pending_;  // checkpoint id -> committables not committed yet
  std::vector<std::vector<uint8_t>> restored_bytes_;
  bool restored_ = false;
  int64_t next_checkpoint_ = 1;
};

// Defined outside the class: not inline, so a connector's explicit instantiation declaration keeps them out of
// the programs that use it.
template <class CommT>
void CommittableCollector<CommT>::initialize(OperatorStateStore& store, bool restored,
                                             int64_t restored_checkpoint_id) {
  state_ = &store.get_list_state(ListStateDescriptor<std::pair<int64_t, CommT>>("pending-committables"));
  restored_ = restored;
  if (restored_) next_checkpoint_ = restored_checkpoint_id + 1;
  for (auto& [id, c] : state_->get()) {
    pending_[id].push_back(c);
    restored_bytes_.push_back(serialize_bytes(c));
  }
}

template <class CommT>
void CommittableCollector<CommT>::add_and_snapshot(int64_t checkpoint_id, std::vector<CommT> committables) {
  auto& bucket = pending_[checkpoint_id];
  for (auto& c : committables) bucket.push_back(std::move(c));
  next_checkpoint_ = checkpoint_id + 1;
  std::vector<std::pair<int64_t, CommT>> all;
  for (const auto& [cid, cs] : pending_) {
    for (const auto& c : cs) all.emplace_back(cid, c);
  }
  state_->update(std::move(all));
}

template <class CommT>
std::vector<CommT> CommittableCollector<CommT>::take_up_to(int64_t checkpoint_id) {
  std::vector<CommT> batch;
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= checkpoint_id;) {
    for (auto& c : it->second) batch.push_back(std::move(c));
    it = pending_.erase(it);
  }
  return batch;
}

}  // namespace sluice::detail
