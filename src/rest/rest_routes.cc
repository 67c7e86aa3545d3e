#include "rest/rest_routes.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include <nlohmann/json.hpp>

#include "coordinator/checkpoint_stats_json.h"
#include "rest/checkpoint_stats_rest.h"
#include "rest/json_reply.h"
#include "rest/prometheus_text.h"
#include "rest/request_guard.h"
#include "rest/vertex_metrics.h"
#include "sluice/core/clock.h"
#include "sluice/core/log.h"
#include "sluice/core/version.h"

namespace sluice::rest {
namespace {

// The body of POST .../savepoints and .../stop (both optional; Flink's field names).
struct SavepointBody {
  std::string target_directory;
  bool cancel_job = false;
  bool drain = false;
  checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical;  // formatType
};

// Reads and checks the JSON body; false after answering 400 (malformed body, unknown format type).
bool read_savepoint_body(const httplib::Request& req, const httplib::ContentReader& reader, const char* dir_field,
                         httplib::Response& res, SavepointBody* out) {
  std::string text;
  reader([&](const char* data, size_t n) {
    text.append(data, n);
    return text.size() < 64 * 1024;
  });
  (void)req;
  if (text.empty()) return true;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    error(res, 400, "the request body is not a JSON object");
    return false;
  }
  auto string_field = [&](const char* name, std::string* v) {
    if (!j.contains(name) || j[name].is_null()) return true;
    if (!j[name].is_string()) return error(res, 400, std::string(name) + " must be a string"), false;
    *v = j[name].get<std::string>();
    return true;
  };
  auto bool_field = [&](const char* name, bool* v) {
    if (!j.contains(name) || j[name].is_null()) return true;
    if (!j[name].is_boolean()) return error(res, 400, std::string(name) + " must be true or false"), false;
    *v = j[name].get<bool>();
    return true;
  };
  std::string format = "CANONICAL";
  if (!string_field(dir_field, &out->target_directory) || !bool_field("cancel-job", &out->cancel_job) ||
      !bool_field("drain", &out->drain) || !string_field("formatType", &format)) {
    return false;
  }
  if (format == "NATIVE") {
    out->format = checkpoint::SavepointFormatType::kNative;
  } else if (format != "CANONICAL") {
    error(res, 400, "formatType '" + format + "': expected CANONICAL or NATIVE (Flink's SavepointFormatType)");
    return false;
  }
  return true;
}

// 202 {"request-id"} or the error: 400 for bad input, 409 when the job cannot take a savepoint now.
void answer_trigger(httplib::Response& res, const Result<std::string>& trigger_id) {
  if (trigger_id.is_ok()) return reply(res, 202, nlohmann::json{{"request-id", *trigger_id}});
  const StatusCode code = trigger_id.status().code();
  const int http = code == StatusCode::kInvalidArgument ? 400 : code == StatusCode::kFailedPrecondition ? 409 : 500;
  error(res, http, trigger_id.status().to_string());
}

// The subtasks of `vertex` in the running attempt (Flink's SubtaskExecutionAttemptDetailsInfo fields that Sluice
// knows: subtask, attempt, host, taskmanager-id).
nlohmann::json subtasks_json(const std::vector<RestSubtask>& placed, int32_t vertex) {
  nlohmann::json out = nlohmann::json::array();
  for (const RestSubtask& s : placed) {
    if (s.vertex != vertex) continue;
    out.push_back({{"subtask", s.subtask}, {"attempt", s.attempt}, {"host", s.host}, {"taskmanager-id", s.task_manager_id}});
  }
  return out;
}

}  // namespace

void RestRoutes::with_job(const httplib::Request& req, httplib::Response& res,
                          const std::function<void(RestJob&)>& fn) {
  std::shared_lock lock(jobs_mu_);
  const std::string id = req.matches[1];
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return error(res, 404, "Job " + id + " not found");
  fn(*it->second);
}

std::vector<RestTaskManager> RestRoutes::task_managers() {
  std::shared_lock lock(jobs_mu_);
  std::vector<RestTaskManager> out;
  for (const auto& [id, job] : jobs_) {
    for (RestTaskManager& tm : job->task_managers()) {
      const bool seen = std::any_of(out.begin(), out.end(), [&](const RestTaskManager& o) { return o.id == tm.id; });
      if (!seen) out.push_back(std::move(tm));
    }
  }
  return out;
}

