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
// Counter: records a window operator dropped because their window was already past its allowed lateness.
inline constexpr std::string_view kNumLateRecordsDropped = "numLateRecordsDropped";
// Gauges, per second over the last 60 s (meter_view.h): numRecordsInPerSecond, ... beside each counter.
inline constexpr std::string_view kPerSecondSuffix = "PerSecond";
// Gauges, ms: the last watermark that reached the operator (per input of a two-input operator, and the lower of
// the two as currentInputWatermark) and the last it emitted. Flink's Long.MIN_VALUE (-9223372036854775808) until
// one arrived.
inline constexpr std::string_view kCurrentInputWatermark = "currentInputWatermark";
inline constexpr std::string_view kCurrentInput1Watermark = "currentInput1Watermark";
inline constexpr std::string_view kCurrentInput2Watermark = "currentInput2Watermark";
inline constexpr std::string_view kCurrentOutputWatermark = "currentOutputWatermark";

// Per subtask of a task (a chain of operators; Flink's task scope).
// Gauges, ms per second over the last 60 s: waiting for input (idle), for output buffers or credit
// (back-pressured), and the rest of the time (busy: 1000 - idle - back-pressured, at least 0).
inline constexpr std::string_view kIdleTimeMsPerSecond = "idleTimeMsPerSecond";
inline constexpr std::string_view kBackPressuredTimeMsPerSecond = "backPressuredTimeMsPerSecond";
inline constexpr std::string_view kBusyTimeMsPerSecond = "busyTimeMsPerSecond";
// Gauges, ms since the task started: the totals of the three (Flink's accumulateIdleTime, ...).
inline constexpr std::string_view kAccumulateIdleTime = "accumulateIdleTime";
inline constexpr std::string_view kAccumulateBackPressuredTime = "accumulateBackPressuredTime";
inline constexpr std::string_view kAccumulateBusyTime = "accumulateBusyTime";
// Gauges, bytes per second over the last 60 s, of the task's network input and output.
inline constexpr std::string_view kNumBytesInPerSecond = "numBytesInPerSecond";
inline constexpr std::string_view kNumBytesOutPerSecond = "numBytesOutPerSecond";
// Gauges, ns (measured in ms) of the subtask's last checkpoint: from the first barrier to the snapshot
// (alignment), and from the checkpoint's trigger to the first barrier here (start delay).
inline constexpr std::string_view kCheckpointAlignmentTime = "checkpointAlignmentTime";
inline constexpr std::string_view kCheckpointStartDelayNanos = "checkpointStartDelayNanos";

// Per job, at the JobManager.
// Gauge: restarts since the job was submitted (a region's failover counts one, as a redeployment that failed).
inline constexpr std::string_view kNumRestarts = "numRestarts";
// Gauge, ms: time since the job last became RUNNING; 0 while it is not (created, restarting), -1 once it ended.
inline constexpr std::string_view kUptime = "uptime";
}  // namespace metric_names

// Keys of the variables a key/value group records (Flink's <job_name>, <operator_name>, <subtask_index>).
namespace metric_scope {
inline constexpr std::string_view kJobName = "job_name";
inline constexpr std::string_view kTaskName = "task_name";
inline constexpr std::string_view kOperatorName = "operator_name";
inline constexpr std::string_view kSubtaskIndex = "subtask_index";
}  // namespace metric_scope

}  // namespace sluice
