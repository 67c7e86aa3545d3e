// The REST endpoint over a fake job: routes, Flink's shapes and status codes, cancel, and the configuration.
#include "rest/metrics_server.h"
#include "rest/rest_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rest/rest_client.h"
#include "rest/tests/rest_test_support.h"
#include "sluice/core/version.h"

namespace sluice::rest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::FakeJob;
using testing::RestServerTest;
using testing::raw_http;

TEST_F(RestServerTest, ListsNoJobUntilOneIsAdded) {
  HttpResponse r = call("GET", "/jobs");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json_of(r), nlohmann::json::parse(R"({"jobs":[]})"));
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  r = call("GET", "/jobs");
  EXPECT_EQ(json_of(r)["jobs"], nlohmann::json::parse(R"([{"id":")" + job->id() + R"(","status":"RUNNING"}])"));
  server->remove_job(job->overview().job_id);
  EXPECT_TRUE(json_of(call("GET", "/jobs"))["jobs"].empty());
  EXPECT_EQ(call("GET", "/jobs/" + job->id()).status, 404);
}

TEST_F(RestServerTest, JobDetails) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id());
  ASSERT_EQ(r.status, 200);
  nlohmann::json j = json_of(r);
  EXPECT_EQ(j["jid"], job->id());
  EXPECT_EQ(j["name"], "fake");
  EXPECT_EQ(j["state"], "RUNNING");
  EXPECT_EQ(j["start-time"], 1000);
  EXPECT_EQ(j["end-time"], -1);
  EXPECT_EQ(j["maxParallelism"], 128);
  ASSERT_EQ(j["vertices"].size(), 2u);
  EXPECT_EQ(j["vertices"][1]["name"], "per-auction -> Sink");
  EXPECT_EQ(j["vertices"][1]["parallelism"], 2);
  EXPECT_EQ(j["vertices"][1]["id"], "1");
}

TEST_F(RestServerTest, JobDetailsNameTheHostAndAttemptOfEverySubtaskAndNoneWhileRestarting) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  nlohmann::json j = json_of(call("GET", "/jobs/" + job->id()));
  EXPECT_EQ(j["vertices"][1]["subtasks"], nlohmann::json::parse(R"([
      {"subtask":0,"attempt":1,"host":"10.0.0.1","taskmanager-id":"tm-1"},
      {"subtask":1,"attempt":1,"host":"10.0.0.2","taskmanager-id":"tm-2"}])"));
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/vertices/1");
  ASSERT_EQ(r.status, 200) << r.body;
  j = json_of(r);
  EXPECT_EQ(j["id"], "1");
  EXPECT_EQ(j["name"], "per-auction -> Sink");
  EXPECT_EQ(j["parallelism"], 2);
  EXPECT_EQ(j["subtasks"].size(), 2u);
  EXPECT_EQ(j["subtasks"][1]["taskmanager-id"], "tm-2");
  r = call("GET", "/jobs/" + job->id() + "/vertices/7");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(error_message(r), HasSubstr("has no vertex 7"));
  job->set_state("RESTARTING");
  EXPECT_TRUE(json_of(call("GET", "/jobs/" + job->id() + "/vertices/0"))["subtasks"].empty());
}

TEST_F(RestServerTest, TaskManagersAndOverviewCountTheSlotsAndTheJobsByState) {
  EXPECT_EQ(json_of(call("GET", "/taskmanagers")), nlohmann::json::parse(R"({"taskmanagers":[]})"));
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/taskmanagers");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json_of(r)["taskmanagers"], nlohmann::json::parse(R"([
      {"id":"tm-1","path":"10.0.0.1:6124","host":"10.0.0.1","dataPort":6125,"slotsNumber":2,"freeSlots":0,
       "timeSinceLastHeartbeat":5000},
      {"id":"tm-2","path":"10.0.0.2:6124","host":"10.0.0.2","dataPort":0,"slotsNumber":2,"freeSlots":1,
       "timeSinceLastHeartbeat":5001}])"));
  nlohmann::json o = json_of(call("GET", "/overview"));
  EXPECT_EQ(o["taskmanagers"], 2);
  EXPECT_EQ(o["slots-total"], 4);
  EXPECT_EQ(o["slots-available"], 1);
  EXPECT_EQ(o["jobs-running"], 1);
  EXPECT_EQ(o["jobs-finished"], 0);
  EXPECT_EQ(o["sluice-version"], sluice_version());
  // A second job on the same TaskManagers lists each once; jobs count by state.
  auto other = std::make_shared<FakeJob>(true);
  other->set_id(JobId(1, 2));
  other->set_state("FINISHED");
  server->add_job(other);
  EXPECT_EQ(json_of(call("GET", "/taskmanagers"))["taskmanagers"].size(), 2u);
  o = json_of(call("GET", "/overview"));
  EXPECT_EQ(o["jobs-running"], 1);
  EXPECT_EQ(o["jobs-finished"], 1);
  EXPECT_EQ(o["jobs-failed"], 0);
  EXPECT_EQ(o["jobs-cancelled"], 0);
}

