// The routes of a job's REST endpoint (rest_server.h lists them) and the jobs they answer for, apart from the
// socket and the threads that carry the requests: everything that reads a request's path, query and body. RestServer
// installs them on its listening server; fuzz/rest_request_fuzzer.cc installs them on a server that reads raw
// requests from memory.
//
// Thread-safety: add_job, remove_job, clear and the installed handlers may run concurrently. The routes must outlive
// the server they are installed on.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "rest/rest_server.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace sluice::rest {

class RestRoutes {
 public:
  // Adds the routes to `server` (before it starts serving), with the guard of state-changing requests
  // (request_guard.h) in front of them.
  void install(httplib::Server& server);
  // The endpoint's rest.address, which the guard accepts as a Host name (default 127.0.0.1). Before install().
  void set_advertised_address(std::string address) { advertised_address_ = std::move(address); }

  void add_job(std::shared_ptr<RestJob> job);
  // Returns once no request uses the job.
  void remove_job(const JobId& job_id);
  void clear();

 private:
  // Runs `fn(job)` for the job named by the request's first match, under the shared lock; 404 if unknown.
  void with_job(const httplib::Request& req, httplib::Response& res, const std::function<void(RestJob&)>& fn);
  // The per-job views beyond the job itself (job_detail_routes.cc): exceptions, configuration, back-pressure,
  // watermarks, checkpoint details; and GET /config, /jobs/overview.
  void install_detail_routes(httplib::Server& server);
  // The TaskManagers of every job served, each once (by id), in the jobs' order.
  std::vector<RestTaskManager> task_managers();

  // Held shared by every request that uses a job, exclusively by remove_job: once that returns, no request
  // touches the removed job.
  std::shared_mutex jobs_mu_;
  std::map<std::string, std::shared_ptr<RestJob>> jobs_;  // by hex id
  std::string advertised_address_ = "127.0.0.1";
};

}  // namespace sluice::rest
