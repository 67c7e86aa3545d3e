// restart-strategy.type EXPONENTIAL-DELAY: the backoff grows by a multiplier with each restart, up to a cap,
// and resets after the job has run long enough without failing. Flink's
// ExponentialDelayRestartBackoffTimeStrategy with its 1.19+ semantics (FLINK-32895/33735).
//
// State: k, restart attempts since the last reset, and the time the pending/last restart was scheduled for.
// On a failure at time t:
//   - t <= scheduled restart time: the failure belongs to the failover already in progress; it is merged
//     (no new attempt, k unchanged, backoff = time left until the scheduled restart).
//   - t - scheduled restart time >= reset_backoff_threshold_ms (the job ran that long without a failure, or
//     this is the first failure): k = 0.
//   - backoff = clamp(b + jitter, initial_backoff_ms, max_backoff_ms) with b = initial x multiplier^k
//     (saturating) and jitter uniform in [-floor(b x jitter_factor), +floor(b x jitter_factor)]; the restart
//     is scheduled at t + backoff and k grows by 1.
//   - can_restart() while k <= attempts_before_reset_backoff.
// Timeline (initial 1s, multiplier 2, max 10s, no jitter), each failure right after the restart before it:
// backoffs 1s, 2s, 4s, 8s, 10s, 10s, ...; after a quiet hour (the threshold): 1s again.
// Jitter comes from a SplitMix64 generator seeded by the caller, so a seed replays the same backoffs.
// Thread-safety: none (see restart_strategy.h).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "restart/restart_strategy.h"

namespace sluice {

struct ExponentialDelayRestartConfig {
  int64_t initial_backoff_ms = 1'000;              // ...exponential-delay.initial-backoff, >= 1
  int64_t max_backoff_ms = 60'000;                 // ...exponential-delay.max-backoff, >= initial_backoff_ms
  double backoff_multiplier = 1.5;                 // ...exponential-delay.backoff-multiplier, > 1
  int64_t reset_backoff_threshold_ms = 3'600'000;  // ...exponential-delay.reset-backoff-threshold, >= 1
  double jitter_factor = 0.1;                      // ...exponential-delay.jitter-factor, in [0, 1]
  int32_t attempts_before_reset_backoff = std::numeric_limits<int32_t>::max();  // >= 1; max = unlimited

  // kInvalidArgument naming the option key when a value is out of range, or when initial > max backoff.
  Status validate() const;
};

class ExponentialDelayRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  // Precondition: config.validate() is ok (create_restart_strategy checks it). `jitter_seed` seeds the
  // jitter; equal seeds give equal backoff sequences.
  ExponentialDelayRestartBackoffTimeStrategy(const ExponentialDelayRestartConfig& config, uint64_t jitter_seed)
      : config_(config), rng_state_(jitter_seed) {}

  bool notify_failure(const Status& cause, int64_t now_ms) override;
  bool can_restart() const override { return attempt_ <= config_.attempts_before_reset_backoff; }
  int64_t backoff_time_ms() const override;
  std::string describe() const override;

  // Restart attempts since the last reset (k above).
  int64_t current_attempt() const { return attempt_; }

 private:
  int64_t next_backoff_ms();
  uint64_t next_random();                    // SplitMix64
  int64_t uniform_jitter(int64_t offset_ms);  // uniform in [-offset_ms, offset_ms]

  ExponentialDelayRestartConfig config_;
  uint64_t rng_state_;
  int64_t attempt_ = 0;
  std::optional<int64_t> restart_at_ms_;  // when the latest restart is (was) scheduled; none before a failure
  int64_t last_failure_ms_ = 0;
};

}  // namespace sluice