TEST_F(RestServerTest, MetricsArePrometheusTextWithFlinksNamesAndTheJobId) {
  EXPECT_EQ(call("GET", "/metrics").body, "") << "no job, no metric";
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  auto r = http_request("GET", "127.0.0.1", server->port(), "/metrics", "");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->body, HasSubstr("# TYPE flink_jobmanager_job_numRestarts gauge\n"
                                 "flink_jobmanager_job_numRestarts{job_id=\"" + job->id() + "\",job_name=\"fake\"} 1\n"));
  EXPECT_THAT(r->body, HasSubstr("# TYPE flink_taskmanager_job_task_operator_numRecordsIn gauge\n"
                                 "flink_taskmanager_job_task_operator_numRecordsIn{job_id=\"" + job->id() +
                                 "\",job_name=\"fake\",operator_name=\"map\",subtask_index=\"0\"} 42\n"));
  EXPECT_THAT(r->body, HasSubstr("flink_taskmanager_job_task_busyTimeMsPerSecond{job_id=\"" + job->id() +
                                 "\",job_name=\"fake\",subtask_index=\"1\",task_name=\"per-auction -> Sink\"} 200\n"));
}

TEST_F(RestServerTest, UnknownJobAndPathAre404InFlinksErrorShape) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + std::string(32, '0'));
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(error_message(r), HasSubstr("Job 00000000000000000000000000000000 not found"));
  // Paths no route matches answer in the same shape (Flink: "Not found: <path>"), never an empty body.
  for (const std::string& path : std::vector<std::string>{"/jobs/abc", "/no-such-path", "/jobs/" + job->id() + "/vertices/-1"}) {
    HttpResponse p = call("GET", path);
    EXPECT_EQ(p.status, 404) << path;
    EXPECT_THAT(error_message(p), HasSubstr("Not found: " + path)) << p.body;
  }
  EXPECT_THAT(error_message(call("GET", "/jobs/abc")), HasSubstr("a job id is 32 hexadecimal digits"));
  EXPECT_THAT(error_message(call("GET", "/no-such-path")), Not(HasSubstr("job id")));
  // A well-formed id under a path not served: the hint lists the paths, it does not blame the id.
  const std::string config_path = "/jobs/" + job->id() + "/config";
  EXPECT_THAT(error_message(call("GET", config_path)), HasSubstr("per job this endpoint serves GET /jobs/:jobid"));
  EXPECT_THAT(error_message(call("GET", config_path)), Not(HasSubstr("32 hexadecimal digits")));
  HttpResponse v = call("GET", "/jobs/" + std::string(32, '0') + "/vertices/0");
  EXPECT_EQ(v.status, 404);
  EXPECT_THAT(error_message(v), HasSubstr("not found"));
}

TEST_F(RestServerTest, Checkpoints) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/checkpoints");
  ASSERT_EQ(r.status, 200);
  nlohmann::json j = json_of(r);
  EXPECT_EQ(j["counts"]["completed"], 1);
  EXPECT_EQ(j["latest"]["completed"]["external_path"], "/ck/chk-1");
  // The tool's own format, per-subtask figures included.
  nlohmann::json own = json_of(call("GET", "/jobs/" + job->id() + "/checkpoints?format=sluice"));
  EXPECT_EQ(own["num_completed"], 1);
}

TEST_F(RestServerTest, CheckpointsOfAJobWithoutCheckpointingAre404) {
  auto job = std::make_shared<FakeJob>(false);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/checkpoints");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(error_message(r), HasSubstr("Checkpointing is not enabled"));
}

TEST_F(RestServerTest, PatchCancels) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("PATCH", "/jobs/" + job->id() + "?mode=cancel");
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(json_of(r), nlohmann::json::object());
  EXPECT_EQ(job->cancels, 1);
  EXPECT_EQ(json_of(call("GET", "/jobs"))["jobs"][0]["status"], "CANCELLING");
  EXPECT_EQ(call("PATCH", "/jobs/" + job->id()).status, 202);  // mode defaults to cancel; again is fine
  EXPECT_EQ(job->cancels, 2);
}

