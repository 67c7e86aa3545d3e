// Test doubles for the coordinator's collaborators: an in-memory CheckpointStorage and a recording
// CheckpointTriggerTarget, both logging into one shared, ordered event log so tests can check the order of
// storage writes, notifications and callbacks. Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_storage.h"
#include "coordinator/checkpoint_coordinator.h"
#include "sluice/core/clock.h"

namespace sluice::coordinator::testing {

struct Event {
  enum class Kind { kTrigger, kWriteOk, kWriteFailed, kDiscard, kOnCompleted, kNotifyComplete, kNotifyAborted,
                    kOnAborted, kFailJob, kBeginSavepoint };
  Kind kind = Kind::kTrigger;
  int64_t id = 0;        // -1 for kFailJob
  int64_t time_ms = 0;   // the clock's monotonic ms when it happened
  CheckpointFailureReason reason = CheckpointFailureReason::kDeclined;  // kOnAborted
  std::string text;      // kFailJob: cause message; kOnCompleted: location; kBeginSavepoint: folder;
                         // kTrigger: "savepoint" or "checkpoint"

  static Event of(Kind kind, int64_t id, CheckpointFailureReason reason = CheckpointFailureReason::kDeclined,
                  std::string text = {}) {
    Event e;
    e.kind = kind;
    e.id = id;
    e.reason = reason;
    e.text = std::move(text);
    return e;
  }
};

class EventLog {
 public:
  explicit EventLog(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {}
  void add(Event e) {
    e.time_ms = clock_->monotonic_ns() / 1'000'000;
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(e));
  }
  std::vector<Event> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::vector<int64_t> ids(Event::Kind kind) const {
    std::vector<int64_t> out;
    for (const Event& e : events()) {
      if (e.kind == kind) out.push_back(e.id);
    }
    return out;
  }
  size_t count(Event::Kind kind) const { return ids(kind).size(); }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    events_.clear();
  }

 private:
  std::shared_ptr<const Clock> clock_;
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

class FakeCheckpointStorage final : public checkpoint::CheckpointStorage {
 public:
  explicit FakeCheckpointStorage(EventLog* log) : log_(log) {}

  // The next `n` metadata writes fail with an I/O error.
  void fail_next_writes(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_writes_ += n;
  }
  // Runs inside write_metadata (before it returns), outside the storage's lock.
  void set_write_hook(std::function<void(const checkpoint::CheckpointMetadata&)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    hook_ = std::move(hook);
  }
  bool is_durable(CheckpointId id) const {
    std::lock_guard<std::mutex> lock(mu_);
    return durable_.count(id.value()) > 0;
  }
  std::map<int64_t, checkpoint::CheckpointMetadata> written() const {
    std::lock_guard<std::mutex> lock(mu_);
    return written_;
  }

  // begin_savepoint fails from now on.
  void fail_savepoints() {
    std::lock_guard<std::mutex> lock(mu_);
    fail_savepoints_ = true;
  }
  Status begin_savepoint(CheckpointId id, const std::string& folder) override {
    log_->add(Event::of(Event::Kind::kBeginSavepoint, id.value(), CheckpointFailureReason::kDeclined, folder));
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_savepoints_) return Status::io_error("fake storage: cannot write to " + folder);
    return Status::ok();
  }

