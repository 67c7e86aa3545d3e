// The options of Sluice's logging - the level, the line format and the pattern of spdlog's default logger, which
// every part of Sluice logs through - and of what a job reports about itself: the progress line it prints while it
// runs and the summary file it writes when it ends (docs/configuration.md, "Logging"). Flink configures log4j with
// `rootLogger.level` in its properties files; Sluice has one process-wide logger, set from these keys by every
// execute() (src/logging/logging_config.h). Registered in all_options() (options.h) like every other option.
// Thread-safety: immutable after static initialization.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sluice/config/config_option.h"

namespace sluice {

// log.level: the least severe level written (log4j's names; spdlog's trace .. critical underneath).
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

template <>
struct EnumOptionNames<LogLevel> {
  static constexpr std::array<std::pair<LogLevel, std::string_view>, 6> kValues{{
      {LogLevel::kTrace, "TRACE"},
      {LogLevel::kDebug, "DEBUG"},
      {LogLevel::kInfo, "INFO"},
      {LogLevel::kWarn, "WARN"},
      {LogLevel::kError, "ERROR"},
      {LogLevel::kOff, "OFF"},
  }};
};

// log.format: TEXT lines after log.pattern, or JSON: one object per line.
enum class LogFormat { kText, kJson };

template <>
struct EnumOptionNames<LogFormat> {
  static constexpr std::array<std::pair<LogFormat, std::string_view>, 2> kValues{{
      {LogFormat::kText, "TEXT"},
      {LogFormat::kJson, "JSON"},
  }};
};

// execution.progress-line: whether execute() prints a progress line to stderr every second.
//   AUTO - when stderr is a terminal (isatty), as a person watches the program; not into a log file or a pipe.
//   ON / OFF - always / never.
enum class ProgressLineMode { kAuto, kOn, kOff };

template <>
struct EnumOptionNames<ProgressLineMode> {
  static constexpr std::array<std::pair<ProgressLineMode, std::string_view>, 3> kValues{{
      {ProgressLineMode::kAuto, "AUTO"},
      {ProgressLineMode::kOn, "ON"},
      {ProgressLineMode::kOff, "OFF"},
  }};
};

namespace options {

// log.level (enum, unset; deprecated key rootLogger.level): unset means the environment variable SPDLOG_LEVEL
// (spdlog's own syntax, e.g. "debug"), else INFO.
extern const ConfigOption<std::optional<LogLevel>> kLogLevel;
// log.format (enum, TEXT).
extern const ConfigOption<LogFormat> kLogFormat;
// log.pattern (string, "[%Y-%m-%d %H:%M:%S.%e] [%l] %J%v"): spdlog's pattern syntax for TEXT lines, plus %J: the
// job id and task of the line ("[<job id>] ", "[<job id> <task> (2/4)#0] ", or nothing when neither is known).
extern const ConfigOption<std::string> kLogPattern;

// execution.progress-line (enum, AUTO; Sluice's own).
extern const ConfigOption<ProgressLineMode> kProgressLine;
// execution.job-summary.path (string, empty: none; Sluice's own; --summary-json): the file execute() writes the
// job's JSON summary to when the job ends (src/api/job_summary.h lists the fields).
extern const ConfigOption<std::string> kJobSummaryPath;

}  // namespace options
}  // namespace sluice
