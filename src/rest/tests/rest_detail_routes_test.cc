// The REST endpoint's detail views over a fake job (docs/rest-api.md): exceptions, the job's configuration,
// back-pressure and watermarks per vertex, the checkpoint configuration and one checkpoint's details, and the
// dashboard's /config and /jobs/overview, in the shapes of Flink's REST API.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rest/job_detail_json.h"
#include "rest/tests/rest_test_support.h"
#include "sluice/core/version.h"

namespace sluice::rest {
namespace {

using ::testing::HasSubstr;
using testing::FakeJob;
using testing::RestServerTest;

TEST_F(RestServerTest, ExceptionsListTheHistoryNewestFirstAsFlinksExceptionHistory) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/exceptions");
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json j = json_of(r);
  ASSERT_EQ(j["exceptionHistory"]["entries"].size(), 2u);
  const nlohmann::json& latest = j["exceptionHistory"]["entries"][0];
  EXPECT_EQ(latest["exceptionName"], "sluice.USER_FUNCTION");
  EXPECT_EQ(latest["stacktrace"], "user function failed");
  EXPECT_EQ(latest["timestamp"], 5000);
  EXPECT_EQ(latest["taskName"], "per-auction -> Sink (2/2)");
  EXPECT_EQ(latest["location"], "10.0.0.2");
  EXPECT_EQ(latest["taskManagerId"], "tm-2");
  EXPECT_TRUE(j["exceptionHistory"]["entries"][1]["taskName"].is_null()) << "a redeployment failed: no one task";
  EXPECT_TRUE(j["exceptionHistory"]["truncated"]) << "3 failures, 2 kept";
  EXPECT_EQ(j["root-exception"], "user function failed");
  EXPECT_EQ(j["timestamp"], 5000);
}

TEST_F(RestServerTest, NoFailureIsAnEmptyHistory) {
  EXPECT_EQ(exceptions_json({}, 0),
            nlohmann::json::parse(R"({"root-exception":null,"timestamp":null,"all-exceptions":[],"truncated":false,
                                      "exceptionHistory":{"entries":[],"truncated":false}})"));
}

TEST_F(RestServerTest, TheJobsConfigurationIsListedWithSecretsRedacted) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/jobmanager/config");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json_of(r), nlohmann::json::parse(R"([{"key":"execution.checkpointing.interval","value":"1 s"},
                                                  {"key":"s3.secret-key","value":"<redacted>"}])"));
}

