// The per-job detail views of the REST endpoint (rest_server.h lists them; bodies in job_detail_json.h), the
// dashboard's GET /config and GET /jobs/overview, and the dashboard itself.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "rest/checkpoint_stats_rest.h"
#include "rest/dashboard_assets.h"
#include "rest/job_detail_json.h"
#include "rest/json_reply.h"
#include "rest/rest_routes.h"
#include "sluice/core/clock.h"
#include "sluice/core/version.h"

namespace sluice::rest {
namespace {

const RestVertex* find_vertex(const RestJobOverview& o, const std::string& id_text) {
  const int32_t id = std::stoi(id_text);  // the route allows 1 to 9 digits
  for (const RestVertex& v : o.vertices) {
    if (v.id == id) return &v;
  }
  return nullptr;
}

// The checkpoint `id` among those in progress, the history and the latest ones; nullptr if none.
const coordinator::CheckpointStatsEntry* find_checkpoint(const CheckpointView& view, int64_t id) {
  const coordinator::CheckpointStatsSnapshot& s = view.stats;
  for (const auto& e : s.in_progress) {
    if (e.id.value() == id) return &e;
  }
  for (const auto& e : s.history) {
    if (e.id.value() == id) return &e;
  }
  if (s.latest_completed && s.latest_completed->id.value() == id) return &*s.latest_completed;
  if (s.latest_failed && s.latest_failed->id.value() == id) return &*s.latest_failed;
  return nullptr;
}

}  // namespace

void RestRoutes::install_detail_routes(httplib::Server& server) {
  // The web dashboard (web/dashboard/, compiled in): the page at /, its files under /dashboard/. Scripts may only
  // come from this endpoint (Content-Security-Policy), and the page may not be framed by another site.
  auto serve_asset = [](const std::string& path, httplib::Response& res) {
    for (const DashboardAsset& a : dashboard_assets()) {
      if (a.path != path) continue;
      res.status = 200;
      res.set_header("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_content(a.data, a.size_bytes, std::string(a.content_type));
      return;
    }
    error(res, 404, "Not found: /dashboard/" + path + " (the dashboard is at /)");
  };
  server.Get("/", [serve_asset](const httplib::Request&, httplib::Response& res) { serve_asset("index.html", res); });
  server.Get(R"(/dashboard/([A-Za-z0-9._-]{1,64}))", [serve_asset](const httplib::Request& req, httplib::Response& res) {
    serve_asset(req.matches[1], res);
  });

  // Flink's web dashboard configuration.
  server.Get("/config", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, nlohmann::json{{"refresh-interval", 3000},
                                   {"timezone-name", "UTC"},
                                   {"timezone-offset", 0},
                                   {"sluice-version", sluice_version()},
                                   {"features", {{"web-submit", false}, {"web-cancel", true}, {"web-history", false}}}});
  });

  server.Get("/jobs/overview", [this](const httplib::Request&, httplib::Response& res) {
    std::shared_lock lock(jobs_mu_);
    const int64_t now = SystemClock::shared()->now_ms();
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [id, job] : jobs_) {
      const RestJobOverview& o = job->overview();
      int32_t total = 0;
      for (const RestVertex& v : o.vertices) total += v.parallelism;
      const int32_t running = static_cast<int32_t>(job->subtasks().size());
      list.push_back({{"jid", id},
                      {"name", o.name},
                      {"state", job->state()},
                      {"start-time", o.start_time_ms},
                      {"end-time", -1},
                      {"duration", now - o.start_time_ms},
                      {"last-modification", now},
                      {"tasks", {{"total", total}, {"running", running}, {"created", total - running}}}});
    }
    reply(res, 200, nlohmann::json{{"jobs", std::move(list)}});
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/exceptions)", [this](const httplib::Request& req, httplib::Response& res) {
    with_job(req, res, [&](RestJob& job) { reply(res, 200, exceptions_json(job.exceptions(), job.num_exceptions())); });
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/jobmanager/config)", [this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    with_job(req, res, [&](RestJob& job) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& [key, value] : job.overview().configuration) list.push_back({{"key", key}, {"value", value}});
      reply(res, 200, list);
    });
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/vertices/([0-9]{1,9})/(backpressure|watermarks))",
             [this](const httplib::Request& req, httplib::Response& res) {
               with_job(req, res, [&](RestJob& job) {
                 const RestVertex* v = find_vertex(job.overview(), req.matches[2]);
                 if (v == nullptr) {
                   return error(res, 404, "Job " + job.overview().job_id.to_hex() + " has no vertex " +
                                              std::string(req.matches[2]));
                 }
                 if (req.matches[3] == "watermarks") return reply(res, 200, watermarks_json(*v, job.metrics()));
                 reply(res, 200, backpressure_json(*v, job.metrics(), job.subtasks(), SystemClock::shared()->now_ms()));
               });
             });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/checkpoints/config)", [this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    with_job(req, res, [&](RestJob& job) {
      const auto& config = job.overview().checkpoint_config;
      if (!config) return error(res, 404, "Checkpointing is not enabled for job " + job.overview().job_id.to_hex());
      reply(res, 200, checkpoint_config_json(*config));
    });
  });

  server.Get(R"(/jobs/([0-9a-fA-F]{32})/checkpoints/details/([0-9]{1,18})(/subtasks/([0-9]{1,9}))?)",
             [this](const httplib::Request& req, httplib::Response& res) {
               with_job(req, res, [&](RestJob& job) {
                 const std::string job_id = job.overview().job_id.to_hex();
                 std::optional<CheckpointView> view = job.checkpoint_view();
                 if (!view) return error(res, 404, "Checkpointing is not enabled for job " + job_id);
                 const coordinator::CheckpointStatsEntry* e = find_checkpoint(*view, std::stoll(req.matches[2]));
                 if (e == nullptr) {
                   return error(res, 404, "Job " + job_id + " has no statistics of checkpoint " +
                                              std::string(req.matches[2]) + " (the history keeps the latest 10)");
                 }
                 if (!req.matches[4].matched) return reply(res, 200, flink_checkpoint_entry(*e));
                 const RestVertex* v = find_vertex(job.overview(), req.matches[4]);
                 if (v == nullptr) return error(res, 404, "Job " + job_id + " has no vertex " + std::string(req.matches[4]));
                 reply(res, 200, checkpoint_subtasks_json(*e, v->id, v->parallelism));
               });
             });
}

}  // namespace sluice::rest
