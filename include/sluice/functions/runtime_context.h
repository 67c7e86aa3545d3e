// RuntimeContext: what a rich user function sees of the task it runs in (Flink's RuntimeContext).
//
// Handed to RichFunction::open() and valid until close(). Keyed state is reachable only on a keyed stream
// (after key_by), as in Flink: elsewhere keyed_state_backend() throws std::logic_error, which fails
// the task. Thread-safety: used only by the task thread.
#pragma once

#include <any>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <typeinfo>

#include "sluice/core/clock.h"

namespace sluice {

class MetricGroup;

// Identity of the subtask an operator instance runs in.
struct TaskInfo {
  std::string task_name;      // the operator chain's name, e.g. "Source: bids -> Filter"
  std::string operator_name;  // this operator's name
  std::string operator_uid;   // stable id across job versions (matches state on restore)
  std::string job_name;       // the name given to execute() (stable across runs, unlike the job id)
  int32_t subtask_index = 0;  // in [0, parallelism)
  int32_t parallelism = 1;
  int32_t max_parallelism = 128;  // number of key groups
  int32_t attempt_number = 0;     // 0 on the first run; +1 per restart (restart strategies)
};

class RuntimeContext {
 public:
  RuntimeContext(TaskInfo info, MetricGroup* metrics, const Clock* clock)
      : info_(std::move(info)), metrics_(metrics), clock_(clock) {}

  const TaskInfo& task_info() const { return info_; }
  int32_t subtask_index() const { return info_.subtask_index; }
  int32_t parallelism() const { return info_.parallelism; }
  int32_t max_parallelism() const { return info_.max_parallelism; }
  int32_t attempt_number() const { return info_.attempt_number; }
  // The operator's metric group (scope job.operator.subtask); register counters/gauges in open().
  MetricGroup& metric_group() const { return *metrics_; }
  // Processing time source of this task (injectable; tests use ManualClock).
  const Clock& clock() const { return *clock_; }

  // The keyed state backend of this operator, whose key type must be K. Throws std::logic_error if the
  // operator is not on a keyed stream or K differs from the stream's key type.
  template <class Backend>
  Backend& keyed_state_backend() const {
    if (keyed_backend_ == nullptr) {
      throw std::logic_error("operator '" + info_.operator_name +
                             "': keyed state is only available on a keyed stream (use it after key_by)");
    }
    if (keyed_backend_type_ != std::type_index(typeid(Backend))) {
      throw std::logic_error("operator '" + info_.operator_name + "': keyed state requested with key type " +
                             typeid(Backend).name() + " but the stream is keyed by " +
                             keyed_backend_type_.name());
    }
    return *static_cast<Backend*>(keyed_backend_);
  }

  // Runtime wiring (not for users).
  template <class Backend>
  void set_keyed_state_backend(Backend* backend) {
    keyed_backend_ = backend;
    keyed_backend_type_ = std::type_index(typeid(Backend));
  }

 private:
  TaskInfo info_;
  MetricGroup* metrics_;
  const Clock* clock_;
  void* keyed_backend_ = nullptr;
  std::type_index keyed_backend_type_ = std::type_index(typeid(void));
};

}  // namespace sluice