  Status initialize(const JobId&) override { return Status::ok(); }
  Result<std::shared_ptr<checkpoint::CheckpointStreamFactory>> stream_factory(CheckpointId) override {
    return Status::failed_precondition("fake storage has no stream factory");
  }
  Result<std::string> write_metadata(const checkpoint::CheckpointMetadata& metadata) override {
    std::function<void(const checkpoint::CheckpointMetadata&)> hook;
    bool fail = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hook = hook_;
      if (fail_writes_ > 0) {
        --fail_writes_;
        fail = true;
      }
    }
    if (hook) hook(metadata);
    const int64_t id = metadata.checkpoint_id.value();
    if (fail) {
      log_->add(Event::of(Event::Kind::kWriteFailed, id));
      return Status::io_error("fake storage: disk full writing chk-" + std::to_string(id) + "/_metadata");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      durable_.insert(id);
      written_[id] = metadata;
    }
    log_->add(Event::of(Event::Kind::kWriteOk, id));
    return "mem://chk-" + std::to_string(id);
  }
  Result<checkpoint::CheckpointMetadata> read_metadata(const std::string& location) override {
    return Status::not_found("fake storage: " + location);
  }
  Result<std::vector<uint8_t>> read_state(const std::string& location, const checkpoint::StreamStateHandle&) override {
    return Status::not_found("fake storage: " + location);
  }
  Status discard(CheckpointId id) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      durable_.erase(id.value());
      written_.erase(id.value());
    }
    log_->add(Event::of(Event::Kind::kDiscard, id.value()));
    return Status::ok();
  }
  std::string describe() const override { return "fake in-memory storage"; }
  Result<bool> remove_job_dir_if_empty() override { return true; }
  Status discard_shared_files(const std::vector<std::string>& files) override {
    std::lock_guard<std::mutex> lock(mu_);
    deleted_shared_.insert(deleted_shared_.end(), files.begin(), files.end());
    return Status::ok();
  }
  // Shared files deleted so far, in order.
  std::vector<std::string> deleted_shared() const {
    std::lock_guard<std::mutex> lock(mu_);
    return deleted_shared_;
  }

 private:
  EventLog* log_;
  mutable std::mutex mu_;
  int fail_writes_ = 0;
  bool fail_savepoints_ = false;
  std::set<int64_t> durable_;
  std::map<int64_t, checkpoint::CheckpointMetadata> written_;
  std::function<void(const checkpoint::CheckpointMetadata&)> hook_;
  std::vector<std::string> deleted_shared_;
};

class RecordingTarget final : public CheckpointTriggerTarget {
 public:
  RecordingTarget(EventLog* log, const FakeCheckpointStorage* storage) : log_(log), storage_(storage) {}

  void set_on_trigger(std::function<void(CheckpointId)> fn) {
    std::lock_guard<std::mutex> lock(mu_);
    on_trigger_ = std::move(fn);
  }
  void set_on_fail_job(std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu_);
    on_fail_job_ = std::move(fn);
  }
  // notify_checkpoint_complete calls that came before the metadata was durable (must stay 0).
  int violations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return violations_;
  }

  void trigger_checkpoint(CheckpointId id, int64_t, checkpoint::SnapshotType type,
                          checkpoint::SavepointFormatType format, const std::string&) override {
    log_->add(Event::of(Event::Kind::kTrigger, id.value(), CheckpointFailureReason::kDeclined,
                        type == checkpoint::SnapshotType::kCheckpoint        ? "checkpoint"
                        : format == checkpoint::SavepointFormatType::kNative ? "native savepoint"
                                                                             : "savepoint"));
    std::function<void(CheckpointId)> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn = on_trigger_;
    }
    if (fn) fn(id);
  }
  void notify_checkpoint_complete(CheckpointId id) override {
    if (!storage_->is_durable(id)) {
      std::lock_guard<std::mutex> lock(mu_);
      ++violations_;
    }
    log_->add(Event::of(Event::Kind::kNotifyComplete, id.value()));
  }
  void notify_checkpoint_aborted(CheckpointId id) override { log_->add(Event::of(Event::Kind::kNotifyAborted, id.value())); }
  void fail_job(const Status& cause) override {
    log_->add(Event::of(Event::Kind::kFailJob, -1, CheckpointFailureReason::kDeclined, cause.message()));
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn = on_fail_job_;
    }
    if (fn) fn();
  }

 private:
  EventLog* log_;
  const FakeCheckpointStorage* storage_;
  mutable std::mutex mu_;
  int violations_ = 0;
  std::function<void(CheckpointId)> on_trigger_;
  std::function<void()> on_fail_job_;
};

