// The REST endpoint of a running job, shaped like Flink's REST API (docs/rest-api.md):
//
//   GET   /jobs                        {"jobs":[{"id":..,"status":..}]}
//   GET   /jobs/:jobid                 name, state, start time, duration, max parallelism, vertices (each with
//                                      its subtasks, as below, and Flink's per-vertex `metrics`: read-records,
//                                      write-records, read-bytes, write-bytes and their -complete flags;
//                                      vertex_metrics.h)
//   GET   /jobs/:jobid/checkpoints     the checkpoint statistics (counts, summary, latest, history)
//   PATCH /jobs/:jobid?mode=cancel     cancels the job (202 Accepted)
//   POST  /jobs/:jobid/savepoints      {"target-directory", "cancel-job": false, "formatType": "CANONICAL"}
//                                      triggers a savepoint: 202 {"request-id": trigger id}
//   POST  /jobs/:jobid/stop            {"targetDirectory", "drain", "formatType"}: stop-with-savepoint, 202
//                                      {"request-id"}
//   GET   /jobs/:jobid/vertices/:vertexid  the vertex and its subtasks: index, attempt, host, TaskManager id
//   GET   /taskmanagers                {"taskmanagers":[{"id","path","host","dataPort","slotsNumber","freeSlots",
//                                      "timeSinceLastHeartbeat"}]}: the TaskManagers of the jobs served here
//   GET   /overview                    TaskManager and slot counts, jobs by state, "sluice-version"
//   GET   /metrics                     every job's metrics in Prometheus' text format, Flink's names and labels
//                                      (prometheus_text.h), each sample labelled with its job_id
//   GET   /jobs/:jobid/savepoints/:triggerid   {"status":{"id":"IN_PROGRESS"|"COMPLETED"}, "operation":
//                                      {"location": folder} or {"failure-cause": {...}}} (Flink's shape: a failed
//                                      request is COMPLETED with a failure cause)
//   GET   /jobs/:jobid/exceptions      the exception history (job_detail_json.h, as the views below)
//   GET   /jobs/:jobid/jobmanager/config   the job's configuration [{"key","value"}], secrets redacted
//   GET   /jobs/:jobid/vertices/:vertexid/backpressure   per subtask: back-pressured, idle and busy ratios, level
//   GET   /jobs/:jobid/vertices/:vertexid/watermarks     per subtask: the head's input and the last operator's
//                                      output watermark
//   GET   /jobs/:jobid/checkpoints/config                the checkpointing settings (404 without checkpointing)
//   GET   /jobs/:jobid/checkpoints/details/:checkpointid[/subtasks/:vertexid]   one checkpoint, or its subtasks
//   GET   /config, /jobs/overview      the dashboard's settings; every job with its state and task counts
//
// Errors come in Flink's shape, {"errors":["..."]}, with 400 (bad request), 404 (unknown job or path), 409
// (the job already ended or is not running), 501 (a format or option Sluice does not have). The server binds before the job is submitted (so a bad rest.port fails
// first) and serves the jobs added to it; a handful of worker threads answer requests, and the job's callbacks
// (RestJob) run on them.
//
// Thread-safety: add_job / remove_job / stop from any thread. The server must be stopped (or destroyed) before
// any RestJob it holds refers to something destroyed: remove_job() returns only once no request uses the job.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "rest/checkpoint_view.h"
#include "sluice/config/configuration.h"
#include "sluice/core/ids.h"
#include "sluice/core/status.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::rest {

// An input of a vertex: the vertex it reads and how records are sent to it (Flink's ship strategy: FORWARD, HASH,
// REBALANCE, ...).
struct RestVertexInput {
  int32_t source_vertex = 0;
  std::string ship_strategy;
};

// One vertex of the job graph (a chain of operators), as GET /jobs/:jobid lists it.
struct RestVertex {
  int32_t id = 0;
  std::string name;
  int32_t parallelism = 1;
  // Whose metrics make up the vertex's `metrics` (vertex_metrics.h): the chain's head, whose input is the vertex's
  // (empty for a source vertex, which reads no network input), and the operators whose output leaves the vertex.
  std::string input_operator = {};
  std::vector<std::string> output_operators = {};
  std::vector<std::string> operators = {};  // the chain's operator names, head first
  std::vector<RestVertexInput> inputs = {};  // the job edges into the vertex, in job-graph order
};

// The job's checkpointing settings, as GET /jobs/:jobid/checkpoints/config reports them (Flink's
// CheckpointConfigInfo; the keys are execution.checkpointing.*, docs/configuration.md).
struct RestCheckpointConfig {
  bool exactly_once = true;  // execution.checkpointing.mode
  int64_t interval_ms = 0;
  int64_t timeout_ms = 0;
  int64_t min_pause_ms = 0;
  int32_t max_concurrent = 1;
  bool externalized = false;              // externalized-checkpoint-retention is not NO_EXTERNALIZED_CHECKPOINTS
  bool delete_on_cancellation = false;    // ... is DELETE_ON_CANCELLATION
  std::string state_backend;              // Flink's class names: HashMapStateBackend, EmbeddedRocksDBStateBackend
  std::string checkpoint_storage;         // JobManagerCheckpointStorage, FileSystemCheckpointStorage
  bool unaligned = false;
  int32_t tolerable_failed_checkpoints = 0;
  int64_t aligned_checkpoint_timeout_ms = 0;
  bool checkpoints_after_tasks_finish = true;
};