TEST_F(RestServerTest, PatchAndPostWithoutABodyAsCurlSendsThem) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  // No Content-Length at all (curl -X PATCH / -X POST without -d).
  auto raw = [&](const std::string& request) {
    return raw_http(server->port(), request);
  };
  // Reaches the handler: without a body there is no target directory (and the fake job has no default).
  EXPECT_THAT(raw("POST /jobs/" + job->id() + "/stop HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
              HasSubstr("no savepoint directory"));
  EXPECT_EQ(job->cancels, 0);
  EXPECT_THAT(raw("PATCH /jobs/" + job->id() + "?mode=cancel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
              HasSubstr("HTTP/1.1 202"));
  EXPECT_EQ(job->cancels, 1);
}

TEST_F(RestServerTest, PatchRefusesOtherModesAndEndedJobs) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("PATCH", "/jobs/" + job->id() + "?mode=stop");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(error_message(r), HasSubstr("mode 'stop' is not supported"));
  job->set_state("FINISHED");
  r = call("PATCH", "/jobs/" + job->id() + "?mode=cancel");
  EXPECT_EQ(r.status, 409);
  EXPECT_THAT(error_message(r), HasSubstr("FINISHED"));
  EXPECT_EQ(job->cancels, 0);
}

// Request bytes that are not UTF-8 (here the percent-decoded mode) are echoed into the JSON error with U+FFFD in
// their place. nlohmann::json threw writing them, and the request got a bare 500 carrying the exception's text
// (found by fuzz/rest_request_fuzzer).
TEST_F(RestServerTest, NonUtf8RequestBytesComeBackAsReplacementCharacters) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  const std::string answer = raw_http(server->port(), "PATCH /jobs/" + job->id() +
                                                          "?mode=ca%FEncel HTTP/1.1\r\nHost: x\r\n"
                                                          "Content-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(answer, HasSubstr("mode 'ca\xEF\xBF\xBDncel' is not supported"));
  EXPECT_THAT(answer, ::testing::Not(HasSubstr("EXCEPTION_WHAT")));
  EXPECT_EQ(job->cancels, 0);
}

TEST_F(RestServerTest, SavepointAndStopRequestsAnswerATriggerIdAndTheStatusInFlinksShape) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  const std::string jobs = "/jobs/" + job->id();
  HttpResponse r = call("POST", jobs + "/savepoints", R"({"target-directory": "/sp", "cancel-job": false})");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["request-id"], std::string(32, 'a'));
  EXPECT_EQ(job->last_dir, "/sp");
  r = call("GET", jobs + "/savepoints/" + std::string(32, 'a'));
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"]["id"], "IN_PROGRESS");
  r = call("GET", jobs + "/savepoints/" + std::string(32, 'a'));
  auto done = nlohmann::json::parse(r.body);
  EXPECT_EQ(done["status"]["id"], "COMPLETED");
  EXPECT_EQ(done["operation"]["location"], "/sp/savepoint-012345-000000000001");
  EXPECT_EQ(call("GET", jobs + "/savepoints/" + std::string(32, 'b')).status, 404);

  r = call("POST", jobs + "/stop", R"({"targetDirectory": "/fail", "drain": true})");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_TRUE(job->last_drain);
  auto failed = nlohmann::json::parse(call("GET", jobs + "/savepoints/" + std::string(32, 'a')).body);
  EXPECT_EQ(failed["status"]["id"], "COMPLETED");
  EXPECT_THAT(failed["operation"]["failure-cause"]["stack-trace"].get<std::string>(), HasSubstr("disk full"));

  // formatType NATIVE reaches the job (savepoint and stop); CANONICAL is the default.
  EXPECT_EQ(job->last_format, checkpoint::SavepointFormatType::kCanonical);
  EXPECT_EQ(call("POST", jobs + "/savepoints", R"({"target-directory": "/sp", "formatType": "NATIVE"})").status, 202);
  EXPECT_EQ(job->last_format, checkpoint::SavepointFormatType::kNative);
  EXPECT_EQ(call("POST", jobs + "/stop", R"({"targetDirectory": "/sp", "formatType": "CANONICAL"})").status, 202);
  EXPECT_EQ(job->last_format, checkpoint::SavepointFormatType::kCanonical);
  EXPECT_EQ(call("POST", jobs + "/stop", R"({"targetDirectory": "/sp", "formatType": "NATIVE"})").status, 202);
  EXPECT_EQ(job->last_format, checkpoint::SavepointFormatType::kNative);

  // Bad requests: no directory, malformed body, an unknown format, savepoint-and-cancel; a job not running.
  EXPECT_EQ(call("POST", jobs + "/savepoints").status, 400);
  EXPECT_EQ(call("POST", jobs + "/savepoints", "[1]").status, 400);
  EXPECT_EQ(call("POST", jobs + "/stop", R"({"drain": "yes"})").status, 400);
  EXPECT_EQ(call("POST", jobs + "/savepoints", R"({"target-directory": "/sp", "formatType": "FAST"})").status, 400);
  EXPECT_EQ(call("POST", jobs + "/savepoints", R"({"target-directory": "/sp", "cancel-job": true})").status, 400);
  job->set_state("FINISHED");
  EXPECT_EQ(call("POST", jobs + "/stop", R"({"targetDirectory": "/sp"})").status, 409);
  EXPECT_EQ(call("POST", "/jobs/" + std::string(32, '0') + "/stop").status, 404);
  EXPECT_EQ(job->cancels, 0);
}