TEST_F(RestServerTest, BackPressureOfAVertexFromItsTaskMetricsWithFlinksLevels) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/vertices/1/backpressure");
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json j = json_of(r);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["backpressure-level"], "high") << "the worst subtask's";
  ASSERT_EQ(j["subtasks"].size(), 2u);
  EXPECT_EQ(j["subtasks"][0]["backpressure-level"], "ok");
  EXPECT_DOUBLE_EQ(j["subtasks"][0]["ratio"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(j["subtasks"][0]["idleRatio"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(j["subtasks"][1]["ratio"].get<double>(), 0.7);
  EXPECT_DOUBLE_EQ(j["subtasks"][1]["busyRatio"].get<double>(), 0.2);
  EXPECT_EQ(j["subtasks"][1]["attempt-number"], 1);
  // A vertex without task metrics (none reported yet) is not back-pressured.
  j = json_of(call("GET", "/jobs/" + job->id() + "/vertices/0/backpressure"));
  EXPECT_EQ(j["backpressure-level"], "ok");
  EXPECT_EQ(call("GET", "/jobs/" + job->id() + "/vertices/9/backpressure").status, 404);
  EXPECT_STREQ(backpressure_level(0.10), "ok");
  EXPECT_STREQ(backpressure_level(0.11), "low");
  EXPECT_STREQ(backpressure_level(0.5), "low");
  EXPECT_STREQ(backpressure_level(0.51), "high");
}

TEST_F(RestServerTest, WatermarksOfAVertexAreItsHeadsInputAndItsLastOperatorsOutput) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/vertices/1/watermarks");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json_of(r), nlohmann::json::parse(R"([
      {"id":"0.currentInputWatermark","value":"1000"},{"id":"0.currentOutputWatermark","value":"900"},
      {"id":"1.currentInputWatermark","value":"1001"},{"id":"1.currentOutputWatermark","value":"901"}])"));
  EXPECT_EQ(json_of(call("GET", "/jobs/" + job->id() + "/vertices/0/watermarks")), nlohmann::json::array())
      << "no metrics of the source's operator";
}

TEST_F(RestServerTest, CheckpointConfigOrNotFoundWithoutCheckpointing) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/checkpoints/config");
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json j = json_of(r);
  EXPECT_EQ(j["mode"], "exactly_once");
  EXPECT_EQ(j["interval"], 1000);
  EXPECT_EQ(j["timeout"], 600'000);
  EXPECT_EQ(j["state_backend"], "HashMapStateBackend");
  EXPECT_EQ(j["checkpoint_storage"], "FileSystemCheckpointStorage");
  EXPECT_EQ(j["externalization"]["enabled"], false);
  auto off = std::make_shared<FakeJob>(false);
  off->set_id(JobId(1, 2));
  server->add_job(off);
  r = call("GET", "/jobs/" + off->id() + "/checkpoints/config");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(error_message(r), HasSubstr("Checkpointing is not enabled"));
}

TEST_F(RestServerTest, OneCheckpointsDetailsAndItsSubtasksPerVertex) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  HttpResponse r = call("GET", "/jobs/" + job->id() + "/checkpoints/details/1");
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json j = json_of(r);
  EXPECT_EQ(j["id"], 1);
  EXPECT_EQ(j["status"], "COMPLETED");
  EXPECT_EQ(j["external_path"], "/ck/chk-1");
  r = call("GET", "/jobs/" + job->id() + "/checkpoints/details/1/subtasks/0");
  ASSERT_EQ(r.status, 200) << r.body;
  j = json_of(r);
  EXPECT_EQ(j["num_subtasks"], 2);
  EXPECT_EQ(j["num_acknowledged_subtasks"], 1) << "subtask 0 of vertex 0 acknowledged";
  ASSERT_EQ(j["subtasks"].size(), 2u);
  EXPECT_EQ(j["subtasks"][0]["status"], "completed");
  EXPECT_EQ(j["subtasks"][0]["end_to_end_duration"], 5);
  EXPECT_EQ(j["subtasks"][1]["status"], "pending_or_failed");
  EXPECT_EQ(j["summary"]["end_to_end_duration"]["max"], 5);
  EXPECT_EQ(call("GET", "/jobs/" + job->id() + "/checkpoints/details/2").status, 404);
  EXPECT_EQ(call("GET", "/jobs/" + job->id() + "/checkpoints/details/1/subtasks/5").status, 404);
}

TEST_F(RestServerTest, DashboardConfigAndJobsOverview) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  nlohmann::json config = json_of(call("GET", "/config"));
  EXPECT_EQ(config["sluice-version"], sluice_version());
  EXPECT_EQ(config["refresh-interval"], 3000);
  HttpResponse r = call("GET", "/jobs/overview");
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json j = json_of(r);
  ASSERT_EQ(j["jobs"].size(), 1u);
  EXPECT_EQ(j["jobs"][0]["jid"], job->id());
  EXPECT_EQ(j["jobs"][0]["name"], "fake");
  EXPECT_EQ(j["jobs"][0]["state"], "RUNNING");
  EXPECT_EQ(j["jobs"][0]["tasks"]["total"], 4);
  EXPECT_EQ(j["jobs"][0]["tasks"]["running"], 4);
}

TEST_F(RestServerTest, TheDashboardIsServedFromTheBinaryWithAStrictContentSecurityPolicy) {
  auto page = http_request("GET", "127.0.0.1", server->port(), "/", "");
  ASSERT_TRUE(page.is_ok()) << page.status().to_string();
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("<script type=\"module\" src=\"/dashboard/dashboard.js\">"));
  for (const char* file : {"dashboard.js", "dashboard.css"}) {
    HttpResponse r = call("GET", std::string("/dashboard/") + file);
    EXPECT_EQ(r.status, 200) << file;
    EXPECT_GT(r.body.size(), 500u) << file;
  }
  const std::string head = testing::raw_http_head(server->port(), "/dashboard/dashboard.js");
  EXPECT_THAT(head, HasSubstr("Content-Type: text/javascript"));
  EXPECT_THAT(head, HasSubstr("Content-Security-Policy: default-src 'self'; frame-ancestors 'none'"));
  HttpResponse missing = call("GET", "/dashboard/nothing.js");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(error_message(missing), HasSubstr("the dashboard is at /"));
}

TEST_F(RestServerTest, TheJobsPlanNamesEachVertexsInputsAndShipStrategies) {
  auto job = std::make_shared<FakeJob>(true);
  server->add_job(job);
  nlohmann::json plan = json_of(call("GET", "/jobs/" + job->id()))["plan"];
  EXPECT_EQ(plan["jid"], job->id());
  ASSERT_EQ(plan["nodes"].size(), 2u);
  EXPECT_EQ(plan["nodes"][0]["inputs"], nlohmann::json::array());
  EXPECT_EQ(plan["nodes"][1]["description"], "per-auction -> Sink");
  EXPECT_EQ(plan["nodes"][1]["inputs"],
            nlohmann::json::parse(R"([{"num":0,"id":"0","ship_strategy":"HASH","exchange":"pipelined_bounded"}])"));
}

}  // namespace
}  // namespace sluice::rest
