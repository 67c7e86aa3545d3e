// TimerService: what a keyed process function sees of timers (Flink's TimerService), through
// KeyedProcessContext::timer_service(). Timers belong to the current key: one per (key, timestamp) and time
// domain (registering it again does nothing), they fire in timestamp order through
// KeyedProcessFunction::on_timer with the key set, and they are keyed state: checkpointed, redistributed with
// their key groups when rescaling, and a timer that became due while the job was down fires once after the
// restore. A timer for a time already passed fires at the next opportunity: processing time at the task's next
// loop iteration, event time at the next watermark.
//
// Units: milliseconds since the epoch. Processing time is the job's clock (StreamExecutionEnvironment::
// set_clock; tests use a ManualClock). Event time is the operator's watermark: Long.MIN_VALUE (INT64_MIN) until
// the first watermark. Thread-safety: the task thread (inside process_element / on_timer).
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

enum class TimeDomain : uint8_t {
  kEventTime,       // fired by a watermark
  kProcessingTime,  // fired by the clock
};

inline std::string_view time_domain_name(TimeDomain d) {
  return d == TimeDomain::kEventTime ? "EVENT_TIME" : "PROCESSING_TIME";
}

class TimerService {
 public:
  virtual ~TimerService() = default;
  virtual int64_t current_processing_time() const = 0;  // ms since the epoch
  virtual int64_t current_watermark() const = 0;        // ms; INT64_MIN before the first watermark
  virtual void register_processing_time_timer(int64_t timestamp_ms) = 0;
  virtual void register_event_time_timer(int64_t timestamp_ms) = 0;
  // Deleting a timer that does not exist does nothing.
  virtual void delete_processing_time_timer(int64_t timestamp_ms) = 0;
  virtual void delete_event_time_timer(int64_t timestamp_ms) = 0;
};

}  // namespace sluice
