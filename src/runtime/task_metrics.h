// The metrics of a task's time and watermarks, with Flink's names (metric_names.h; Flink's "System metrics": IO,
// checkpointing): idle, back-pressured and busy time per second and in total, network bytes per second, the last
// checkpoint's alignment and start delay on the subtask's task group; the watermarks in and out of each operator.
//
// The task thread writes TaskTimes and OperatorWatermarks (relaxed atomics, no lock on the record path); the gauges
// read them on the snapshotting thread. Both are shared with the gauges, so a gauge stays readable after its task is
// gone (a restart registers new ones over it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/network/result_partition.h"
#include "sluice/core/clock.h"
#include "sluice/metrics/metric_group.h"

namespace sluice::runtime {

// Times of one subtask, ns since the task started. Idle: the task loop waiting for input (also a source with
// nothing to read, and a task waiting for its final checkpoint after its input ended). Back-pressured: the loop
// waiting because an output cannot take a buffer; the partitions count the time an emit itself waits for one.
struct TaskTimes {
  explicit TaskTimes(int64_t start_ns) : started_ns(start_ns) {}
  const int64_t started_ns;  // the clock's monotonic_ns() when the task was built
  std::atomic<int64_t> idle_ns{0};
  std::atomic<int64_t> back_pressured_wait_ns{0};
  std::atomic<int64_t> last_alignment_ns{0};    // of the last checkpoint this subtask took
  std::atomic<int64_t> last_start_delay_ns{0};  // of the last checkpoint this subtask took

  // Task thread (single writer).
  void add_idle_ns(int64_t ns) { idle_ns.store(idle_ns.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed); }
  void add_back_pressured_ns(int64_t ns) {
    back_pressured_wait_ns.store(back_pressured_wait_ns.load(std::memory_order_relaxed) + ns,
                                 std::memory_order_relaxed);
  }
};

// The last watermark into each input of an operator and the last out of it, ms (kMinWatermark until one passed).
struct OperatorWatermarks {
  std::atomic<int64_t> input1_ms;
  std::atomic<int64_t> input2_ms;
  std::atomic<int64_t> output_ms;
  OperatorWatermarks();
};

struct TaskMetricSources {
  std::shared_ptr<const TaskTimes> times;
  // The task's output partitions (bytes out, the time emits waited for a buffer).
  std::vector<std::shared_ptr<ResultPartition>> partitions;
  // The input gate's byte count as the task last published it; null for a source task.
  std::shared_ptr<const std::atomic<int64_t>> bytes_in;
  const Clock* clock = nullptr;  // nullptr: the system clock
};

// The task's total back-pressured time, ns: its loop's waits and its emits' waits.
int64_t back_pressured_ns(const TaskMetricSources& sources);

// Registers on `task` (the subtask's group under the job's task_name group) the gauges of the task's times,
// network bytes per second and last checkpoint; replaces those of an earlier attempt.
void register_task_metrics(MetricGroup& task, const TaskMetricSources& sources);

// Registers on `op` (an operator subtask's group) currentInputWatermark (and currentInput1Watermark /
// currentInput2Watermark when `two_inputs`), currentOutputWatermark, and numRecordsInPerSecond /
// numRecordsOutPerSecond of its counters (numRecordsIn only when `has_input`).
void register_operator_metrics(MetricGroup& op, std::shared_ptr<const OperatorWatermarks> watermarks, bool has_input,
                               bool two_inputs, const Clock* clock);

}  // namespace sluice::runtime
