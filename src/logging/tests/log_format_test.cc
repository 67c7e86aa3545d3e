// The log line formats (logging/log_format.h) and their configuration (logging/logging_config.h): what a TEXT and a
// JSON line carry (job id, task), secrets redacted, invalid UTF-8 never breaking a JSON line, the level from the
// key or the environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "core/log_context.h"
#include "logging/log_format.h"
#include "logging/logging_config.h"
#include "sluice/config/logging_options.h"

namespace sluice::logging {
namespace {

// A logger writing into a string with `formatter`.
struct Captured {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> logger;
  explicit Captured(std::unique_ptr<spdlog::formatter> formatter) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    sink->set_formatter(std::move(formatter));
    logger = std::make_shared<spdlog::logger>("test", sink);
    logger->set_level(spdlog::level::trace);
  }
};

TEST(LogFormat, TextLinesCarryTheJobAndTheTaskWhenKnown) {
  Captured c(text_formatter("%l %J%v"));
  c.logger->info("outside any job");
  {
    log::ScopedLogContext job("0123abcd", "");
    c.logger->info("on the job's thread");
    log::ScopedLogContext task("0123abcd", "Source: bids (2/4)#1");
    c.logger->warn("on a task's thread");
  }
  c.logger->info("after");
  EXPECT_EQ(c.out.str(),
            "info outside any job\n"
            "info [0123abcd] on the job's thread\n"
            "warning [0123abcd Source: bids (2/4)#1] on a task's thread\n"
            "info after\n");
}

TEST(LogFormat, ThreadsWithoutAContextLogTheProcessesOneJob) {
  Captured c(text_formatter("%J%v"));
  log::register_job("aaaa");
  c.logger->info("one job");
  log::register_job("bbbb");
  c.logger->info("two jobs");  // which one? none
  log::unregister_job("aaaa");
  c.logger->info("one again");
  log::unregister_job("bbbb");
  EXPECT_EQ(c.out.str(), "[aaaa] one job\ntwo jobs\n[bbbb] one again\n");
}

TEST(LogFormat, JsonLinesParseAndCarryEveryField) {
  Captured c(json_formatter());
  {
    log::ScopedLogContext task("0123abcd", "Window \"x\" (1/2)#0");
    c.logger->error("quote \" backslash \\ newline \n tab \t bell \a done");
  }
  const nlohmann::json j = nlohmann::json::parse(c.out.str());
  EXPECT_EQ(j["level"], "ERROR");  // log4j's name, as log.level takes it
  EXPECT_EQ(j["job"], "0123abcd");
  EXPECT_EQ(j["task"], "Window \"x\" (1/2)#0");
  EXPECT_EQ(j["message"], "quote \" backslash \\ newline \n tab \t bell \a done");
  EXPECT_TRUE(j["thread"].is_number());
  const std::string time = j["time"];
  EXPECT_EQ(time.size(), 24u) << time;  // 2026-12-07T05:01:02.345Z
  EXPECT_EQ(time.back(), 'Z');
}

TEST(LogFormat, JsonLinesWithoutContextHaveNoJobOrTask) {
  Captured c(json_formatter());
  c.logger->info("plain");
  const nlohmann::json j = nlohmann::json::parse(c.out.str());
  EXPECT_FALSE(j.contains("job"));
  EXPECT_FALSE(j.contains("task"));
}

TEST(LogFormat, InvalidUtf8NeverBreaksAJsonLine) {
  Captured c(json_formatter());
  // Valid 2-, 3- and 4-byte sequences stay; a lone continuation byte, a truncated sequence, an overlong form and a
  // surrogate are each replaced.
  c.logger->info("ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad \x80 \xe2\x82 \xc0\xaf \xed\xa0\x80 end");
  const nlohmann::json j = nlohmann::json::parse(c.out.str());
  const std::string r = "\xef\xbf\xbd";  // U+FFFD, one per byte that starts no valid sequence
  EXPECT_EQ(j["message"], "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad " + r + " " + r + r + " " + r + r + " " + r + r + r + " end");
}

TEST(LogFormat, SecretsAreRedactedInEveryFormat) {
  for (bool json : {false, true}) {
    Captured c(json ? json_formatter() : text_formatter("%v"));
    c.logger->warn("bad value -D s3.secret-key=TOPSECRET and database.password: HUNTER2 kept=visible");
    const std::string line = c.out.str();
    EXPECT_EQ(line.find("TOPSECRET"), std::string::npos) << line;
    EXPECT_EQ(line.find("HUNTER2"), std::string::npos) << line;
    EXPECT_NE(line.find("kept=visible"), std::string::npos) << line;
  }
}

// configure_logging changes the process's default logger: each test puts the previous one back.
class ConfigureLogging : public testing::Test {
 protected:
  void SetUp() override {
    previous_ = spdlog::default_logger();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
    ::unsetenv("SPDLOG_LEVEL");
  }
  void TearDown() override {
    ::unsetenv("SPDLOG_LEVEL");
    spdlog::set_default_logger(previous_);
    spdlog::set_level(spdlog::level::info);
  }
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(ConfigureLogging, TheLevelComesFromTheKeyElseTheEnvironmentElseStaysAsItWas) {
  Configuration config;
  spdlog::set_level(spdlog::level::err);  // as a program (or `sluice guarantees`) may have set it
  ASSERT_TRUE(configure_logging(config).is_ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::err);

  ::setenv("SPDLOG_LEVEL", "debug", 1);
  ASSERT_TRUE(configure_logging(config).is_ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);

  ASSERT_TRUE(config.set_string("rootLogger.level", "warn").is_ok());  // Flink's key, deprecated alias
  ASSERT_TRUE(configure_logging(config).is_ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
  spdlog::info("hidden");
  spdlog::warn("shown");
  EXPECT_EQ(out_.str().find("hidden"), std::string::npos);
  EXPECT_NE(out_.str().find("shown"), std::string::npos);
}

TEST_F(ConfigureLogging, JsonFormatAppliesToTheDefaultLogger) {
  Configuration config;
  ASSERT_TRUE(config.set_string("log.format", "json").is_ok());
  ASSERT_TRUE(configure_logging(config).is_ok());
  spdlog::info("as json");
  const nlohmann::json j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["message"], "as json");
}

TEST_F(ConfigureLogging, AProgramsOwnLoggerKeepsItsFormatUnlessTheKeysSetOne) {
  Configuration config;
  ASSERT_TRUE(configure_logging(config).is_ok());
  spdlog::info("own format");
  EXPECT_EQ(out_.str().find('{'), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("own format"), std::string::npos);
}

TEST_F(ConfigureLogging, ABadLevelIsRefusedNamingTheKey) {
  Configuration config;
  const Status s = config.set_string("log.level", "loud");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("log.level"), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("TRACE"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace sluice::logging
