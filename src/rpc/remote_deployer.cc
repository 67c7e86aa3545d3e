#include "rpc/remote_deployer.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "proto/task_executor.grpc.pb.h"
#include "rpc/grpc_status.h"
#include "rpc/report_codec.h"

namespace sluice::rpc {

struct RemoteDeployer::Stub {
  std::unique_ptr<v1::TaskExecutorGateway::Stub> stub;
  std::string address;
  int64_t timeout_ms = 10'000;

  // One call with a deadline; the error names the call and the TaskManager. `wait_for_ready`: wait (up to the
  // deadline) for a connection instead of failing at once while the channel reconnects - for a deployment to a
  // TaskManager that just registered, possibly a replacement on the address of one that died.
  template <class Req, class Method>
  Status call(const std::string& what, Method method, const Req& req, int64_t timeout = 0,
              bool wait_for_ready = false) const {
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(wait_for_ready);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout > 0 ? timeout : timeout_ms));
    v1::TaskExecutorReply reply;
    return from_grpc((stub.get()->*method)(&ctx, req, &reply), what + " on the TaskManager at " + address);
  }
};

// One deployed attempt: the JobMaster's handle on its tasks in the TaskManager. Every call goes into one ordered
// outbox that a sender thread works off, so the TaskManager sees them in the order they were made - an
// enumerator's split assignment made before checkpoint n's enumerator snapshot reaches the reader before n's
// barrier (the event valve's contract in source_operator.h) - and no caller waits on the network.
class RemoteDeployer::Attempt final : public cluster::DeployedTasks {
 public:
  Attempt(RemoteDeployer* deployer, int32_t attempt_number, uint64_t registration_id,
          std::vector<SourceReaderCoordinator*> coordinators)
      : deployer_(deployer), stub_(deployer->stub_), epoch_(deployer->setup_.leader_epoch),
        attempt_(attempt_number), registration_id_(registration_id), coordinators_(std::move(coordinators)) {
    sender_ = std::thread([this] { send_calls(); });
  }
  ~Attempt() override {
    cancel();
    join();
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    sender_.join();
  }

  int32_t attempt_number() const { return attempt_; }
  uint64_t registration_id() const { return registration_id_; }
  SourceReaderCoordinator* coordinator(int32_t vertex) const {
    return vertex >= 0 && static_cast<size_t>(vertex) < coordinators_.size() ? coordinators_[static_cast<size_t>(vertex)]
                                                                               : nullptr;
  }
  // The sink through which the enumerator of `reader`'s source reaches it (made on first use, kept until the end).
  OperatorEventSink* sink_for(const runtime::ExecutionAttemptId& reader) {
    std::lock_guard lock(mu_);
    auto& sink = sinks_[{reader.vertex.value(), reader.subtask.value()}];
    if (!sink) sink = std::make_unique<ReaderSink>(this, reader);
    return sink.get();
  }

