#include "restart/restart_strategy.h"

namespace sluice {

bool NoRestartBackoffTimeStrategy::notify_failure(const Status& /*cause*/, int64_t /*now_ms*/) { return true; }

bool is_restartable_failure(const Status& cause) { return restart_can_help(classify_failure(cause)); }

RestartDecision decide_restart(RestartBackoffTimeStrategy& strategy, const Status& cause, int64_t now_ms,
                               const Status& restore_files, IdenticalFailureCounter* identical,
                               int64_t latest_checkpoint_id) {
  RestartDecision decision;
  const FailureClass failure_class = classify_failure(cause);
  if (!restart_can_help(failure_class)) {
    decision.reason = "the failure cannot be fixed by a restart (" + std::string(failure_class_name(failure_class)) +
                      "): " + cause.to_string();
    return decision;
  }
  if (!restore_files.is_ok()) {
    const char* what = restore_files.code() == StatusCode::kNotFound ? "is missing a file" : "is damaged";
    decision.reason = std::string("the checkpoint a restart would restore ") + what +
                      ", so no restart can succeed (" + restore_files.to_string() + ")";
    decision.unusable_restore_point = restore_files;
    return decision;
  }
  if (identical != nullptr) {
    const int32_t count = identical->record(cause, latest_checkpoint_id);
    if (identical->limit_reached()) {
      decision.reason = "the same failure happened " + std::to_string(count) +
                        " times in a row with no checkpoint completed between "
                        "(restart-strategy.max-identical-failures=" +
                        std::to_string(identical->max_identical()) + "), so a restart is not expected to help: " +
                        cause.to_string();
      return decision;
    }
  }
  decision.new_attempt = strategy.notify_failure(cause, now_ms);
  if (!strategy.can_restart()) {
    decision.reason = "the restart strategy allows no further restart: " + strategy.describe() +
                      "; last failure: " + cause.to_string();
    return decision;
  }
  decision.restart = true;
  decision.backoff_ms = strategy.backoff_time_ms();
  return decision;
}

Status job_failure(const RestartDecision& d, const Status& cause) {
  // Every reason already names the cause: as context it would say it twice.
  if (d.unusable_restore_point.is_ok()) return Status(cause.code(), d.reason);
  return Status(d.unusable_restore_point.code(),
                d.reason + "; the failure that asked for the restart: " + cause.to_string());
}

}  // namespace sluice
