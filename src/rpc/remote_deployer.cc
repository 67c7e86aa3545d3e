#include "rpc/remote_deployer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "proto/task_executor.grpc.pb.h"
#include "rpc/grpc_status.h"
#include "rpc/report_codec.h"
#include "rpc/rpc_address.h"

namespace sluice::rpc {

struct RemoteDeployer::Stub {
  std::unique_ptr<v1::TaskExecutorGateway::Stub> stub;
  std::string address;
  int64_t timeout_ms = 10'000;

  // One call with a deadline; the error names the call and the TaskManager. `wait_for_ready`: wait (up to the
  // deadline) for a connection instead of failing at once while the channel reconnects - for a deployment to a
  // TaskManager that just registered, possibly a replacement on the address of one that died. `context`: a fresh
  // context the caller may cancel from another thread (null: one of the call's own).
  template <class Req, class Method>
  Status call(const std::string& what, Method method, const Req& req, int64_t timeout = 0, bool wait_for_ready = false,
              grpc::ClientContext* context = nullptr) const {
    grpc::ClientContext own;
    grpc::ClientContext& ctx = context ? *context : own;
    ctx.set_wait_for_ready(wait_for_ready);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout > 0 ? timeout : timeout_ms));
    v1::TaskExecutorReply reply;
    return from_grpc((stub.get()->*method)(&ctx, req, &reply), what + " on the TaskManager at " + address);
  }
};

// The sink through which a split enumerator reaches one source reader of one attempt. Owned by the deployer, not the
// attempt: an enumerator may still send (an asynchronous split discovery finishing) after its attempt is gone, and
// then the event is dropped.
class RemoteDeployer::ReaderSink final : public OperatorEventSink {
 public:
  ReaderSink(Attempt* attempt, runtime::ExecutionAttemptId reader) : attempt_(attempt), reader_(reader) {}
  void send(OperatorEvent event) override;
  // The attempt is going away: nothing more reaches it.
  void detach() {
    std::lock_guard lock(mu_);
    attempt_ = nullptr;
  }

 private:
  std::mutex mu_;  // held while an event is handed to the attempt, so detach() waits for it
  Attempt* attempt_;
  const runtime::ExecutionAttemptId reader_;
};

// One TaskManager of a deployment: the registration its subtasks were deployed to.
struct RemoteDeployer::Target {
  std::string task_manager_id;
  uint64_t registration_id = 0;
  std::string host;
  std::shared_ptr<Stub> stub;
};