void RestRoutes::add_job(std::shared_ptr<RestJob> job) {
  std::unique_lock lock(jobs_mu_);
  jobs_[job->overview().job_id.to_hex()] = std::move(job);
}

void RestRoutes::remove_job(const JobId& job_id) {
  std::unique_lock lock(jobs_mu_);
  jobs_.erase(job_id.to_hex());
}

void RestRoutes::clear() {
  std::unique_lock lock(jobs_mu_);
  jobs_.clear();
}

void RestRoutes::install(httplib::Server& server) {
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const std::string refused =
        refuse_state_change(req.method, req.get_header_value("Host"), req.get_header_value("Origin"),
                            req.get_header_value("Sec-Fetch-Site"), advertised_address_);
    if (refused.empty()) return httplib::Server::HandlerResponse::Unhandled;
    log::warn("REST endpoint: " + req.method + " " + req.path + " from " + req.remote_addr + " " + refused);
    error(res, 403, refused);
    return httplib::Server::HandlerResponse::Handled;
  });
  // What no route answered (an unknown path, a malformed id) gets Flink's error shape too, never an empty body.
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status != 404) return error(res, res.status, "HTTP " + std::to_string(res.status));
    // A short or mistyped job id (a prefix copied from a log line) matches no route: say what an id looks like. A
    // well-formed id under a path this endpoint does not serve: say which it serves.
    std::string hint;
    if (req.path.rfind("/jobs/", 0) == 0) {
      const std::string id = req.path.substr(6, req.path.find('/', 6) == std::string::npos
                                                    ? std::string::npos
                                                    : req.path.find('/', 6) - 6);
      const bool well_formed = id.size() == 32 && id.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
      hint = well_formed ? " (per job this endpoint serves GET /jobs/:jobid, /jobs/:jobid/vertices/:vertexid and its "
                           "/backpressure and /watermarks, /jobs/:jobid/exceptions, /jobs/:jobid/jobmanager/config, "
                           "/jobs/:jobid/checkpoints, its /config and /details/:checkpointid, "
                           "/jobs/:jobid/savepoints/:triggerid, PATCH /jobs/:jobid, POST /jobs/:jobid/savepoints and "
                           "/jobs/:jobid/stop; docs/rest-api.md)"
                         : " (a job id is 32 hexadecimal digits; GET /jobs lists the jobs)";
    }
    error(res, 404, "Not found: " + req.path + hint);
  });
  server.Get("/jobs", [this](const httplib::Request&, httplib::Response& res) {
    std::shared_lock lock(jobs_mu_);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [id, job] : jobs_) list.push_back({{"id", id}, {"status", job->state()}});
    reply(res, 200, nlohmann::json{{"jobs", std::move(list)}});
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32}))", [this](const httplib::Request& req, httplib::Response& res) {
    with_job(req, res, [&](RestJob& job) {
      const RestJobOverview& o = job.overview();
      const int64_t now = SystemClock::shared()->now_ms();
      const std::vector<RestSubtask> placed = job.subtasks();
      const std::vector<MetricValue> metrics = job.metrics();
      nlohmann::json vertices = nlohmann::json::array();
      for (const RestVertex& v : o.vertices) {
        vertices.push_back({{"id", std::to_string(v.id)},
                            {"name", v.name},
                            {"parallelism", v.parallelism},
                            {"maxParallelism", o.max_parallelism},
                            {"metrics", vertex_metrics_json(v, metrics)},
                            {"subtasks", subtasks_json(placed, v.id)}});
      }
      // Flink's "plan": the vertices with their inputs and ship strategies (the dashboard draws the graph from it).
      nlohmann::json nodes = nlohmann::json::array();
      for (const RestVertex& v : o.vertices) {
        nlohmann::json inputs = nlohmann::json::array();
        for (size_t i = 0; i < v.inputs.size(); ++i) {
          inputs.push_back({{"num", i},
                            {"id", std::to_string(v.inputs[i].source_vertex)},
                            {"ship_strategy", v.inputs[i].ship_strategy},
                            {"exchange", "pipelined_bounded"}});
        }
        nodes.push_back({{"id", std::to_string(v.id)},
                         {"parallelism", v.parallelism},
                         {"operator", ""},
                         {"description", v.name},
                         {"inputs", std::move(inputs)}});
      }
      reply(res, 200,
            nlohmann::json{{"jid", o.job_id.to_hex()},
                           {"name", o.name},
                           {"isStoppable", job.checkpoint_view().has_value()},
                           {"state", job.state()},
                           {"job-type", "STREAMING"},
                           {"start-time", o.start_time_ms},
                           {"end-time", -1},
                           {"duration", now - o.start_time_ms},
                           {"maxParallelism", o.max_parallelism},
                           {"now", now},
                           {"vertices", std::move(vertices)},
                           {"plan", {{"jid", o.job_id.to_hex()},
                                     {"name", o.name},
                                     {"type", "STREAMING"},
                                     {"nodes", std::move(nodes)}}}});
    });
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/vertices/([0-9]{1,9}))", [this](const httplib::Request& req, httplib::Response& res) {
    with_job(req, res, [&](RestJob& job) {
      const RestJobOverview& o = job.overview();
      const int32_t id = std::stoi(req.matches[2]);
      for (const RestVertex& v : o.vertices) {
        if (v.id != id) continue;
        return reply(res, 200, nlohmann::json{{"id", std::to_string(v.id)},
                                              {"name", v.name},
                                              {"parallelism", v.parallelism},
                                              {"maxParallelism", o.max_parallelism},
                                              {"now", SystemClock::shared()->now_ms()},
                                              {"subtasks", subtasks_json(job.subtasks(), v.id)}});
      }
      error(res, 404, "Job " + o.job_id.to_hex() + " has no vertex " + std::string(req.matches[2]));
    });
  });

  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::vector<JobMetrics> jobs;
    {
      std::shared_lock lock(jobs_mu_);
      for (const auto& [id, job] : jobs_) jobs.push_back({{{"job_id", id}}, job->metrics()});
    }
    res.status = 200;
    res.set_content(prometheus_text(jobs), "text/plain; version=0.0.4; charset=utf-8");
  });

  server.Get("/taskmanagers", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::json list = nlohmann::json::array();
    for (const RestTaskManager& tm : task_managers()) {
      list.push_back({{"id", tm.id},
                      {"path", tm.rpc_port > 0 ? tm.host + ":" + std::to_string(tm.rpc_port) : tm.host},
                      {"host", tm.host},
                      {"dataPort", tm.data_port},
                      {"slotsNumber", tm.slots},
                      {"freeSlots", tm.free_slots},
                      {"timeSinceLastHeartbeat", tm.last_heartbeat_ms}});
    }
    reply(res, 200, nlohmann::json{{"taskmanagers", std::move(list)}});
  });

  server.Get("/overview", [this](const httplib::Request&, httplib::Response& res) {
    int32_t slots = 0, free_slots = 0;
    const std::vector<RestTaskManager> tms = task_managers();
    for (const RestTaskManager& tm : tms) {
      slots += tm.slots;
      free_slots += tm.free_slots;
    }
    int32_t running = 0, finished = 0, cancelled = 0, failed = 0;
    {
      std::shared_lock lock(jobs_mu_);
      for (const auto& [id, job] : jobs_) {
        const std::string state = job->state();
        if (state == "FINISHED") ++finished;
        else if (state == "CANCELED") ++cancelled;
        else if (state == "FAILED") ++failed;
        else ++running;
      }
    }
    reply(res, 200, nlohmann::json{{"taskmanagers", tms.size()},
                                   {"slots-total", slots},
                                   {"slots-available", free_slots},
                                   {"jobs-running", running},
                                   {"jobs-finished", finished},
                                   {"jobs-cancelled", cancelled},
                                   {"jobs-failed", failed},
                                   {"sluice-version", sluice_version()}});
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/checkpoints)", [this](const httplib::Request& req, httplib::Response& res) {
    with_job(req, res, [&](RestJob& job) {
      std::optional<CheckpointView> view = job.checkpoint_view();
      if (!view) return error(res, 404, "Checkpointing is not enabled for job " + job.overview().job_id.to_hex());
      // ?format=sluice: the statistics as the tool's --summary-json prints them (per-subtask figures included).
      if (req.get_param_value("format") == "sluice") return reply(res, 200, coordinator::to_json(view->stats));
      reply(res, 200, flink_checkpoint_statistics(*view));
    });
  });

  // PATCH and POST take the handler with a content reader: httplib 0.11 answers 400 on its own to a PATCH or POST
  // without a body (no Content-Length), which is how Flink's users call these (`curl -X PATCH .../jobs/<id>`).
  // Neither route needs the body.
  server.Patch(R"(/jobs/([0-9a-fA-F]{32}))", [this](const httplib::Request& req, httplib::Response& res,
                                                     const httplib::ContentReader&) {
    with_job(req, res, [&](RestJob& job) {
      std::string mode = req.has_param("mode") ? req.get_param_value("mode") : "cancel";
      for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (mode != "cancel") {
        return error(res, 400, "mode '" + req.get_param_value("mode") +
                                   "' is not supported: PATCH /jobs/:jobid takes mode=cancel (to stop a job with a "
                                   "savepoint, POST /jobs/:jobid/stop)");
      }
      const std::string state = job.state();
      if (state == "FINISHED" || state == "FAILED") {
        return error(res, 409, "Job " + job.overview().job_id.to_hex() + " already reached the terminal state " +
                                   state + "; it cannot be cancelled");
      }
      // The program's own log says why its job ended CANCELED (sluice cancel, curl, the dashboard).
      if (state != "CANCELLING" && state != "CANCELED") {
        log::info("job " + job.overview().job_id.to_hex() + ": cancel requested through the REST endpoint (PATCH " +
                  req.path + " from " + req.remote_addr + ")");
      }
      job.cancel();  // CANCELLING / CANCELED already: cancelling again changes nothing
      reply(res, 202, nlohmann::json::object());
    });
  });

  server.Post(R"(/jobs/([0-9a-fA-F]{32})/savepoints)", [this](const httplib::Request& req, httplib::Response& res,
                                                               const httplib::ContentReader& reader) {
    SavepointBody body;
    if (!read_savepoint_body(req, reader, "target-directory", res, &body)) return;
    if (body.cancel_job) {
      return error(res, 400, "cancel-job is not supported (Flink deprecated savepoint-and-cancel): stop the job "
                             "with a savepoint instead (POST /jobs/:jobid/stop, `sluice stop`)");
    }
    with_job(req, res, [&](RestJob& job) { answer_trigger(res, job.trigger_savepoint(body.target_directory, body.format)); });
  });

  server.Post(R"(/jobs/([0-9a-fA-F]{32})/stop)", [this](const httplib::Request& req, httplib::Response& res,
                                                         const httplib::ContentReader& reader) {
    SavepointBody body;
    if (!read_savepoint_body(req, reader, "targetDirectory", res, &body)) return;
    with_job(req, res, [&](RestJob& job) {
      answer_trigger(res, job.stop_with_savepoint(body.target_directory, body.drain, body.format));
    });
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/savepoints/([0-9a-fA-F]{32}))",
             [this](const httplib::Request& req, httplib::Response& res) {
               with_job(req, res, [&](RestJob& job) {
                 const std::string trigger_id = req.matches[2];
                 std::optional<RestSavepointStatus> st = job.savepoint_status(trigger_id);
                 if (!st) return error(res, 404, "There is no savepoint operation with trigger id " + trigger_id);
                 if (st->in_progress) return reply(res, 200, nlohmann::json{{"status", {{"id", "IN_PROGRESS"}}}});
                 nlohmann::json operation;
                 if (st->failure.is_ok()) {
                   operation["location"] = st->location;
                 } else {
                   operation["failure-cause"] = {{"class", "sluice." + std::string(status_code_name(st->failure.code()))},
                                                 {"stack-trace", st->failure.to_string()}};
                 }
                 reply(res, 200, nlohmann::json{{"status", {{"id", "COMPLETED"}}}, {"operation", operation}});
               });
             });
  install_detail_routes(server);
}

}  // namespace sluice::rest
