// ResourceManagerConnection: a TaskManager's link to its JobManager (Flink's TaskExecutor <-> ResourceManager
// connection). It registers (again and again until accepted, every `retry_interval_ms`), then heartbeats every
// heartbeat.interval the JobManager announced and holds a WatchConnection call open. The JobManager counts as lost
// - reported once through Listener::on_jobmanager_lost, after which the connection registers again - when
//   * the watch call ends (the JobManager's process or connection is gone, or it dropped this registration): at once;
//   * heartbeat.rpc-failure-threshold heartbeats in a row failed (each waits up to max(heartbeat.interval,
//     heartbeat.timeout / threshold) for its answer, so a slow answer is not a failure);
//   * no heartbeat succeeded for heartbeat.timeout (a JobManager that stopped answering);
//   * a heartbeat was refused: the registration is unknown (NOT_FOUND) or the leader epoch changed (ABORTED).
// When the JobManager's job ends, its last event says so: the connection stops and reports it through
// Listener::on_job_ended instead of registering again.
// A TaskManager that has had no registration for taskmanager.registration.timeout (no JobManager answers, e.g. the
// job ended while it was paused) gives up the same way.
// Metric reports: every heartbeat carries the values `task_metrics` returns (the metrics of the tasks this
// TaskManager runs for the job; proto MetricReport), so the JobManager's view is at most heartbeat.interval old;
// report_metrics_now() sends one at once (before a task reports FINISHED: its final figures).
// A refused registration (another Sluice release, another JobGraph, a malformed registration) cannot heal by
// retrying: the connection stops and reports it through Listener::on_refused.
//
// Thread-safety: start/stop from one thread; the listener is called from the connection's own thread, never two
// calls at once, and never after stop() returned.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/resource_manager.h"
#include "sluice/core/clock.h"
#include "sluice/core/status.h"
#include "sluice/metrics/metric_value.h"

namespace sluice::rpc {

struct ResourceManagerConnectionConfig {
  std::string jobmanager_address;  // "host:port": jobmanager.rpc.address and jobmanager.rpc.port
  cluster::TaskManagerRegistration registration;
  int64_t retry_interval_ms = 500;  // between registration attempts while no JobManager answers, > 0
  // taskmanager.registration.timeout (Flink's default 5 min): a TaskManager without a registration for this long
  // gives up, reported through Listener::on_refused (kTimeout). 0: it never gives up.
  int64_t registration_timeout_ms = 300'000;
  // The metrics each heartbeat reports; called on the heartbeat's thread (or report_metrics_now's), so it must not
  // block for long. Empty: heartbeats carry no report.
  std::function<std::vector<MetricValue>()> task_metrics = {};
};

class ResourceManagerConnection {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // Registered under `leader_epoch` as `registration_id`; heartbeats follow `heartbeats`. Called before the
    // connection watch opens (the JobManager offers the slots once it sees it); a watch that then fails to open is
    // reported through on_jobmanager_lost.
    virtual void on_registered(uint64_t leader_epoch, uint64_t registration_id,
                               const cluster::HeartbeatSettings& heartbeats) = 0;
    // The JobManager is lost (`reason` says how); the connection registers again.
    virtual void on_jobmanager_lost(const std::string& reason) = 0;
    // The JobManager refused the registration for good; the connection has stopped.
    virtual void on_refused(const Status& reason) = 0;
    // The JobManager's job ended in `job_status` (FINISHED, FAILED, CANCELED) and the JobManager with it; the
    // connection has stopped (application mode: the TaskManager process ends too).
    virtual void on_job_ended(const std::string& job_status) = 0;
  };

  // `listener` and `clock` must outlive the connection.
  ResourceManagerConnection(ResourceManagerConnectionConfig config, Listener* listener, const Clock* clock);
  ~ResourceManagerConnection();  // stop()

  void start();
  // Ends the watch call and the connection's thread; no listener call after it returns. Idempotent.
  void stop();
  // Sends a heartbeat with a metric report now, on the calling thread, and returns once it was answered (or after
  // at most 1 s). Nothing while not registered. Its failure does not count as a failed heartbeat: the periodic
  // heartbeats judge the JobManager's liveness. Any thread.
  void report_metrics_now();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::rpc
