#include "cluster/stop_with_savepoint.h"

#include <spdlog/spdlog.h>

#include "fs/file_system.h"
#include "fs/path.h"
#include "checkpoint/savepoint_files.h"

namespace sluice::cluster {

Result<std::string> create_savepoint_folder(const std::string& target_dir, bool stop, const JobId& job_id,
                                            JobStatus status, const checkpoint::CheckpointStorage* storage,
                                            NameSource& names) {
  const std::string what = std::string(stop ? "stop-with-savepoint" : "savepoint") + " of job " + job_id.to_hex();
  if (storage == nullptr) {
    return Status::failed_precondition(what + ": the job has no checkpoint coordinator, which takes savepoints (a "
                                              "BATCH job takes none)");
  }
  if (target_dir.empty()) return checkpoint::no_savepoint_directory(what);
  if (status != JobStatus::kRunning) {
    return Status::failed_precondition(what + ": the job is " + job_status_name(status) + ", not RUNNING");
  }
  if (!storage->supports_savepoints()) {
    return Status::failed_precondition(what + ": checkpoint storage " + storage->describe() +
                                       " cannot write savepoints (set execution.checkpointing.dir)");
  }
  auto fsys = storage->file_system(target_dir);
  // The folder came from the request or from execution.checkpointing.savepoint-dir: name the folder, not a key.
  if (!fsys.is_ok()) return fsys.status().with_context(what + ": savepoint folder " + target_dir);
  auto folder = checkpoint::create_savepoint_dir(**fsys, target_dir, job_id, &names);
  if (!folder.is_ok()) return folder.status().with_context(what);
  return folder;
}

void remove_unused_savepoint_folder(const checkpoint::CheckpointStorage* storage, const std::string& folder) {
  if (storage == nullptr || folder.empty()) return;
  if (auto fsys = storage->file_system(folder); fsys.is_ok()) (void)(*fsys)->remove_all(folder);
}

void StopWithSavepoint::start(Request r, JobStatus status) {
  const bool running = status == JobStatus::kRunning;
  if (!running || stop_) {
    requests_.fail(r.trigger_id, Status::failed_precondition(
                                     stop_ ? "a stop-with-savepoint of this job is already in progress"
                                           : std::string("the job is ") + job_status_name(status) + ", not RUNNING"));
    remove_unused_savepoint_folder(storage_, r.folder);
    return;
  }
  spdlog::info("job {}: stop-with-savepoint{} into {}", job_name_, r.drain ? " (drain)" : "", r.folder);
  stop_ = std::move(r);
  coordinator_.stop_periodic_scheduling();
  const bool drain = stop_->drain;
  tasks_.with_tasks([drain](DeployedTasks& tasks) { tasks.stop_sources(drain); });
  // Without drain the savepoint's barriers follow the stop in every source's mailbox; with drain it is taken
  // once every task reached the end of its input (on_end_of_data).
  if (!drain) trigger_savepoint(running);
}

bool StopWithSavepoint::on_end_of_data(bool running) {
  if (!stop_ || !stop_->drain) return false;
  trigger_savepoint(running);
  return true;
}

void StopWithSavepoint::on_savepoint_complete(CheckpointId id, bool running) {
  // The sinks commit on the stop's savepoint (it completes only after their final commit), then every task ends.
  if (stop_ && id == stop_->savepoint && running) finish_tasks_after(id);
}

void StopWithSavepoint::on_savepoint_aborted(CheckpointId id, const Status& cause, bool running) {
  if (stop_ && id == stop_->savepoint) abandon(cause, running);
}

void StopWithSavepoint::on_failover(const Status& cause) {
  if (!stop_) return;
  requests_.fail(stop_->trigger_id, cause.with_context("stop-with-savepoint: the job failed over"));
  stop_.reset();
}

void StopWithSavepoint::on_job_end(bool finished) {
  if (stop_ && finished) requests_.finish_stop(stop_->trigger_id);
}

void StopWithSavepoint::trigger_savepoint(bool running) {
  auto id = coordinator_.trigger_savepoint(stop_->folder, stop_->format);
  if (!id.is_ok()) {
    abandon(id.status(), running);
    return;
  }
  stop_->savepoint = *id;
  requests_.bind(stop_->trigger_id, *id);
}

void StopWithSavepoint::abandon(const Status& cause, bool running) {
  spdlog::warn("job {}: stop-with-savepoint failed: {}", job_name_, cause.to_string());
  requests_.fail(stop_->trigger_id, cause.with_context("stop-with-savepoint"));
  const bool drain = stop_->drain;
  stop_.reset();
  if (!running) return;
  if (!drain) {
    tasks_.with_tasks([](DeployedTasks& tasks) { tasks.resume_sources(); });
  } else if (!coordinator_.config().periodic()) {
    // The input ended and no final checkpoint will come: the tasks end now (their sinks committed at the end of
    // their input, as without checkpointing).
    tasks_.with_tasks([](DeployedTasks& tasks) { tasks.finish(); });
    return;
  }
  coordinator_.start_periodic_scheduling();
}

// Every task commits up to `id`, then ends. All notifications are queued before any finish, so no task ends
// (ending the input of the next one) before every task has its notification.
void StopWithSavepoint::finish_tasks_after(CheckpointId id) {
  coordinator_.stop_periodic_scheduling();
  tasks_.with_tasks([id](DeployedTasks& tasks) {
    tasks.notify_checkpoint_complete(id);
    tasks.finish();
  });
}

}  // namespace sluice::cluster
