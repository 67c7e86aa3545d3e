#include "checkpoint/completed_checkpoint_store.h"

#include <algorithm>
#include <utility>

namespace sluice::checkpoint {

CompletedCheckpointStore::CompletedCheckpointStore(int32_t num_retained) : num_retained_(num_retained) {}

Result<RetentionDecision> CompletedCheckpointStore::add(CompletedCheckpoint checkpoint) {
  SLUICE_ASSIGN_OR_RETURN(RetentionDecision d, decide_retention(infos(), checkpoint.info(), num_retained_));
  checkpoints_.push_back(std::move(checkpoint));
  std::erase_if(checkpoints_, [&d](const CompletedCheckpoint& c) {
    return std::find(d.subsumed.begin(), d.subsumed.end(), c.metadata.checkpoint_id) != d.subsumed.end();
  });
  return d;
}

const CompletedCheckpoint* CompletedCheckpointStore::latest_checkpoint() const {
  for (auto it = checkpoints_.rbegin(); it != checkpoints_.rend(); ++it) {
    if (it->metadata.type == SnapshotType::kCheckpoint) return &*it;
  }
  return nullptr;
}

std::vector<RetainedCheckpointInfo> CompletedCheckpointStore::infos() const {
  std::vector<RetainedCheckpointInfo> out;
  out.reserve(checkpoints_.size());
  for (const CompletedCheckpoint& c : checkpoints_) out.push_back(c.info());
  return out;
}

Status discard_checkpoints(CheckpointStorage& storage, const std::vector<CheckpointId>& ids, CheckpointId claimed_id,
                           const std::string& claimed_location) {
  Status first;
  for (CheckpointId id : ids) {
    const bool claimed = claimed_id.value() > 0 && id == claimed_id && !claimed_location.empty();
    Status st = claimed ? storage.discard_location(claimed_location) : storage.discard(id);
    if (!st.is_ok() && first.is_ok()) first = st.with_context("discarding checkpoint " + std::to_string(id.value()));
  }
  return first;
}

Result<JobEndCleanup> cleanup_on_job_end(CompletedCheckpointStore& store, CheckpointStorage& storage,
                                         ExternalizedCheckpointRetention mode, JobTerminalStatus status,
                                         const std::function<void(const std::vector<CheckpointId>&)>& after_discard) {
  JobEndCleanup out;
  out.deleted = checkpoints_to_delete_on_job_end(store.infos(), mode, status);
  CheckpointId claimed_id(0);
  std::string claimed_location;
  for (const CompletedCheckpoint& c : store.checkpoints()) {
    if (std::find(out.deleted.begin(), out.deleted.end(), c.metadata.checkpoint_id) == out.deleted.end()) {
      out.kept.push_back(c.metadata.checkpoint_id);
    } else if (c.claimed) {
      claimed_id = c.metadata.checkpoint_id;
      claimed_location = c.location;
    }
  }
  store.clear();
  Status discarded = discard_checkpoints(storage, out.deleted, claimed_id, claimed_location);
  if (after_discard) after_discard(out.deleted);
  SLUICE_RETURN_IF_ERROR(discarded.with_context(std::string("cleaning up checkpoints of a job that ended ") +
                                                std::string(to_string(status))));
  if (should_delete_on_job_end(mode, status)) {
    SLUICE_ASSIGN_OR_RETURN(out.job_dir_removed, storage.remove_job_dir_if_empty());
  }
  return out;
}

}  // namespace sluice::checkpoint
