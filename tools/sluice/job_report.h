// What `sluice demo` and `sluice nexmark` share around a running job (the progress line is api/progress_line.h):
// seeded failure injection (--inject-failures), and the figures of the JSON summary and the closing lines (events per
// CPU-second, peak RSS, per-operator metrics, checkpoints, restarts, failures).
// Thread-safety: FailureInjector runs one thread, started and stopped by the caller's
// thread; the functions are called from the caller's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "batch/batch_job.h"
#include "cluster/mini_cluster.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/config/configuration.h"
#include "sluice/sluice.h"

namespace sluice::cli {

// Option validators with plain messages (CLI11's numeric ranges print 300-digit bounds): a whole number >= 1,
// a declared event rate in [1, 1e12] events/s, and a finite number of seconds > 0 (the --timeout of the commands
// that wait for a running job).
CLI::Validator whole_number_at_least_one();
CLI::Validator declared_rate_check();
CLI::Validator positive_seconds();

// Events the source emitted so far: the sum of numRecordsOut over the subtasks of the operator named
// `source_name` (scopes "<job>.<operator>.<subtask>").
int64_t source_events(const MetricRegistry& metrics, const std::string& source_name);

// Seeded failure injection: `failures` failures, each of a seeded class (runtime/fault_injection.h; every class
// once per round of five, in a seeded order), one after the other (each after the previous fired and the job
// restarted), at seeded points of the stream: event numbers spread over 10 % - 90 % of what the run has to
// emit (from `stream_start`, the events before a restored checkpoint, to `stream_events`). The Nexmark readers'
// `gate` (connectors/nexmark/nexmark_source.h; created closed, limit 0, by the caller) holds the stream at each
// point until its failure is armed and then lets it on only to the next point, so a failure never misses the
// stream's end however fast the job runs: a failure of a record-bound class (source, keyed operator, sink) has
// records in front of it, and one bound to a checkpoint fires at a checkpoint taken before the next point. A
// between-sync-and-async-snapshot failure goes to a seeded vertex < `snapshot_vertices` (0: any vertex).
// The gate is open again when the injector stops, when the last failure is armed, and when a point is not
// reached within 30 s of the sources emitting nothing (the failure is then reported as not injected).
class FailureInjector {
 public:
  struct Options {
    int32_t failures = 0;
    uint64_t seed = 1;
    int64_t stream_events = 0;
    int32_t parallelism = 1;
    int32_t snapshot_vertices = 0;
    std::string source_name;
    std::shared_ptr<nexmark::NexmarkEmitGate> gate;  // required
    int64_t stream_start = 0;
  };
  FailureInjector(JobClient& client, cluster::CheckpointingJobClient& cp_client, Options options);
  ~FailureInjector() { stop(); }
  // Stops arming (the job ended), opens the gate and joins the thread.
  void stop();
  // at_events()[i]: source events (replays included) emitted when failure i was armed. Read after stop().
  const std::vector<int64_t>& at_events() const { return at_events_; }

 private:
  std::atomic<bool> done_{false};
  std::shared_ptr<nexmark::NexmarkEmitGate> gate_;
  std::vector<int64_t> at_events_;
  std::thread thread_;
};

// The summary of a run: every field of a job's summary (api/job_summary.h), and events (the caller's count),
// stream_events, source_records_emitted, source_records_replayed, events_per_s, events_per_cpu_s, parallelism; with
// checkpointing also failures_injected and failures_by_class (BATCH: api/job_summary.h has them).
struct RunFigures {
  const JobExecutionResult* result = nullptr;
  JobClient* client = nullptr;
  cluster::CheckpointingJobClient* cp_client = nullptr;  // nullptr: no checkpointing
  int64_t events = 0;
  int64_t stream_events = 0;
  int64_t emitted = 0;
  int32_t parallelism = 0;
  std::vector<int64_t> failures_at_events;
};
void add_run_summary(nlohmann::json& summary, const RunFigures& figures);
// --inject-failures in BATCH: `count` failures armed at once, alternately in a source task (stage 0) and a keyed
// task (a later stage), each on a subtask drawn from `seed`; each re-runs its stage.
void arm_batch_failures(batch::BatchJobClient& client, int32_t count, uint64_t seed, int32_t parallelism);

// "EXACTLY_ONCE", "AT_LEAST_ONCE" or "none"; and how barriers are handled, for the text output.
std::string checkpointing_mode_name(const Configuration& config);
std::string barrier_handling(const Configuration& config);

// "failures injected: k of K (...)" and a line per failure (nothing unless failures were asked for).
void print_failures(const nlohmann::json& summary, int32_t inject_failures);
// "checkpoints: ...; restarts; restored from" and the checkpointing-mode line.
void print_checkpoints(const nlohmann::json& summary, const Configuration& config, bool has_checkpointing_client);
// "summary: N <what> in T s = R events/s, E events per CPU-second, peak RSS M MiB<suffix>".
void print_summary_line(const nlohmann::json& summary, const std::string& what, const char* suffix);

}  // namespace sluice::cli
