#include "restart/restart_strategy.h"

namespace sluice {

bool NoRestartBackoffTimeStrategy::notify_failure(const Status& /*cause*/, int64_t /*now_ms*/) { return true; }

bool is_restartable_failure(const Status& cause) { return cause.code() != StatusCode::kInvalidArgument; }

RestartDecision decide_restart(RestartBackoffTimeStrategy& strategy, const Status& cause, int64_t now_ms,
                               const Status& restore_files) {
  RestartDecision decision;
  if (!is_restartable_failure(cause)) {
    decision.reason = "the failure cannot be fixed by a restart (" + cause.to_string() + ")";
    return decision;
  }
  if (!restore_files.is_ok()) {
    decision.reason = "the checkpoint a restart would restore is damaged, so no restart can succeed (" +
                      restore_files.to_string() + ")";
    return decision;
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

}  // namespace sluice
