// Standard metric names and scope variables used by the runtime. Flink's names where Flink has the metric.
#pragma once

#include <string_view>

namespace sluice {

namespace metric_names {
// Per operator subtask (Flink's names).
inline constexpr std::string_view kNumRecordsIn = "numRecordsIn";    // Counter: records received
inline constexpr std::string_view kNumRecordsOut = "numRecordsOut";  // Counter: records emitted
inline constexpr std::string_view kNumBytesIn = "numBytesIn";        // Counter: serialized bytes received
inline constexpr std::string_view kNumBytesOut = "numBytesOut";      // Counter: serialized bytes emitted
// Counter: total time the task was blocked waiting for an output buffer or credit, in ns. Flink reports
// backPressuredTimeMsPerSecond; a total lets any reader derive a rate over the interval it chooses.
inline constexpr std::string_view kBackPressuredTimeNs = "backPressuredTimeNs";
// Gauge: bytes of keyed + operator state held by the subtask's state backend.
inline constexpr std::string_view kStateSizeBytes = "stateSizeBytes";
// Counter: records at or below their split's (or subtask's) current watermark where timestamps are assigned
// (api/watermark_strategy.h); they flow on or go to the strategy's late side output, never silently dropped.
inline constexpr std::string_view kNumLateRecords = "numLateRecords";
// Counter: records stamped further ahead of their split's watermark than the strategy's max skew.
inline constexpr std::string_view kNumSkewedRecords = "numSkewedRecords";
}  // namespace metric_names

// Keys of the variables a key/value group records (Flink's <job_name>, <operator_name>, <subtask_index>).
namespace metric_scope {
inline constexpr std::string_view kJobName = "job_name";
inline constexpr std::string_view kOperatorName = "operator_name";
inline constexpr std::string_view kSubtaskIndex = "subtask_index";
}  // namespace metric_scope

}  // namespace sluice
