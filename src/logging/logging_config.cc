#include "logging/logging_config.h"

#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "logging/log_format.h"
#include "sluice/config/logging_options.h"

namespace sluice::logging {
namespace {

spdlog::level::level_enum spdlog_level(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

void log_to_stderr() {
  static std::mutex mu;
  std::lock_guard lock(mu);
  const std::shared_ptr<spdlog::logger> current = spdlog::default_logger();
  if (!current->name().empty()) return;  // the program's own logger
  // Ours already: spdlog's default has one stdout sink.
  if (current->sinks().size() == 1 &&
      std::dynamic_pointer_cast<spdlog::sinks::stderr_color_sink_mt>(current->sinks().front()) != nullptr) {
    return;
  }
  auto logger = std::make_shared<spdlog::logger>("", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_level(current->level());
  logger->flush_on(current->flush_level());
  spdlog::set_default_logger(std::move(logger));
}

Status configure_logging(const Configuration& config) {
  log_to_stderr();
  // A program that installed a default logger of its own (it has a name; spdlog's own is unnamed) keeps its format
  // unless the configuration sets one.
  const std::shared_ptr<spdlog::logger> logger = spdlog::default_logger();
  if (config.contains(options::kLogFormat.key) || config.contains(options::kLogPattern.key) || logger->name().empty()) {
    std::unique_ptr<spdlog::formatter> formatter;
    try {
      formatter = config.get(options::kLogFormat) == LogFormat::kJson ? json_formatter()
                                                                      : text_formatter(config.get(options::kLogPattern));
    } catch (const std::exception& e) {
      return Status::invalid_argument(options::kLogPattern.key + ": '" + config.get(options::kLogPattern) +
                                      "' is not a valid pattern: " + e.what());
    }
    logger->set_formatter(std::move(formatter));
  }
  if (const std::optional<LogLevel> level = config.get(options::kLogLevel)) {
    spdlog::set_level(spdlog_level(*level));
  } else if (const char* env = std::getenv("SPDLOG_LEVEL"); env != nullptr && *env != '\0') {
    spdlog::cfg::load_env_levels();
  }
  return Status::ok();
}

}  // namespace sluice::logging
