// The REST endpoint and job-registry entry of a running job: the wiring between the job's JobClient and src/rest
// (docs/rest-api.md). StreamExecutionEnvironment::execute() gives every program one; `sluice demo` and
// `sluice nexmark` use it around execute_async(). Internal to the library (not installed for programs to include).
//
// Use: open() before submitting (binds rest.bind-address:rest.port, so a bad value fails before the job runs),
// describe() before execute_async() (which consumes the program), serve() once the job is submitted, close() as
// soon as wait() returned and before the JobClient goes away (unregisters, then stops the endpoint).
// Thread-safety: one thread calls these; the REST server's threads use the job through its JobClient.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "sluice/api/environment.h"
#include "sluice/api/job_client.h"
#include "sluice/config/configuration.h"
#include "sluice/core/status.h"

namespace sluice::api {

class JobEndpoint {
 public:
  // kIoError / kInvalidArgument when the endpoint cannot be bound (the message names rest.* keys).
  static Result<std::unique_ptr<JobEndpoint>> open(const Configuration& config);
  ~JobEndpoint();

  // Records the job's name (pipeline.name if configured, else `job_name`, as execute_async names it), its
  // vertices and max parallelism, from the program in `env`.
  void describe(const StreamExecutionEnvironment& env, const std::string& job_name);
  // Serves the submitted job and registers it in the per-user job registry (a warning on stderr if that fails;
  // the job runs anyway).
  void serve(JobClient& client);
  // The job's REST address once served: http://<rest.address>:<port>/jobs/<job id>.
  std::string url() const;
  // Unregisters and stops the endpoint, after waiting (5 s at most) until the outcome of every savepoint and stop
  // request it accepted was read. Idempotent.
  void close();

  // True once a PATCH /jobs/:jobid?mode=cancel (`sluice cancel`) asked the job to cancel.
  bool cancelled_by_request() const { return cancel_requested_->load(); }
  // The savepoint folder when a POST /jobs/:jobid/stop (`sluice stop`) stopped the job; nullopt otherwise (no
  // stop request, or it failed). Call once the job ended.
  std::optional<std::string> stopped_with_savepoint() const;

 private:
  struct State;
  explicit JobEndpoint(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  std::shared_ptr<std::atomic<bool>> cancel_requested_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace sluice::api
