// Log lines from public headers. The engine logs through spdlog (its format and sinks: docs/logging.md); the
// templates a program instantiates log through these functions instead, so that a program's translation unit does
// not parse spdlog and fmt (measured: about 2.4 s more per compile of a word count, docs/benchmarks.md "Build
// time"). A line written here is the same as the engine's: same logger, format, job and task context.
// Thread-safety: any thread (spdlog's default logger is thread-safe).
#pragma once

#include <string_view>

namespace sluice::log {

// One line at ERROR / WARN / INFO level on the process's default logger. `message` is written as is (no format
// placeholders). Never throws.
void error(std::string_view message) noexcept;
void warn(std::string_view message) noexcept;
void info(std::string_view message) noexcept;

}  // namespace sluice::log