TEST_F(RestServerTest, StopClosesTheEndpoint) {
  const int32_t port = server->port();
  server->stop();
  server->stop();  // idempotent
  auto r = http_request("GET", "127.0.0.1", port, "/jobs", "", std::chrono::seconds(2));
  EXPECT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIOError);
}

TEST(RestServerBind, ATakenPortFailsNamingIt) {
  auto first = RestServer::start(RestServerConfig{});
  ASSERT_TRUE(first.is_ok());
  RestServerConfig taken;
  taken.port = (*first)->port();
  auto second = RestServer::start(taken);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kIOError);
  EXPECT_THAT(second.status().message(), HasSubstr("127.0.0.1:" + std::to_string(taken.port)));
}

TEST(MetricsServer, ServesOnlyMetricsAndATakenPortFailsNamingTheKey) {
  auto server = MetricsServer::start("127.0.0.1", 0, [] {
    return std::vector<JobMetrics>{{{{"job_id", "ab"}}, {MetricValue{"j", "numRestarts", MetricKind::kGauge, 3, {},
                                                                     {{"job_name", "j"}}}}}};
  });
  ASSERT_TRUE(server.is_ok()) << server.status().to_string();
  auto r = http_request("GET", "127.0.0.1", (*server)->port(), "/metrics", "");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "# TYPE flink_jobmanager_job_numRestarts gauge\n"
                     "flink_jobmanager_job_numRestarts{job_id=\"ab\",job_name=\"j\"} 3\n");
  auto jobs = http_request("GET", "127.0.0.1", (*server)->port(), "/jobs", "");
  ASSERT_TRUE(jobs.is_ok());
  EXPECT_EQ(jobs->status, 404);
  auto second = MetricsServer::start("127.0.0.1", (*server)->port(), [] { return std::vector<JobMetrics>{}; });
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kIOError);
  EXPECT_THAT(second.status().message(), HasSubstr("metrics.reporter.prom.port"));
}

TEST(RestServerConfigOf, DefaultsAndKeys) {
  Configuration empty;
  auto d = rest_server_config_of(empty);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->bind_address, "127.0.0.1");
  EXPECT_EQ(d->address, "127.0.0.1");
  EXPECT_EQ(d->port, 0);

  Configuration c;
  ASSERT_TRUE(c.apply_dynamic_property("rest.port=8089").is_ok());
  ASSERT_TRUE(c.apply_dynamic_property("rest.address=localhost").is_ok());
  auto a = rest_server_config_of(c);
  EXPECT_EQ(a->bind_address, "localhost");  // rest.address binds too when rest.bind-address is unset
  EXPECT_EQ(a->address, "localhost");
  EXPECT_EQ(a->port, 8089);

  Configuration w;
  ASSERT_TRUE(w.apply_dynamic_property("rest.bind-address=0.0.0.0").is_ok());
  auto b = rest_server_config_of(w);
  EXPECT_EQ(b->bind_address, "0.0.0.0");
  EXPECT_EQ(b->address, "127.0.0.1");  // clients on this machine reach a wildcard bind through loopback

  Configuration bad;
  EXPECT_FALSE(bad.apply_dynamic_property("rest.port=70000").is_ok());
}

TEST_F(RestServerTest, APageOfAnotherSiteCannotCancelOrSavepointTheJob) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  const std::string port = std::to_string(server->port());
  std::string answer = raw_http(server->port(), "PATCH /jobs/" + job->id() + "?mode=cancel HTTP/1.1\r\nHost: 127.0.0.1:" +
                                                   port + "\r\nOrigin: http://evil.example\r\nContent-Length: 0\r\n"
                                                   "Connection: close\r\n\r\n");
  EXPECT_THAT(answer, HasSubstr("403"));
  EXPECT_THAT(answer, HasSubstr("http://evil.example"));
  EXPECT_EQ(job->cancels.load(), 0);
  answer = raw_http(server->port(), "POST /jobs/" + job->id() + "/savepoints HTTP/1.1\r\nHost: 127.0.0.1:" + port +
                                        "\r\nSec-Fetch-Site: cross-site\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(answer, HasSubstr("403"));
  EXPECT_TRUE(job->last_dir.empty());
  // The endpoint's own page (same origin) may.
  answer = raw_http(server->port(), "PATCH /jobs/" + job->id() + "?mode=cancel HTTP/1.1\r\nHost: 127.0.0.1:" + port +
                                        "\r\nOrigin: http://127.0.0.1:" + port +
                                        "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(answer, HasSubstr("202"));
  EXPECT_EQ(job->cancels.load(), 1);
}

}  // namespace
}  // namespace sluice::rest