// One deployment: the JobMaster's handle on its tasks in the TaskManagers. Every call goes into one ordered
// outbox that a sender thread works off, so the TaskManager sees them in the order they were made - an
// enumerator's split assignment made before checkpoint n's enumerator snapshot reaches the reader before n's
// barrier (the event valve's contract in source_operator.h) - and no caller waits on the network.
class RemoteDeployer::Attempt final : public cluster::DeployedTasks {
 public:
  // `subtask_tm`: [vertex][subtask] the index in `targets` of the TaskManager that runs it, -1 for the subtasks of
  // other deployments. `first`: one subtask of the deployment, which a failure of the deployment as a whole is
  // reported for (so it fails over the region the deployment is).
  Attempt(RemoteDeployer* deployer, uint64_t deployment_id, int32_t attempt_number, std::vector<Target> targets,
          std::vector<std::vector<int32_t>> subtask_tm, std::vector<SourceReaderCoordinator*> coordinators,
          runtime::ExecutionAttemptId first)
      : deployer_(deployer), epoch_(deployer->setup_.leader_epoch), deployment_(deployment_id), attempt_(attempt_number),
        targets_(std::move(targets)), subtask_tm_(std::move(subtask_tm)), coordinators_(std::move(coordinators)),
        first_(first) {
    sender_ = std::thread([this] { send_calls(); });
  }
  ~Attempt() override {
    for (ReaderSink* sink : sinks_) sink->detach();
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
  uint64_t deployment_id() const { return deployment_; }
  const std::vector<Target>& targets() const { return targets_; }
  // The deployment as a whole failed (a call it needs, a lost TaskManager): reported for one of its subtasks.
  void fail_deployment(const Status& cause) {
    deployer_->context_.listener->on_task_failed(first_.vertex.value(), first_.subtask.value(), cause);
  }
  // The index in targets() of the TaskManager running `id`'s subtask; -1 for no subtask of this deployment.
  int32_t target_of(const runtime::ExecutionAttemptId& id) const {
    const int32_t v = id.vertex.value(), s = id.subtask.value();
    if (v < 0 || static_cast<size_t>(v) >= subtask_tm_.size() || s < 0 ||
        static_cast<size_t>(s) >= subtask_tm_[static_cast<size_t>(v)].size()) {
      return -1;
    }
    return subtask_tm_[static_cast<size_t>(v)][static_cast<size_t>(s)];
  }
  SourceReaderCoordinator* coordinator(int32_t vertex) const {
    return vertex >= 0 && static_cast<size_t>(vertex) < coordinators_.size() ? coordinators_[static_cast<size_t>(vertex)]
                                                                               : nullptr;
  }
  // The sink through which the enumerator of `reader`'s source reaches it (made on first use; the deployer keeps it).
  OperatorEventSink* sink_for(const runtime::ExecutionAttemptId& reader) {
    std::lock_guard lock(mu_);
    ReaderSink*& sink = sink_of_[{reader.vertex.value(), reader.subtask.value()}];
    if (!sink) {
      sink = deployer_->keep_sink(std::make_unique<ReaderSink>(this, reader));
      sinks_.push_back(sink);
    }
    return sink;
  }

  void send_event(const runtime::ExecutionAttemptId& reader, OperatorEvent event) {
    const int32_t target = target_of(reader);
    if (target < 0) {
      spdlog::warn("dropped a split enumerator event for {}: no such subtask in attempt {}", reader.to_string(), attempt_);
      return;
    }
    v1::SendOperatorEventRequest req;
    req.set_leader_epoch(epoch_);
    req.set_deployment_id(deployment_);
    to_proto(reader, req.mutable_reader());
    req.mutable_event()->set_kind(static_cast<int32_t>(event.kind));
    req.mutable_event()->set_payload(event.payload.data(), event.payload.size());
    post("sending a split enumerator event to " + reader.to_string(), &v1::TaskExecutorGateway::Stub::SendOperatorEvent,
         std::move(req), target);
  }

  void trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& savepoint_location,
                          std::map<JobVertexId, std::vector<uint8_t>> enumerator_states) override {
    v1::TriggerCheckpointRequest req;
    req.set_leader_epoch(epoch_);
    req.set_deployment_id(deployment_);
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
  // The TaskManagers fail their own subtasks; this one is reported as any task failure.
  void fail(const runtime::ExecutionAttemptId& subtask, const Status& cause) override {
    deployer_->context_.listener->on_task_failed(subtask.vertex.value(), subtask.subtask.value(), cause);
  }

  std::vector<cluster::SubtaskLocation> locations() const override {
    std::vector<cluster::SubtaskLocation> out;
    for (size_t v = 0; v < subtask_tm_.size(); ++v) {
      for (size_t i = 0; i < subtask_tm_[v].size(); ++i) {
        if (subtask_tm_[v][i] < 0) continue;
        const Target& t = targets_[static_cast<size_t>(subtask_tm_[v][i])];
        out.push_back({runtime::ExecutionAttemptId{JobVertexId(static_cast<int32_t>(v)),
                                                   SubtaskIndex(static_cast<int32_t>(i)), attempt_},
                       t.task_manager_id, t.host});
      }
    }
    return out;
  }

  // From now on nothing more is sent (a call in flight is cancelled: its TaskManager may be paused or cut off, and
  // the next deployment must not wait out its deadline), and the deployment's reports and reader calls no longer
  // count.
  void cancel() override {
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      outbox_.clear();
      for (const auto& context : in_flight_) context->TryCancel();
    }
    std::lock_guard lock(deployer_->mu_);
    std::erase(deployer_->running_, this);
  }
  // Cancels the attempt on every TaskManager at once and waits for all of them.
  void join() override {
    {
      std::lock_guard lock(mu_);
      if (joined_) return;
      joined_ = true;
    }
    v1::AttemptRequest req;
    req.set_leader_epoch(epoch_);
    req.set_attempt_number(attempt_);
    req.set_deployment_id(deployment_);
    // A TaskManager answers once its tasks are gone; if it cannot be reached its tasks end by themselves when it
    // loses this JobManager (heartbeat timeout), and the ResourceManager loses it. One lost (dead, or paused past
    // the heartbeat timeout) is not asked, or no longer waited for once it is lost during the call: the call would
    // only wait out its deadline.
    cluster::ResourceManager& rm = *deployer_->setup_.resource_manager;
    struct Cancel {
      const Target* target;
      grpc::ClientContext context;
      std::atomic<bool> done{false};
    };
    std::vector<std::unique_ptr<Cancel>> cancels;
    std::vector<std::thread> threads;
    for (const Target& t : targets_) {
      if (!rm.is_registered(t.task_manager_id, t.registration_id)) continue;
      auto c = std::make_unique<Cancel>();
      c->target = &t;
      Cancel* raw = c.get();
      cancels.push_back(std::move(c));
      threads.emplace_back([raw, &req, this] {
        Status s = raw->target->stub->call("cancelling attempt " + std::to_string(attempt_),
                                           &v1::TaskExecutorGateway::Stub::CancelAttempt, req,
                                           6 * raw->target->stub->timeout_ms, false, &raw->context);
        if (!s.is_ok()) spdlog::warn("{}", s.to_string());
        raw->done.store(true);
      });
    }
    while (true) {
      bool waiting = false;
      for (const auto& c : cancels) {
        if (c->done.load()) continue;
        waiting = true;
        if (!rm.is_registered(c->target->task_manager_id, c->target->registration_id)) c->context.TryCancel();
      }
      if (!waiting) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (std::thread& t : threads) t.join();
  }

 private:
 public:
  // A context for one call to this attempt's TaskManagers, kept until end_call so cancel() and abort_calls() can end
  // the call; null once the attempt is cancelled.
  std::shared_ptr<grpc::ClientContext> begin_call() {
    std::lock_guard lock(mu_);
    if (cancelled_) return nullptr;
    auto context = std::make_shared<grpc::ClientContext>();
    in_flight_.insert(context);
    return context;
  }
  void end_call(const std::shared_ptr<grpc::ClientContext>& context) {
    std::lock_guard lock(mu_);
    in_flight_.erase(context);
  }
  // One of the attempt's TaskManagers is lost: the calls in flight end now (a call to it would wait out its
  // deadline; the attempt is failing anyway).
  void abort_calls() {
    std::lock_guard lock(mu_);
    for (const auto& context : in_flight_) context->TryCancel();
  }

 private:
  struct Call {
    std::string what;
    std::function<Status(Attempt*)> send;
  };

  // Queues `req` for the TaskManager at index `target`, or for every TaskManager of the attempt (-1).
  template <class Req, class Method>
  void post(std::string what, Method method, Req req, int32_t target = -1) {
    std::vector<std::shared_ptr<Stub>> stubs;
    for (size_t i = 0; i < targets_.size(); ++i) {
      if (target < 0 || static_cast<size_t>(target) == i) stubs.push_back(targets_[i].stub);
    }
    Call call{what, [stubs = std::move(stubs), what, method, req = std::move(req)](Attempt* self) {
                for (const auto& stub : stubs) {
                  std::shared_ptr<grpc::ClientContext> context = self->begin_call();
                  if (!context) return Status::cancelled(what + ": the attempt was cancelled");
                  Status sent = stub->call(what, method, req, 0, false, context.get());
                  self->end_call(context);
                  SLUICE_RETURN_IF_ERROR(sent);
                }
                return Status::ok();
              }};
    {
      std::lock_guard lock(mu_);
      if (cancelled_) return;
      outbox_.push_back(std::move(call));
    }
    cv_.notify_all();
  }
  void notify(CheckpointId id, bool completed) {
    v1::NotifyCheckpointRequest req;
    req.set_leader_epoch(epoch_);
    req.set_deployment_id(deployment_);
    req.set_attempt_number(attempt_);
    req.set_checkpoint_id(id.value());
    req.set_completed(completed);
    post(std::string("notifying checkpoint ") + std::to_string(id.value()) + (completed ? " complete" : " aborted"),
         &v1::TaskExecutorGateway::Stub::NotifyCheckpoint, std::move(req));
  }
  void control(v1::TaskControl control) {
    v1::ControlTasksRequest req;
    req.set_leader_epoch(epoch_);
    req.set_deployment_id(deployment_);
    req.set_attempt_number(attempt_);
    req.set_control(control);
    post(v1::TaskControl_Name(control), &v1::TaskExecutorGateway::Stub::ControlTasks, std::move(req));
  }

  // Sends the outbox in order. A call that did not reach the tasks fails the deployment: the restart strategy
  // decides (once the deployment is cancelled its calls are dropped, not reported).
  void send_calls() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stopping_ || !outbox_.empty(); });
      if (outbox_.empty()) return;
      Call call = std::move(outbox_.front());
      outbox_.pop_front();
      lock.unlock();
      Status s = call.send(this);
      lock.lock();
      if (!s.is_ok() && !cancelled_) {
        lock.unlock();
        fail_deployment(s);
        lock.lock();
      }
    }
  }

  RemoteDeployer* deployer_;
  const uint64_t epoch_;
  const uint64_t deployment_;
  const int32_t attempt_;
  const std::vector<Target> targets_;
  const std::vector<std::vector<int32_t>> subtask_tm_;
  const std::vector<SourceReaderCoordinator*> coordinators_;
  const runtime::ExecutionAttemptId first_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<int32_t, int32_t>, ReaderSink*> sink_of_;  // owned by the deployer
  std::vector<ReaderSink*> sinks_;
  std::deque<Call> outbox_;
  std::set<std::shared_ptr<grpc::ClientContext>> in_flight_;  // calls under way (begin_call .. end_call)
  bool cancelled_ = false, joined_ = false, stopping_ = false;
  std::thread sender_;
};

