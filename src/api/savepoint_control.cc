#include "sluice/api/savepoint_control.h"

#include "checkpoint/checkpoint_metadata.h"
#include "cluster/mini_cluster.h"
#include "cluster/savepoint_requests.h"

namespace sluice {
namespace {

checkpoint::SavepointFormatType format_type(SavepointFormat f) {
  return f == SavepointFormat::kNative ? checkpoint::SavepointFormatType::kNative
                                       : checkpoint::SavepointFormatType::kCanonical;
}

// The job's savepoint side. An empty target folder is the job's to judge: its execution.checkpointing.savepoint-dir,
// or a refusal naming that key.
Result<cluster::CheckpointingJobClient*> savepoint_side(JobClient& job, const char* what) {
  auto* c = dynamic_cast<cluster::CheckpointingJobClient*>(&job);
  if (c == nullptr) {
    return Status::failed_precondition(std::string(what) + " of job " + job.job_id().to_hex() +
                                       ": the job takes no savepoints (a BATCH job has no checkpoint coordinator)");
  }
  return c;
}

// Waits for the request `trigger_id` and returns its folder, or why it did not complete.
Result<std::string> await(const cluster::CheckpointingJobClient& c, const std::string& trigger_id, const char* what,
                          int64_t timeout_ms) {
  std::optional<cluster::SavepointRequestStatus> st = c.wait_savepoint(trigger_id, timeout_ms);
  if (!st) return Status::internal(std::string(what) + ": unknown trigger id " + trigger_id);
  switch (st->state) {
    case cluster::SavepointRequestStatus::State::kCompleted:
      return st->location;
    case cluster::SavepointRequestStatus::State::kFailed:
      return st->cause.is_ok() ? Status::internal(std::string(what) + " failed without a reason") : st->cause;
    case cluster::SavepointRequestStatus::State::kInProgress:
      break;
  }
  return Status::timeout(std::string(what) + " (trigger id " + trigger_id + ") still in progress after " +
                         std::to_string(timeout_ms) + " ms");
}

}  // namespace

Result<std::string> trigger_savepoint(JobClient& job, const std::string& target_dir, const SavepointOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(cluster::CheckpointingJobClient * c, savepoint_side(job, "savepoint"));
  SLUICE_ASSIGN_OR_RETURN(std::string trigger_id, c->trigger_savepoint(target_dir, format_type(options.format)));
  return await(*c, trigger_id, "savepoint", options.timeout_ms);
}

Result<std::string> stop_with_savepoint(JobClient& job, const std::string& target_dir, bool drain,
                                        const SavepointOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(cluster::CheckpointingJobClient * c, savepoint_side(job, "stop-with-savepoint"));
  SLUICE_ASSIGN_OR_RETURN(std::string trigger_id,
                          c->stop_with_savepoint(target_dir, drain, format_type(options.format)));
  return await(*c, trigger_id, "stop-with-savepoint", options.timeout_ms);
}

}  // namespace sluice