  void trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& savepoint_location,
                          std::map<JobVertexId, std::vector<uint8_t>> enumerator_states) override {
    v1::TriggerCheckpointRequest req;
    req.set_leader_epoch(epoch_);
    req.set_attempt_number(attempt_);
    req.set_checkpoint_id(barrier.id.value());
    req.set_timestamp_ms(barrier.timestamp_ms);
    req.set_savepoint(barrier.type == checkpoint::SnapshotType::kSavepoint);
    req.set_native_format(barrier.format == checkpoint::SavepointFormatType::kNative);
    req.set_savepoint_location(savepoint_location);
    for (const auto& [vertex, state] : enumerator_states) {
      v1::EnumeratorState* e = req.add_enumerator_states();
      e->set_vertex(vertex.value());
      e->set_state(state.data(), state.size());
    }
    post("triggering checkpoint " + std::to_string(barrier.id.value()), &v1::TaskExecutorGateway::Stub::TriggerCheckpoint,
         std::move(req));
  }
  void notify_checkpoint_complete(CheckpointId id) override { notify(id, true); }
  void notify_checkpoint_aborted(CheckpointId id) override { notify(id, false); }
  void stop_sources(bool drain) override { control(drain ? v1::STOP_SOURCES_AND_DRAIN : v1::STOP_SOURCES); }
  void resume_sources() override { control(v1::RESUME_SOURCES); }
  void finish() override { control(v1::FINISH_TASKS); }
  void wake() override { control(v1::WAKE_TASKS); }

  // From now on nothing more is sent, and the attempt's reports and reader calls no longer count.
  void cancel() override {
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      outbox_.clear();
    }
    std::lock_guard lock(deployer_->mu_);
    if (deployer_->current_ == this) deployer_->current_ = nullptr;
  }
  void join() override {
    {
      std::lock_guard lock(mu_);
      if (joined_) return;
      joined_ = true;
    }
    v1::AttemptRequest req;
    req.set_leader_epoch(epoch_);
    req.set_attempt_number(attempt_);
    // The TaskManager answers once its tasks are gone; if it cannot be reached its tasks end by themselves when it
    // loses this JobManager (heartbeat timeout), and the ResourceManager loses it.
    Status s = stub_->call("cancelling attempt " + std::to_string(attempt_), &v1::TaskExecutorGateway::Stub::CancelAttempt,
                           req, 6 * stub_->timeout_ms);
    if (!s.is_ok()) spdlog::warn("{}", s.to_string());
  }

 private:
  class ReaderSink final : public OperatorEventSink {
   public:
    ReaderSink(Attempt* attempt, runtime::ExecutionAttemptId reader) : attempt_(attempt), reader_(reader) {}
    void send(OperatorEvent event) override { attempt_->send_event(reader_, std::move(event)); }

   private:
    Attempt* attempt_;
    runtime::ExecutionAttemptId reader_;
  };

  struct Call {
    std::string what;
    std::function<Status()> send;
  };

  template <class Req, class Method>
  void post(std::string what, Method method, Req req) {
    auto stub = stub_;
    Call call{what, [stub, what, method, req = std::move(req)] { return stub->call(what, method, req); }};
    {
      std::lock_guard lock(mu_);
      if (cancelled_) return;
      outbox_.push_back(std::move(call));
    }
    cv_.notify_all();
  }
  void send_event(const runtime::ExecutionAttemptId& reader, OperatorEvent event) {
    v1::SendOperatorEventRequest req;
    req.set_leader_epoch(epoch_);
    to_proto(reader, req.mutable_reader());
    req.mutable_event()->set_kind(static_cast<int32_t>(event.kind));
    req.mutable_event()->set_payload(event.payload.data(), event.payload.size());
    post("sending a split enumerator event to " + reader.to_string(), &v1::TaskExecutorGateway::Stub::SendOperatorEvent,
         std::move(req));
  }
  void notify(CheckpointId id, bool completed) {
    v1::NotifyCheckpointRequest req;
    req.set_leader_epoch(epoch_);
    req.set_attempt_number(attempt_);
    req.set_checkpoint_id(id.value());
    req.set_completed(completed);
    post(std::string("notifying checkpoint ") + std::to_string(id.value()) + (completed ? " complete" : " aborted"),
         &v1::TaskExecutorGateway::Stub::NotifyCheckpoint, std::move(req));
  }
  void control(v1::TaskControl control) {
    v1::ControlTasksRequest req;
    req.set_leader_epoch(epoch_);
    req.set_attempt_number(attempt_);
    req.set_control(control);
    post(v1::TaskControl_Name(control), &v1::TaskExecutorGateway::Stub::ControlTasks, std::move(req));
  }

  // Sends the outbox in order. A call that did not reach the tasks fails the attempt: the restart strategy
  // decides (once the attempt is cancelled its calls are dropped, not reported).
  void send_calls() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stopping_ || !outbox_.empty(); });
      if (outbox_.empty()) return;
      Call call = std::move(outbox_.front());
      outbox_.pop_front();
      lock.unlock();
      Status s = call.send();
      lock.lock();
      if (!s.is_ok() && !cancelled_) {
        lock.unlock();
        deployer_->context_.listener->on_task_failed(-1, -1, s);
        lock.lock();
      }
    }
  }

  RemoteDeployer* deployer_;
  std::shared_ptr<Stub> stub_;
  const uint64_t epoch_;
  const int32_t attempt_;
  const uint64_t registration_id_;  // the TaskManager registration it was deployed to
  const std::vector<SourceReaderCoordinator*> coordinators_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<int32_t, int32_t>, std::unique_ptr<ReaderSink>> sinks_;
  std::deque<Call> outbox_;
  bool cancelled_ = false, joined_ = false, stopping_ = false;
  std::thread sender_;
};

RemoteDeployer::RemoteDeployer(cluster::JobTaskContext context, RemoteDeployerSetup setup)
    : context_(std::move(context)), setup_(std::move(setup)), stub_(std::make_shared<Stub>()) {
  // Reconnect within 100 ms..1 s (gRPC's default backoff starts at 1 s and grows to 2 min): a TaskManager that comes
  // back on the same address is reached quickly.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1'000);
  stub_->stub = v1::TaskExecutorGateway::NewStub(
      grpc::CreateCustomChannel(setup_.task_executor_address, grpc::InsecureChannelCredentials(), args));
  stub_->address = setup_.task_executor_address;
  stub_->timeout_ms = setup_.rpc_timeout_ms;
  setup_.job_master_service->bind(context_.listener, context_.checkpoint_responder,
                                  [this](const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& id) {
                                    std::lock_guard lock(mu_);
                                    return counts_locked(from, id);
                                  });
  setup_.split_enumerator_service->bind(this);
  if (setup_.loss_monitor) loss_handle_ = setup_.loss_monitor->add([this](const cluster::LostTaskManager& l) { on_lost(l); });
}

