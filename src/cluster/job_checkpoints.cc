#include "cluster/job_checkpoints.h"

#include <chrono>

#include <spdlog/spdlog.h>

namespace sluice::cluster {

JobCheckpoints::JobCheckpoints(std::string job_name, std::shared_ptr<checkpoint::CheckpointStorage> storage,
                               int32_t num_retained, checkpoint::ExternalizedCheckpointRetention retention)
    : job_name_(std::move(job_name)), storage_(std::move(storage)), retention_(retention),
      shared_registry_(std::make_shared<coordinator::SharedStateRegistry>()), store_(num_retained) {}

Result<RestorePoint> JobCheckpoints::add_restored(const checkpoint::CheckpointMetadata& metadata,
                                                  const std::string& location, bool claim) {
  std::lock_guard lock(store_mu_);
  SLUICE_RETURN_IF_ERROR(store_.add(checkpoint::CompletedCheckpoint{metadata, location, claim, claim}).status());
  if (claim) {
    claimed_id_ = metadata.checkpoint_id;
    claimed_location_ = location;
  }
  std::vector<std::string> files;
  for (const std::string& f : metadata.shared_files()) {
    if (auto rebased = storage_->rebase_shared_path(location, f)) files.push_back(*rebased);
  }
  shared_registry_->register_files(metadata.checkpoint_id, files,
                                   claim ? coordinator::SharedStateRegistry::Ownership::kOwned
                                         : coordinator::SharedStateRegistry::Ownership::kNotOwned);
  return RestorePoint{metadata, location, claim};
}

void JobCheckpoints::on_checkpoint_completed(const checkpoint::CheckpointMetadata& metadata,
                                             const std::string& location) {
  std::lock_guard lock(store_mu_);
  auto decision = store_.add(checkpoint::CompletedCheckpoint{metadata, location, true});
  if (!decision.is_ok()) {
    spdlog::warn("job {}: completed checkpoint store: {}", job_name_, decision.status().to_string());
    return;
  }
  Status s = checkpoint::discard_checkpoints(*storage_, decision->to_discard, claimed_id_, claimed_location_);
  if (!s.is_ok()) spdlog::warn("job {}: discarding subsumed checkpoints: {}", job_name_, s.to_string());
  release_shared_files(decision->subsumed);
}

std::optional<RestorePoint> JobCheckpoints::latest() const {
  std::lock_guard lock(store_mu_);
  const checkpoint::CompletedCheckpoint* latest = store_.latest_checkpoint();
  if (!latest) return std::nullopt;
  return RestorePoint{latest->metadata, latest->location, latest->owned};
}

int64_t JobCheckpoints::latest_checkpoint_id() const {
  std::lock_guard lock(store_mu_);
  const checkpoint::CompletedCheckpoint* latest = store_.latest_checkpoint();
  return latest ? static_cast<int64_t>(latest->metadata.checkpoint_id.value()) : -1;
}

Status JobCheckpoints::check_restore_point(const std::optional<RestorePoint>& fallback, const Status& cause) const {
  std::optional<RestorePoint> next = latest();
  if (!next) next = fallback;
  if (!next) return Status::ok();
  const bool may_be_damage = cause.code() == StatusCode::kCorruption || cause.code() == StatusCode::kNotFound ||
                             cause.code() == StatusCode::kIOError;
  Status st = storage_->check_restore_files(
      next->location, next->metadata,
      may_be_damage ? checkpoint::RestoreFileCheck::kChecksums : checkpoint::RestoreFileCheck::kSizes);
  // Only a file that is missing or differs from the record condemns the checkpoint; an unreadable one may be a
  // passing I/O problem.
  if (st.code() != StatusCode::kCorruption && st.code() != StatusCode::kNotFound) return Status::ok();
  return st.with_context("checkpoint " + std::to_string(next->metadata.checkpoint_id.value()) + " (" +
                         next->location + ")");
}

void JobCheckpoints::cleanup_on_job_end(checkpoint::JobTerminalStatus status) {
  std::lock_guard lock(store_mu_);
  auto cleanup = checkpoint::cleanup_on_job_end(
      store_, *storage_, retention_, status,
      [this](const std::vector<CheckpointId>& deleted) { release_shared_files(deleted); });
  if (!cleanup.is_ok()) {
    spdlog::warn("job {}: checkpoint cleanup at job end: {}", job_name_, cleanup.status().to_string());
    return;
  }
  if (status == checkpoint::JobTerminalStatus::kFailedUnusableRestorePoint && !cleanup->kept.empty()) {
    spdlog::warn("job {}: keeping all {} retained checkpoint(s), whatever "
                 "execution.checkpointing.externalized-checkpoint-retention ({}) says: the job failed because the "
                 "checkpoint it restores is missing a file or damaged",
                 job_name_, cleanup->kept.size(), checkpoint::to_string(retention_));
  }
  // Whatever was kept, a job folder this run created and never wrote a checkpoint into holds nothing to keep.
  if (!cleanup->job_dir_removed) remove_job_folder_if_empty();
}

void JobCheckpoints::record_finished_restore(const std::string& restored_location) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  Status st = storage_->record_finished_restore(restored_location, now_ms);
  if (!st.is_ok()) {
    spdlog::warn("job {}: recording that it finished after restoring {}: {} (`--restore latest` may pick that "
                 "checkpoint again)",
                 job_name_, restored_location, st.to_string());
  }
}

void JobCheckpoints::remove_job_folder_if_empty() {
  auto removed = storage_->remove_job_dir_if_empty();
  if (!removed.is_ok()) {
    spdlog::warn("job {}: removing its empty checkpoint folder: {}", job_name_, removed.status().to_string());
  }
}

void JobCheckpoints::release_shared_files(const std::vector<CheckpointId>& ids) {
  for (CheckpointId id : ids) {
    std::vector<std::string> files = shared_registry_->release(id);
    if (files.empty()) continue;
    Status s = storage_->discard_shared_files(files);
    if (!s.is_ok()) {
      spdlog::warn("job {}: deleting shared state files of checkpoint {}: {}", job_name_, id.value(), s.to_string());
    }
  }
}

void JobCheckpoints::acknowledge(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask,
                                 std::map<std::string, checkpoint::OperatorSubtaskState> state,
                                 runtime::SubtaskSnapshotStats stats) {
  coordinator::SubtaskCheckpointStats s;
  s.sync_duration_ms = stats.sync_duration_ms;
  s.async_duration_ms = stats.async_duration_ms;
  s.alignment_duration_ms = stats.alignment_duration_ms;
  s.start_delay_ms = stats.start_delay_ms;
  s.state_size_bytes = static_cast<uint64_t>(stats.state_size_bytes);
  s.checkpointed_size_bytes = static_cast<uint64_t>(stats.checkpointed_size_bytes);
  s.persisted_data_bytes = static_cast<uint64_t>(stats.persisted_data_bytes);
  s.unaligned = stats.unaligned;
  coordinator_->acknowledge(id, vertex, subtask, std::move(state), s);
}

void JobCheckpoints::decline(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask, const Status& reason) {
  coordinator_->decline(id, vertex, subtask, reason);
}

}  // namespace sluice::cluster