// What does not change while the job runs.
struct RestJobOverview {
  JobId job_id;
  std::string name;
  int64_t start_time_ms = 0;  // wall clock, ms since the epoch (submission)
  int32_t max_parallelism = -1;  // -1: unknown
  std::vector<RestVertex> vertices;
  // nullopt when the job takes no periodic checkpoints.
  std::optional<RestCheckpointConfig> checkpoint_config = std::nullopt;
  int32_t parallelism = 1;  // parallelism.default as the job was built
  // The configuration keys the job set (config file, -D, the program), canonical key -> value, with the value of
  // every sensitive key (is_sensitive_key) replaced by "<redacted>".
  std::map<std::string, std::string> configuration = {};
};

// A failure of the job, as GET /jobs/:jobid/exceptions lists it (an entry of Flink's exception history).
struct RestException {
  int64_t timestamp_ms = 0;    // wall clock, ms since the epoch
  std::string exception_name;  // "sluice.<status code>"
  std::string stacktrace;      // the failure's text (Sluice keeps no stack trace)
  std::string task_name;       // "<vertex name> (i/n)"; empty when no one task failed (a redeployment)
  std::string location;        // the task's host; empty when unknown
  std::string task_manager_id;
};

// A TaskManager as GET /taskmanagers lists it (the MiniCluster reports itself as one).
struct RestTaskManager {
  std::string id;              // taskmanager.resource-id
  std::string host;            // taskmanager.host
  int32_t rpc_port = 0;        // its TaskExecutor's port; 0 in the MiniCluster (no RPC)
  int32_t data_port = 0;       // taskmanager.data.port as configured; 0: ephemeral per attempt, or none
  int32_t slots = 0;           // taskmanager.numberOfTaskSlots
  int32_t free_slots = 0;
  int64_t last_heartbeat_ms = 0;  // wall clock, ms since the epoch
};

// Where one subtask of the running attempt is deployed.
struct RestSubtask {
  int32_t vertex = 0;
  int32_t subtask = 0;  // 0-based, as Flink's REST API counts them
  int32_t attempt = 0;  // the job's attempt number: 0, then +1 per failover
  std::string host;
  std::string task_manager_id;
};

// A savepoint request as GET /jobs/:jobid/savepoints/:triggerid reports it.
struct RestSavepointStatus {
  bool in_progress = true;
  std::string location;  // completed: the savepoint folder
  Status failure;        // completed with a failure: why (ok otherwise)
};

// The job as the server sees it; implemented by whoever runs the job (the sluice tool over its JobClient).
// Called from the server's threads, concurrently: every method must be thread-safe.
class RestJob {
 public:
  virtual ~RestJob() = default;
  virtual const RestJobOverview& overview() const = 0;
  // Flink's JobStatus name: "RUNNING", "RESTARTING", "CANCELLING", "CANCELED", "FINISHED", ...
  virtual std::string state() const = 0;
  // The checkpoint statistics and restores; nullopt when checkpointing is off for the job.
  virtual std::optional<CheckpointView> checkpoint_view() const = 0;
  // Requests cancellation and returns at once (Flink's PATCH .../jobs/:jobid?mode=cancel).
  virtual void cancel() = 0;
  // Triggers a savepoint (into `target_dir`, or the job's execution.checkpointing.savepoint-dir when empty) and
  // returns its trigger id at once. kInvalidArgument (400) when no directory is known; kFailedPrecondition (409)
  // when the job cannot take one now (not running, checkpointing off).
  // `format`: Flink's formatType (CANONICAL, the default, or NATIVE).
  virtual Result<std::string> trigger_savepoint(const std::string& target_dir,
                                                checkpoint::SavepointFormatType format) = 0;
  // Stop-with-savepoint (`drain`: end the input first, so windows and timers fire); errors as trigger_savepoint.
  virtual Result<std::string> stop_with_savepoint(const std::string& target_dir, bool drain,
                                                  checkpoint::SavepointFormatType format) = 0;
  // nullopt for an unknown trigger id.
  virtual std::optional<RestSavepointStatus> savepoint_status(const std::string& trigger_id) = 0;
  // The TaskManagers the job can use, and where each subtask of its running attempt is (empty while none runs:
  // restarting, or after the end).
  virtual std::vector<RestTaskManager> task_managers() const = 0;
  virtual std::vector<RestSubtask> subtasks() const = 0;
  // Every metric of the job (MetricRegistry::snapshot: in cluster mode with what its TaskManagers reported), for
  // GET /metrics and the vertices' `metrics` of GET /jobs/:jobid.
  virtual std::vector<MetricValue> metrics() const = 0;
  // The failures that restarted the job (or a region of it) or failed it, newest first, at most the latest 16; and
  // how many there were in all.
  virtual std::vector<RestException> exceptions() const = 0;
  virtual int64_t num_exceptions() const = 0;
};

// rest.bind-address, rest.address and rest.port (docs/configuration.md).
struct RestServerConfig {
  std::string bind_address = "127.0.0.1";  // the interface the server listens on
  std::string address = "127.0.0.1";       // what clients are told to connect to (the registry entry)
  int32_t port = 0;                        // 0: an ephemeral port chosen by the kernel
};
// From the configuration: bind to rest.bind-address, else rest.address, else 127.0.0.1; advertise rest.address,
// else the bind address (127.0.0.1 for a wildcard bind). kInvalidArgument for a bad value.
Result<RestServerConfig> rest_server_config_of(const Configuration& config);

class RestServer {
 public:
  // Binds and starts serving (GET /jobs answers an empty list until add_job). kIoError when the address or port
  // cannot be bound (naming both).
  static Result<std::unique_ptr<RestServer>> start(const RestServerConfig& config);
  ~RestServer();  // stop()
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  int32_t port() const;  // the bound port (the ephemeral one when rest.port is 0)
  const RestServerConfig& config() const;

  void add_job(std::shared_ptr<RestJob> job);
  void remove_job(const JobId& job_id);
  // Stops accepting requests and waits for those in flight. Idempotent.
  void stop();

 private:
  struct Impl;
  explicit RestServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::rest