void RemoteDeployer::ReaderSink::send(OperatorEvent event) {
  std::lock_guard lock(mu_);
  if (attempt_) attempt_->send_event(reader_, std::move(event));
}

RemoteDeployer::ReaderSink* RemoteDeployer::keep_sink(std::unique_ptr<ReaderSink> sink) {
  std::lock_guard lock(sinks_mu_);
  reader_sinks_.push_back(std::move(sink));
  return reader_sinks_.back().get();
}

RemoteDeployer::RemoteDeployer(cluster::JobTaskContext context, RemoteDeployerSetup setup)
    : context_(std::move(context)), setup_(std::move(setup)) {
  setup_.job_master_service->bind(context_.listener, context_.checkpoint_responder,
                                  [this](const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& id) {
                                    std::lock_guard lock(mu_);
                                    return deployment_of(from, id) != nullptr;
                                  });
  setup_.split_enumerator_service->bind(this);
  if (setup_.loss_monitor) loss_handle_ = setup_.loss_monitor->add([this](const cluster::LostTaskManager& l) { on_lost(l); });
}

RemoteDeployer::~RemoteDeployer() {
  if (setup_.loss_monitor) setup_.loss_monitor->remove(loss_handle_);
  setup_.split_enumerator_service->unbind();
  setup_.job_master_service->unbind();
  setup_.resource_manager->release_all();
}