// One operator state handle of `bytes` bytes (inline).
inline checkpoint::OperatorSubtaskState operator_state_of(uint64_t bytes) {
  checkpoint::OperatorSubtaskState s;
  checkpoint::StreamStateHandle h;
  h.inline_bytes.assign(bytes, 0x5a);
  h.size_bytes = bytes;
  s.operator_state = h;
  return s;
}

// Tasks (vertex v, subtask s) for v < vertices, s < parallelism; vertex v runs operator "op-v"; the last
// vertex also runs "sink" chained behind it.
inline std::vector<TaskToAck> make_tasks(int32_t vertices, int32_t parallelism) {
  std::vector<TaskToAck> tasks;
  for (int32_t v = 0; v < vertices; ++v) {
    for (int32_t s = 0; s < parallelism; ++s) {
      TaskToAck t;
      t.vertex = v;
      t.subtask = s;
      t.operators.push_back({"op-" + std::to_string(v), "operator " + std::to_string(v), parallelism, 128, ""});
      if (v == vertices - 1) t.operators.push_back({"sink", "the sink", parallelism, 128, ""});
      tasks.push_back(std::move(t));
    }
  }
  return tasks;
}

// A coordinator wired to fakes, with a ManualClock.
struct Harness {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>(1'000'000);
  EventLog log{clock};
  std::shared_ptr<FakeCheckpointStorage> storage = std::make_shared<FakeCheckpointStorage>(&log);
  RecordingTarget target{&log, storage.get()};
  std::unique_ptr<CheckpointCoordinator> coordinator;
  std::vector<TaskToAck> tasks;
  std::map<int64_t, checkpoint::SnapshotType> completed_types;

  explicit Harness(CheckpointCoordinatorConfig config, int32_t vertices = 2, int32_t parallelism = 2,
                   CheckpointId restored = CheckpointId(0), MetricGroup* metrics = nullptr) {
    tasks = make_tasks(vertices, parallelism);
    CheckpointCoordinatorSetup setup;
    setup.config = config;
    setup.job_id = JobId(0xabc, 0xdef);
    setup.restored_checkpoint_id = restored;
    setup.tasks = tasks;
    setup.storage = storage;
    setup.target = &target;
    setup.clock = clock;
    setup.metrics = metrics;
    setup.properties = {{"test.property", "yes"}};
    setup.on_completed = [this](const checkpoint::CheckpointMetadata& md, const std::string& location) {
      log.add(Event::of(Event::Kind::kOnCompleted, md.checkpoint_id.value(), CheckpointFailureReason::kDeclined, location));
    };
    setup.on_aborted = [this](CheckpointId id, CheckpointFailureReason reason, const Status&) {
      log.add(Event::of(Event::Kind::kOnAborted, id.value(), reason));
    };
    auto created = CheckpointCoordinator::create(std::move(setup));
    if (!created.is_ok()) throw std::runtime_error(created.status().to_string());
    coordinator = std::move(created).value();
  }

  // Acknowledges `id` from every task with 100 bytes of state per operator.
  void ack_all(CheckpointId id) {
    for (const TaskToAck& t : tasks) ack(id, t);
  }
  MessageOutcome ack(CheckpointId id, const TaskToAck& t, uint64_t bytes = 100) {
    std::map<std::string, checkpoint::OperatorSubtaskState> state;
    for (const OperatorDescriptor& op : t.operators) state[op.operator_id] = operator_state_of(bytes);
    return coordinator->acknowledge(id, JobVertexId(t.vertex), SubtaskIndex(t.subtask), std::move(state), SubtaskCheckpointStats{1, 2, 3, bytes});
  }
};

inline CheckpointCoordinatorConfig config_with(int64_t interval_ms = 1000) {
  CheckpointCoordinatorConfig c;
  c.interval = std::chrono::milliseconds(interval_ms);
  return c;
}

}  // namespace sluice::coordinator::testing
