#include "runtime/task_metrics.h"

#include <algorithm>
#include <utility>

#include "sluice/functions/output.h"
#include "sluice/metrics/meter_view.h"
#include "sluice/metrics/metric_names.h"

namespace sluice::runtime {

namespace {
double ms_of(int64_t ns) { return static_cast<double>(ns) / 1e6; }
}  // namespace

OperatorWatermarks::OperatorWatermarks() : input1_ms(kMinWatermark), input2_ms(kMinWatermark), output_ms(kMinWatermark) {}

int64_t back_pressured_ns(const TaskMetricSources& sources) {
  int64_t ns = sources.times->back_pressured_wait_ns.load(std::memory_order_relaxed);
  for (const auto& p : sources.partitions) ns += p->back_pressured_time_ns();
  return ns;
}

void register_task_metrics(MetricGroup& task, const TaskMetricSources& sources) {
  namespace names = metric_names;
  auto idle_ms = [s = sources] { return ms_of(s.times->idle_ns.load(std::memory_order_relaxed)); };
  auto back_pressured_ms = [s = sources] { return ms_of(back_pressured_ns(s)); };
  auto elapsed_ms = [s = sources] {
    const Clock& clock = s.clock != nullptr ? *s.clock : *SystemClock::shared();
    return ms_of(clock.monotonic_ns() - s.times->started_ns);
  };
  task.gauge(names::kAccumulateIdleTime, idle_ms);
  task.gauge(names::kAccumulateBackPressuredTime, back_pressured_ms);
  task.gauge(names::kAccumulateBusyTime,
             [=] { return std::max(0.0, elapsed_ms() - idle_ms() - back_pressured_ms()); });

  Gauge idle_rate = rate_gauge(idle_ms, kDefaultRateTimeSpanMs, sources.clock);
  Gauge back_pressured_rate = rate_gauge(back_pressured_ms, kDefaultRateTimeSpanMs, sources.clock);
  task.gauge(names::kIdleTimeMsPerSecond, [idle_rate] { return std::min(1000.0, idle_rate()); });
  task.gauge(names::kBackPressuredTimeMsPerSecond,
             [back_pressured_rate] { return std::min(1000.0, back_pressured_rate()); });
  // Its own views of both, read at the same snapshot: busy + idle + back-pressured = 1000.
  Gauge idle_rate2 = rate_gauge(idle_ms, kDefaultRateTimeSpanMs, sources.clock);
  Gauge back_pressured_rate2 = rate_gauge(back_pressured_ms, kDefaultRateTimeSpanMs, sources.clock);
  task.gauge(names::kBusyTimeMsPerSecond, [idle_rate2, back_pressured_rate2] {
    return std::clamp(1000.0 - idle_rate2() - back_pressured_rate2(), 0.0, 1000.0);
  });

  auto bytes_out = [parts = sources.partitions] {
    double b = 0;
    for (const auto& p : parts) b += static_cast<double>(p->bytes_out());
    return b;
  };
  task.gauge(names::kNumBytesOutPerSecond, rate_gauge(bytes_out, kDefaultRateTimeSpanMs, sources.clock));
  if (sources.bytes_in) {
    auto bytes_in = [b = sources.bytes_in] { return static_cast<double>(b->load(std::memory_order_relaxed)); };
    task.gauge(names::kNumBytesInPerSecond, rate_gauge(bytes_in, kDefaultRateTimeSpanMs, sources.clock));
  }

  auto times = sources.times;
  task.gauge(names::kCheckpointAlignmentTime,
             [times] { return static_cast<double>(times->last_alignment_ns.load(std::memory_order_relaxed)); });
  task.gauge(names::kCheckpointStartDelayNanos,
             [times] { return static_cast<double>(times->last_start_delay_ns.load(std::memory_order_relaxed)); });
}

void register_operator_metrics(MetricGroup& op, std::shared_ptr<const OperatorWatermarks> watermarks, bool has_input,
                               bool two_inputs, const Clock* clock) {
  namespace names = metric_names;
  auto load = [](const std::atomic<int64_t>& w) { return static_cast<double>(w.load(std::memory_order_relaxed)); };
  if (has_input) {
    register_per_second_of_counter(op, names::kNumRecordsIn, clock);
    if (two_inputs) {
      op.gauge(names::kCurrentInput1Watermark, [watermarks, load] { return load(watermarks->input1_ms); });
      op.gauge(names::kCurrentInput2Watermark, [watermarks, load] { return load(watermarks->input2_ms); });
      op.gauge(names::kCurrentInputWatermark, [watermarks, load] {
        return std::min(load(watermarks->input1_ms), load(watermarks->input2_ms));
      });
    } else {
      op.gauge(names::kCurrentInputWatermark, [watermarks, load] { return load(watermarks->input1_ms); });
    }
  }
  register_per_second_of_counter(op, names::kNumRecordsOut, clock);
  op.gauge(names::kCurrentOutputWatermark, [watermarks, load] { return load(watermarks->output_ms); });
}

}  // namespace sluice::runtime