std::shared_ptr<RemoteDeployer::Stub> RemoteDeployer::stub_for(const std::string& address) {
  std::shared_ptr<Stub>& stub = stubs_[address];
  if (stub) return stub;
  // Reconnect within 100 ms..1 s (gRPC's default backoff starts at 1 s and grows to 2 min): a TaskManager that comes
  // back on the same address is reached quickly.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1'000);
  stub = std::make_shared<Stub>();
  stub->stub = v1::TaskExecutorGateway::NewStub(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  stub->address = address;
  stub->timeout_ms = setup_.rpc_timeout_ms;
  return stub;
}

Result<std::vector<RemoteDeployer::Target>> RemoteDeployer::allocate_slots(int32_t attempt_number,
                                                                           const std::vector<bool>& needed,
                                                                           std::vector<int32_t>* slot_tm) {
  cluster::ResourceManager& rm = *setup_.resource_manager;
  if (slots_.size() < needed.size()) slots_.resize(needed.size());
  // A slot of a TaskManager lost (or registered anew) since is gone with it: the ResourceManager forgot it.
  std::vector<size_t> missing;
  for (size_t k = 0; k < needed.size(); ++k) {
    if (slots_[k] && !rm.is_registered(slots_[k]->slot.task_manager_id, slots_[k]->registration_id)) slots_[k].reset();
    if (needed[k] && !slots_[k]) missing.push_back(k);
  }
  if (!missing.empty()) {
    const int32_t count = static_cast<int32_t>(missing.size());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(setup_.slot_request_timeout_ms);
    Result<std::vector<cluster::AllocatedSlot>> allocated = rm.allocate(count, setup_.spread_out_slots);
    while (!allocated.is_ok() && std::chrono::steady_clock::now() < give_up) {
      {
        std::unique_lock lock(interrupt_mu_);
        if (interrupt_cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return interrupted_; })) {
          return Status::cancelled("deploying attempt " + std::to_string(attempt_number) +
                                   ": the job was cancelled while it waited for slots");
        }
      }
      allocated = rm.allocate(count, setup_.spread_out_slots);
    }
    if (!allocated.is_ok()) {
      return Status::timeout("deploying attempt " + std::to_string(attempt_number) + ": not enough slots within " +
                             "slot.request.timeout (" + std::to_string(setup_.slot_request_timeout_ms) +
                             " ms): " + allocated.status().message());
    }
    const std::vector<cluster::TaskManagerInfo> registered = rm.task_managers();
    for (size_t i = 0; i < missing.size(); ++i) {
      const cluster::AllocatedSlot& slot = (*allocated)[i];
      uint64_t registration_id = 0;  // 0: lost between the allocation and now, replaced again by the next deployment
      for (const cluster::TaskManagerInfo& tm : registered) {
        if (tm.registration.task_manager_id == slot.task_manager_id) registration_id = tm.registration_id;
      }
      slots_[missing[i]] = HeldSlot{slot, registration_id};
    }
  }
  const std::vector<cluster::TaskManagerInfo> registered = rm.task_managers();
  std::vector<Target> targets;
  std::map<std::string, int32_t> index;
  slot_tm->assign(needed.size(), -1);
  for (size_t k = 0; k < needed.size(); ++k) {
    if (!needed[k]) continue;
    const HeldSlot& held = *slots_[k];
    const cluster::TaskManagerInfo* info = nullptr;
    for (const cluster::TaskManagerInfo& tm : registered) {
      if (tm.registration.task_manager_id == held.slot.task_manager_id && tm.registration_id == held.registration_id) {
        info = &tm;
      }
    }
    if (!info) {  // lost after its slots were allocated: the restart strategy tries again
      return Status::io_error("deploying attempt " + std::to_string(attempt_number) + ": TaskManager '" +
                              held.slot.task_manager_id + "' was lost after its slots were allocated");
    }
    auto [it, added] = index.emplace(held.slot.task_manager_id, static_cast<int32_t>(targets.size()));
    (*slot_tm)[k] = it->second;
    if (!added) continue;
    const cluster::TaskManagerRegistration& r = info->registration;
    targets.push_back(Target{r.task_manager_id, info->registration_id, r.host,
                             stub_for(host_port(r.host, r.rpc_port))});
  }
  return targets;
}

