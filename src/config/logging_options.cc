#include "sluice/config/logging_options.h"

namespace sluice::options {

const ConfigOption<std::optional<LogLevel>> kLogLevel{
    "log.level", std::nullopt,
    "The least severe level of the lines written to stderr: TRACE, DEBUG, INFO, WARN, ERROR or OFF (log4j's names, "
    "as in Flink's rootLogger.level). Unset: the environment variable SPDLOG_LEVEL (spdlog's syntax, e.g. debug), "
    "else INFO.",
    {"rootLogger.level"}, {}};

const ConfigOption<LogFormat> kLogFormat{
    "log.format", LogFormat::kText,
    "TEXT: lines after log.pattern. JSON: one JSON object per line with time (UTC, ISO 8601), level (TRACE ... "
    "ERROR, as log.level), thread, job "
    "(the job id, when known), task (on a task's thread: \"<chain name> (2/4)#0\") and message.",
    {}, {}};

const ConfigOption<std::string> kLogPattern{
    "log.pattern", "[%Y-%m-%d %H:%M:%S.%e] [%l] %J%v",
    "The pattern of TEXT lines in spdlog's syntax (%Y-%m-%d %H:%M:%S.%e time, %l level, %t thread id, %v message), "
    "plus %J: the job id and task of the line in brackets with a space after them, or nothing when neither is known.",
    {}, {[](const std::string& v) { return !v.empty(); }, "not empty"}};

const ConfigOption<ProgressLineMode> kProgressLine{
    "execution.progress-line", ProgressLineMode::kAuto,
    "Whether execute() prints a line to stderr every second while the job runs: records its sources emitted, "
    "records per second, completed checkpoints, time elapsed. AUTO: when stderr is a terminal, unless log.format "
    "is JSON or log.level OFF; ON; OFF.",
    {}, {}};

const ConfigOption<std::string> kJobSummaryPath{
    "execution.job-summary.path", "",
    "A file execute() writes the job's summary to when the job ends, as one JSON object: job id, status, elapsed "
    "and CPU time, peak RSS, per-operator records and bytes, and with checkpointing the checkpoint statistics, "
    "restarts and the checkpoints restored from. Empty: none. The flag --summary-json sets it.",
    {}, {}};

}  // namespace sluice::options