RemoteDeployer::~RemoteDeployer() {
  if (setup_.loss_monitor) setup_.loss_monitor->remove(loss_handle_);
  setup_.split_enumerator_service->unbind();
  setup_.job_master_service->unbind();
}

Result<std::unique_ptr<cluster::DeployedTasks>> RemoteDeployer::deploy(cluster::AttemptDeployment attempt) {
  v1::SubmitAttemptRequest req;
  req.set_leader_epoch(setup_.leader_epoch);
  req.set_attempt_number(attempt.attempt_number);
  req.set_job_id(context_.job_id);
  for (const std::string& id : context_.lineage_job_ids) req.add_lineage_job_ids(id);
  for (const cluster::SubtaskDeployment& s : attempt.subtasks) {
    v1::SubtaskDeploymentMessage* m = req.add_subtasks();
    to_proto(s.id, m->mutable_id());
    m->set_key_group_start(s.key_group_range.start());
    m->set_key_group_end_inclusive(s.key_group_range.end_inclusive());
  }
  if (attempt.restore) {
    v1::RestoreReference* r = req.mutable_restore();
    r->set_location(attempt.restore->point.location);
    r->set_checkpoint_id(attempt.restore->point.metadata.checkpoint_id.value());
    r->set_owned(attempt.restore->point.owned);
    r->set_rehash_key_groups(attempt.restore->rehash == cluster::KeyGroupRehash::kRehash);
  }
  uint64_t registration = setup_.registration_id;
  if (setup_.resource_manager) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(setup_.slot_request_timeout_ms);
    bool found = false;
    while (true) {
      for (const cluster::TaskManagerInfo& tm : setup_.resource_manager->task_managers()) {
        if (tm.registration.task_manager_id != setup_.task_manager_id) continue;
        registration = tm.registration_id;
        found = true;
      }
      if (found || std::chrono::steady_clock::now() >= give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!found) {
      return Status::timeout("deploying attempt " + std::to_string(attempt.attempt_number) + ": TaskManager '" +
                             setup_.task_manager_id + "' did not register within slot.request.timeout (" +
                             std::to_string(setup_.slot_request_timeout_ms) + " ms)");
    }
  }
  auto deployed = std::make_unique<Attempt>(this, attempt.attempt_number, registration,
                                            std::move(attempt.source_coordinators));
  {
    // Current before the tasks start, so their first reports and reader calls are taken.
    std::lock_guard lock(mu_);
    current_ = deployed.get();
  }
  Status submitted = stub_->call("deploying attempt " + std::to_string(attempt.attempt_number),
                                 &v1::TaskExecutorGateway::Stub::SubmitAttempt, req, 0, /*wait_for_ready=*/true);
  if (!submitted.is_ok()) {
    deployed->cancel();
    return submitted;  // the destructor asks the TaskManager to drop whatever it started
  }
  return std::unique_ptr<cluster::DeployedTasks>(std::move(deployed));
}

bool RemoteDeployer::counts_locked(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& id) const {
  return current_ && current_->attempt_number() == id.attempt_number &&
         from.task_manager_id == setup_.task_manager_id && from.registration_id == current_->registration_id();
}

void RemoteDeployer::on_lost(const cluster::LostTaskManager& lost) {
  {
    std::lock_guard lock(mu_);
    if (!current_ || lost.task_manager_id != setup_.task_manager_id ||
        lost.registration_id != current_->registration_id()) {
      return;
    }
  }
  // Retriable: the restart strategy redeploys once the TaskManager (or its replacement) registered again.
  context_.listener->on_task_failed(-1, -1, Status::io_error("TaskManager '" + lost.task_manager_id + "' at " +
                                                             setup_.task_executor_address + " lost: " + lost.reason));
}

SourceReaderCoordinator* RemoteDeployer::coordinator_of(const TaskManagerSessionId& from,
                                                        const runtime::ExecutionAttemptId& reader) {
  return counts_locked(from, reader) ? current_->coordinator(reader.vertex.value()) : nullptr;
}

bool RemoteDeployer::register_reader(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                                     std::vector<OperatorEvent>* events) {
  std::lock_guard lock(mu_);
  SourceReaderCoordinator* c = coordinator_of(from, reader);
  if (!c) return false;
  *events = c->register_reader(reader.subtask.value(), current_->sink_for(reader));
  return true;
}

bool RemoteDeployer::request_split(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader) {
  std::lock_guard lock(mu_);
  SourceReaderCoordinator* c = coordinator_of(from, reader);
  if (!c) return false;
  c->handle_split_request(reader.subtask.value());
  return true;
}

bool RemoteDeployer::snapshot_done(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                                   CheckpointId checkpoint_id) {
  std::lock_guard lock(mu_);
  SourceReaderCoordinator* c = coordinator_of(from, reader);
  if (!c) return false;
  c->reader_snapshot_done(reader.subtask.value(), checkpoint_id);
  return true;
}

}  // namespace sluice::rpc