void RemoteDeployer::interrupt_deploy() {
  {
    std::lock_guard lock(interrupt_mu_);
    interrupted_ = true;
  }
  interrupt_cv_.notify_all();
}

Result<std::unique_ptr<cluster::DeployedTasks>> RemoteDeployer::deploy(cluster::AttemptDeployment attempt) {
  const graph::JobGraph& jg = *context_.job_graph;
  const int32_t n = attempt.attempt_number;
  const std::string what = "deploying attempt " + std::to_string(n);
  if (attempt.subtasks.empty()) return Status::invalid_argument(what + ": no subtasks");
  {
    std::lock_guard lock(interrupt_mu_);
    if (interrupted_) return Status::cancelled(what + ": the job is being cancelled");
  }
  int32_t slots = 1;
  for (const auto& v : jg.vertices) slots = std::max(slots, v.parallelism);
  // Slot sharing: subtask k of every vertex goes to slot k.
  std::vector<bool> needed(static_cast<size_t>(slots), false);
  for (const cluster::SubtaskDeployment& s : attempt.subtasks) needed[static_cast<size_t>(s.id.subtask.value())] = true;
  std::vector<int32_t> slot_tm;
  SLUICE_ASSIGN_OR_RETURN(std::vector<Target> targets, allocate_slots(n, needed, &slot_tm));
  std::vector<std::vector<int32_t>> subtask_tm(jg.vertices.size());
  for (const auto& v : jg.vertices) subtask_tm[static_cast<size_t>(v.id)].assign(static_cast<size_t>(v.parallelism), -1);
  for (const cluster::SubtaskDeployment& s : attempt.subtasks) {
    subtask_tm[static_cast<size_t>(s.id.vertex.value())][static_cast<size_t>(s.id.subtask.value())] =
        slot_tm[static_cast<size_t>(s.id.subtask.value())];
  }
  const bool spread = targets.size() > 1;
  const uint64_t deployment_id = next_deployment_id_++;
  std::vector<v1::SubmitAttemptRequest> requests(targets.size());
  for (v1::SubmitAttemptRequest& req : requests) {
    req.set_leader_epoch(setup_.leader_epoch);
    req.set_attempt_number(n);
    req.set_deployment_id(deployment_id);
    req.set_job_id(context_.job_id);
    for (const std::string& id : context_.lineage_job_ids) req.add_lineage_job_ids(id);
    if (attempt.restore) {
      v1::RestoreReference* r = req.mutable_restore();
      r->set_location(attempt.restore->point.location);
      r->set_checkpoint_id(attempt.restore->point.metadata.checkpoint_id.value());
      r->set_owned(attempt.restore->point.owned);
      r->set_rehash_key_groups(attempt.restore->rehash == cluster::KeyGroupRehash::kRehash);
    }
  }
  for (const cluster::SubtaskDeployment& s : attempt.subtasks) {
    const int32_t tm = subtask_tm[static_cast<size_t>(s.id.vertex.value())][static_cast<size_t>(s.id.subtask.value())];
    v1::SubtaskDeploymentMessage* m = requests[static_cast<size_t>(tm)].add_subtasks();
    to_proto(s.id, m->mutable_id());
    m->set_key_group_start(s.key_group_range.start());
    m->set_key_group_end_inclusive(s.key_group_range.end_inclusive());
  }
  auto deployed = std::make_unique<Attempt>(this, deployment_id, n, targets, subtask_tm,
                                            std::move(attempt.source_coordinators), attempt.subtasks.front().id);
  {
    // Running before the tasks start, so their first reports and reader calls are taken.
    std::lock_guard lock(mu_);
    running_.push_back(deployed.get());
  }
  std::vector<v1::DataPlanePeer> peers;
  if (spread) {
    // Every TaskManager opens its process's data plane if it has not yet (one per process, shared by every deployment
    // there); the submissions then name all of them. The fingerprint is of the job and this JobManager's session, so
    // connections outlive a deployment, never a session.
    const uint64_t fingerprint =
        std::hash<std::string>{}(context_.job_id) * 0x9e3779b97f4a7c15ULL + setup_.leader_epoch;
    for (size_t i = 0; i < targets.size(); ++i) {
      v1::PrepareAttemptRequest prep;
      prep.set_leader_epoch(setup_.leader_epoch);
      prep.set_attempt_number(n);
      prep.set_deployment_id(deployment_id);
      prep.set_task_manager_index(static_cast<int32_t>(i));
      prep.set_data_plane_fingerprint(fingerprint);
      prep.set_registration_id(targets[i].registration_id);
      // Cancellable: a TaskManager lost meanwhile ends the call (on_lost) instead of letting it wait out its deadline.
      std::shared_ptr<grpc::ClientContext> ctx = deployed->begin_call();
      if (!ctx) return Status::cancelled(what + ": the attempt was cancelled");
      ctx->set_wait_for_ready(true);
      ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(setup_.rpc_timeout_ms));
      v1::PrepareAttemptResponse resp;
      Status prepared = from_grpc(targets[i].stub->stub->PrepareAttempt(ctx.get(), prep, &resp),
                                  what + " on the TaskManager at " + targets[i].stub->address);
      deployed->end_call(ctx);
      if (!prepared.is_ok()) {
        deployed->cancel();
        return prepared;  // the destructor asks every TaskManager to drop what it prepared
      }
      v1::DataPlanePeer& peer = peers.emplace_back();
      peer.set_task_manager_index(static_cast<int32_t>(i));
      peer.set_host(targets[i].host);
      peer.set_data_port(resp.data_port());
      peer.set_registration_id(targets[i].registration_id);
      peer.set_task_manager_id(targets[i].task_manager_id);
    }
  }
  if (spread || attempt.placement) {
    // Part of the job (a region) or spread: each TaskManager learns where every subtask of the deployment runs.
    for (size_t i = 0; i < requests.size(); ++i) {
      requests[i].set_task_manager_index(static_cast<int32_t>(i));
      for (const auto& per_vertex : subtask_tm) {
        v1::VertexPlacement* p = requests[i].add_placement();
        for (int32_t tm : per_vertex) p->add_task_manager_index(tm);
      }
      for (const v1::DataPlanePeer& peer : peers) *requests[i].add_peers() = peer;
    }
  }
  // Highest registration id first: a data connection is dialled by the lower one (its id on the data plane), to a
  // TaskManager that knows its peers.
  std::vector<size_t> order(targets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return targets[a].registration_id > targets[b].registration_id; });
  for (size_t i : order) {
    std::shared_ptr<grpc::ClientContext> ctx = deployed->begin_call();
    if (!ctx) return Status::cancelled(what + ": the attempt was cancelled");
    Status submitted = targets[i].stub->call(what, &v1::TaskExecutorGateway::Stub::SubmitAttempt, requests[i], 0,
                                             /*wait_for_ready=*/true, ctx.get());
    deployed->end_call(ctx);
    if (!submitted.is_ok()) {
      deployed->cancel();
      return submitted;  // the destructor asks every TaskManager to drop whatever it started
    }
  }
  spdlog::info("attempt {} deployed on {} TaskManager(s) ({} subtasks, deployment {})", n, targets.size(),
               attempt.subtasks.size(), deployment_id);
  return std::unique_ptr<cluster::DeployedTasks>(std::move(deployed));
}

