// logging::log_to_stderr: spdlog's own default logger (stdout) is put on stderr, so a program's stdout carries only
// what the program prints; a logger the program installed itself stays.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "logging/logging_config.h"

namespace sluice::logging {
namespace {

TEST(LogToStderr, SpdlogsOwnDefaultLoggerWritesToStderrAfterwards) {
  const std::shared_ptr<spdlog::logger> original = spdlog::default_logger();
  // As spdlog makes its own: unnamed, on stdout.
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("", std::make_shared<spdlog::sinks::stdout_color_sink_mt>()));
  spdlog::default_logger()->set_level(spdlog::level::warn);
  log_to_stderr();
  log_to_stderr();  // idempotent
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::warn);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  spdlog::warn("a line for stderr");
  spdlog::default_logger()->flush();
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("a line for stderr"), std::string::npos) << err;
  spdlog::set_default_logger(original);
}

TEST(LogToStderr, AProgramsOwnLoggerIsKept) {
  const std::shared_ptr<spdlog::logger> original = spdlog::default_logger();
  auto mine = std::make_shared<spdlog::logger>("mine", std::make_shared<spdlog::sinks::stdout_color_sink_mt>());
  spdlog::set_default_logger(mine);
  log_to_stderr();
  EXPECT_EQ(spdlog::default_logger(), mine);
  spdlog::set_default_logger(original);
}

}  // namespace
}  // namespace sluice::logging
