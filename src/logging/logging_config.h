// Sets spdlog's default logger - the one every part of Sluice logs through, to stderr (log_to_stderr) - from the log.* keys
// (sluice/config/logging_options.h, docs/configuration.md "Logging"): the level (log.level; unset: the environment
// variable SPDLOG_LEVEL through spdlog's own loader, spdlog/cfg/env.h; else left as it is, spdlog's default being
// INFO), TEXT lines after log.pattern or JSON lines (logging/log_format.h). A default logger the program installed
// itself (one with a name) keeps its format unless log.format or log.pattern is set. StreamExecutionEnvironment::
// execute_async calls it for every job, so the keys of the job's configuration hold for the process from then on.
// Errors: kInvalidArgument naming log.pattern when the pattern is malformed (spdlog throws on some; the logger is
// then left as it was). Thread-safety: may be called from any thread; lines being written meanwhile use the old or
// the new format.
#pragma once

#include "sluice/config/configuration.h"
#include "sluice/core/status.h"

namespace sluice::logging {

[[nodiscard]] Status configure_logging(const Configuration& config);

// Puts spdlog's own default logger (unnamed; it writes to stdout) on stderr, keeping its level, so that a
// job's output on stdout stays apart from its log lines (Flink's CLI logs to stderr as well). A default logger the
// program installed itself (one with a name) is left alone. configure_logging does this first; the environment's
// constructor and the `sluice` tool call it before they log anything. Idempotent; thread-safe.
void log_to_stderr();

}  // namespace sluice::logging