void RemoteDeployer::before_job_end() {
  if (setup_.resource_manager_service) setup_.resource_manager_service->freeze_metrics();
}

void RemoteDeployer::on_job_end(JobStatus terminal) {
  if (setup_.resource_manager_service) setup_.resource_manager_service->end_job(job_status_name(terminal));
}

RemoteDeployer::Attempt* RemoteDeployer::deployment_of(const TaskManagerSessionId& from,
                                                       const runtime::ExecutionAttemptId& id) const {
  for (Attempt* a : running_) {
    if (a->attempt_number() != id.attempt_number) continue;
    const int32_t tm = a->target_of(id);
    if (tm < 0) continue;
    const Target& t = a->targets()[static_cast<size_t>(tm)];
    return from.task_manager_id == t.task_manager_id && from.registration_id == t.registration_id ? a : nullptr;
  }
  return nullptr;
}

void RemoteDeployer::on_lost(const cluster::LostTaskManager& lost) {
  // Under mu_: a deployment cancelled meanwhile (its region restarting already) is no longer running, and its
  // failure is not reported again.
  spdlog::warn("TaskManager '{}' ({} slot(s) of the job) lost: {}", lost.task_manager_id, lost.slots.size(),
               lost.reason);
  std::lock_guard lock(mu_);
  for (Attempt* a : running_) {
    for (const Target& t : a->targets()) {
      if (t.task_manager_id != lost.task_manager_id || t.registration_id != lost.registration_id) continue;
      a->abort_calls();  // a deployment or call waiting on the lost TaskManager ends now
      // Retriable: the restart strategy redeploys once enough slots are registered again.
      a->fail_deployment(Status::io_error("TaskManager '" + lost.task_manager_id + "' at " + t.stub->address +
                                          " lost: " + lost.reason));
      break;
    }
  }
}

SourceReaderCoordinator* RemoteDeployer::coordinator_of(const TaskManagerSessionId& from,
                                                        const runtime::ExecutionAttemptId& reader,
                                                        Attempt** deployment) {
  Attempt* a = deployment_of(from, reader);
  if (deployment) *deployment = a;
  return a ? a->coordinator(reader.vertex.value()) : nullptr;
}

bool RemoteDeployer::register_reader(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                                     std::vector<OperatorEvent>* events) {
  std::lock_guard lock(mu_);
  Attempt* deployment = nullptr;
  SourceReaderCoordinator* c = coordinator_of(from, reader, &deployment);
  if (!c) return false;
  *events = c->register_reader(reader.subtask.value(), deployment->sink_for(reader));
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
