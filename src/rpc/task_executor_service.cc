#include "rpc/task_executor_service.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "cluster/in_process_deployer.h"
#include "rpc/grpc_status.h"
#include "rpc/report_codec.h"

namespace sluice::rpc {
namespace {

// A source reader's split enumerator, which runs in the JobManager: calls go over the SplitEnumeratorGateway, events
// come back through SendOperatorEvent (deliver). A call that fails throws, failing the reader's task (the
// JobMaster's restart strategy decides).
class RemoteSourceCoordinator final : public SourceReaderCoordinator {
 public:
  RemoteSourceCoordinator(std::shared_ptr<v1::SplitEnumeratorGateway::Stub> stub, TaskManagerSessionId session,
                          int32_t vertex, int32_t attempt_number, int64_t timeout_ms)
      : stub_(std::move(stub)), session_(std::move(session)), vertex_(vertex), attempt_(attempt_number),
        timeout_ms_(timeout_ms) {}

  std::vector<OperatorEvent> register_reader(int32_t subtask, OperatorEventSink* sink) override {
    {
      std::lock_guard lock(mu_);
      sinks_[subtask] = sink;  // before the call: events sent once the enumerator knows the reader find it
    }
    v1::RegisterReaderResponse resp;
    check(call(subtask, 0, &v1::SplitEnumeratorGateway::Stub::RegisterReader, &resp), "registering", subtask);
    std::vector<OperatorEvent> events;
    for (const v1::OperatorEventMessage& m : resp.events()) events.push_back(from_message(m));
    return events;
  }
  void handle_split_request(int32_t subtask) override {
    v1::TaskExecutorReply reply;
    check(call(subtask, 0, &v1::SplitEnumeratorGateway::Stub::RequestSplit, &reply), "asking a split for", subtask);
  }
  void reader_snapshot_done(int32_t subtask, CheckpointId checkpoint_id) override {
    v1::TaskExecutorReply reply;
    check(call(subtask, checkpoint_id.value(), &v1::SplitEnumeratorGateway::Stub::ReaderSnapshotDone, &reply),
          "reporting the snapshot of", subtask);
  }

  // An event of the enumerator for reader `subtask`; false when that reader has not registered.
  bool deliver(int32_t subtask, const v1::OperatorEventMessage& m) {
    OperatorEventSink* sink = nullptr;
    {
      std::lock_guard lock(mu_);
      auto it = sinks_.find(subtask);
      if (it == sinks_.end()) return false;
      sink = it->second;
    }
    sink->send(from_message(m));
    return true;
  }

  static OperatorEvent from_message(const v1::OperatorEventMessage& m) {
    OperatorEvent e{m.kind() == static_cast<int32_t>(OperatorEvent::Kind::kNoMoreSplits) ? OperatorEvent::Kind::kNoMoreSplits
                                                                                         : OperatorEvent::Kind::kAddSplits,
                    {}};
    e.payload.assign(m.payload().begin(), m.payload().end());
    return e;
  }

 private:
  template <class Method, class Resp>
  grpc::Status call(int32_t subtask, int64_t checkpoint_id, Method method, Resp* resp) const {
    v1::ReaderRequest req;
    req.mutable_session()->set_leader_epoch(session_.leader_epoch);
    req.mutable_session()->set_task_manager_id(session_.task_manager_id);
    req.mutable_session()->set_registration_id(session_.registration_id);
    to_proto(runtime::ExecutionAttemptId{JobVertexId(vertex_), SubtaskIndex(subtask), attempt_}, req.mutable_reader());
    req.set_checkpoint_id(checkpoint_id);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms_));
    return (stub_.get()->*method)(&ctx, req, resp);
  }
  void check(const grpc::Status& s, const std::string& what, int32_t subtask) const {
    if (s.ok()) return;
    throw StatusError(from_grpc(s, what + " source reader " + std::to_string(subtask + 1) + " of vertex " +
                                       std::to_string(vertex_) + " with its split enumerator in the JobManager"));
  }

  std::shared_ptr<v1::SplitEnumeratorGateway::Stub> stub_;
  const TaskManagerSessionId session_;
  const int32_t vertex_, attempt_;
  const int64_t timeout_ms_;
  std::mutex mu_;
  std::map<int32_t, OperatorEventSink*> sinks_;
};

}  // namespace

struct TaskExecutorService::Attempt {
  uint64_t deployment_id = 0;
  int32_t number = 0;
  std::vector<std::pair<int32_t, int32_t>> subtasks;  // (vertex, subtask), once submitted
  // A deployment spread over several TaskManagers (PrepareAttempt): the process's data plane its channels are on, and
  // the router of their failures.
  std::shared_ptr<ChannelFailures> channel_failures;
  TaskManagerDataPlane* data_plane = nullptr;
  std::unique_ptr<TaskReports> reports;
  std::vector<std::unique_ptr<RemoteSourceCoordinator>> coordinators;  // by vertex; null for non-sources
  std::unique_ptr<cluster::InProcessDeployer> deployer;
  std::unique_ptr<cluster::DeployedTasks> tasks;

  ~Attempt() {
    if (channel_failures) channel_failures->detach();
    if (reports) reports->abandon();
    if (tasks) {
      tasks->cancel();
      tasks->join();
    }
    // After the tasks: nothing is left to send or receive. The connections stay for the other deployments.
    if (data_plane) data_plane->release(deployment_id);
  }
};

TaskExecutorService::TaskExecutorService(TaskExecutorSetup setup)
    : setup_(std::move(setup)), data_plane_(setup_.data_host, setup_.data_port) {}

TaskExecutorService::~TaskExecutorService() { cancel_running_attempt(); }

void TaskExecutorService::cancel_running_attempt() {
  std::map<uint64_t, std::unique_ptr<Attempt>> gone;
  {
    std::lock_guard lock(mu_);
    gone = std::move(deployments_);
    deployments_.clear();
  }
  gone.clear();  // cancels and joins outside the lock: task reports may still be on their way out
}

void TaskExecutorService::start_registration() {
  std::map<uint64_t, std::unique_ptr<Attempt>> gone;
  {
    std::lock_guard lock(mu_);
    gone = std::move(deployments_);
    deployments_.clear();
    last_deployment_ = 0;
    storage_job_.clear();
    // A new registration is a new id on the data plane (and maybe a new JobManager): peers reach it afresh. Under mu_,
    // so a PrepareAttempt of the new registration finds it reset, not reset under it; the deployments going have
    // their channels detached by it, and are cancelled next.
    data_plane_.reset();
  }
  gone.clear();
}

std::optional<int32_t> TaskExecutorService::running_attempt() {
  std::lock_guard lock(mu_);
  std::optional<int32_t> highest;
  for (const auto& [id, d] : deployments_) {
    if (d->tasks && (!highest || d->number > *highest)) highest = d->number;
  }
  return highest;
}

size_t TaskExecutorService::running_deployments() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [id, d] : deployments_) n += d->tasks ? 1 : 0;
  return n;
}

std::set<std::pair<int32_t, int32_t>> TaskExecutorService::hosted_subtasks() {
  std::unique_lock lock(mu_, std::try_to_lock);
  std::lock_guard hosted(hosted_mu_);
  if (lock.owns_lock()) {
    hosted_.clear();
    for (const auto& [id, d] : deployments_) {
      if (d->tasks) hosted_.insert(d->subtasks.begin(), d->subtasks.end());
    }
  }
  return hosted_;
}

TaskExecutorService::Attempt* TaskExecutorService::running_locked(uint64_t id, int32_t attempt_number) {
  auto it = deployments_.find(id);
  if (it == deployments_.end() || !it->second->tasks || it->second->number != attempt_number) return nullptr;
  return it->second.get();
}

std::vector<std::unique_ptr<TaskExecutorService::Attempt>> TaskExecutorService::take_overlapping_locked(
    const std::vector<std::pair<int32_t, int32_t>>& subtasks, uint64_t keep) {
  std::vector<std::unique_ptr<Attempt>> gone;
  for (auto it = deployments_.begin(); it != deployments_.end();) {
    bool overlaps = false;
    for (const auto& s : it->second->subtasks) {
      overlaps = overlaps || std::find(subtasks.begin(), subtasks.end(), s) != subtasks.end();
    }
    if (it->first != keep && overlaps) {
      gone.push_back(std::move(it->second));
      it = deployments_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

grpc::Status TaskExecutorService::admit(uint64_t epoch, TaskManagerSessionId* session) const {
  std::optional<TaskManagerSessionId> s = setup_.session();
  if (!s) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this TaskManager is not registered with a JobManager");
  if (s->leader_epoch != epoch) {
    return grpc::Status(grpc::StatusCode::ABORTED, "a JobManager of leader epoch " + std::to_string(epoch) +
                                                       " called; this TaskManager is registered under epoch " +
                                                       std::to_string(s->leader_epoch));
  }
  *session = std::move(*s);
  return grpc::Status::OK;
}

grpc::Status TaskExecutorService::PrepareAttempt(grpc::ServerContext*, const v1::PrepareAttemptRequest* request,
                                                 v1::PrepareAttemptResponse* response) {
  TaskManagerSessionId session;
  if (grpc::Status s = admit(request->leader_epoch(), &session); !s.ok()) return s;
  std::lock_guard lock(mu_);
  const int32_t n = request->attempt_number();
  const uint64_t id = request->deployment_id();
  if (id <= last_deployment_) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "deployment " + std::to_string(id) + " (attempt " + std::to_string(n) + ") comes after deployment " +
                            std::to_string(last_deployment_) + " was prepared, deployed or cancelled here");
  }
  last_deployment_ = id;
  auto attempt = std::make_unique<Attempt>();
  attempt->deployment_id = id;
  attempt->number = n;
  if (request->registration_id() != session.registration_id) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "deployment " + std::to_string(id) + " was allocated to registration " +
                            std::to_string(request->registration_id()) + "; this TaskManager is registered as " +
                            std::to_string(session.registration_id));
  }
  if (session.registration_id > static_cast<uint64_t>(INT32_MAX)) {
    return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "registration id " + std::to_string(session.registration_id) +
                                                            " does not fit a data-plane id (32 bits)");
  }
  Result<uint16_t> port =
      data_plane_.open(static_cast<int32_t>(session.registration_id), request->data_plane_fingerprint());
  if (!port.is_ok()) {
    return to_grpc(port.status().with_context("opening the data plane for deployment " + std::to_string(id) +
                                              " of attempt " + std::to_string(n) + " (taskmanager.host " +
                                              setup_.data_host + ", taskmanager.data.port " +
                                              std::to_string(setup_.data_port) + ")"));
  }
  attempt->channel_failures = std::make_shared<ChannelFailures>(setup_.job_graph, n);
  attempt->data_plane = &data_plane_;
  data_plane_.track(id, attempt->channel_failures);
  response->set_data_port(*port);
  deployments_[id] = std::move(attempt);
  return grpc::Status::OK;
}

Result<cluster::NetworkPlacement> TaskExecutorService::placement_of(const v1::SubmitAttemptRequest& request,
                                                                   const Attempt& attempt) {
  cluster::NetworkPlacement placement;
  placement.self = request.task_manager_index();
  placement.attempt_number = attempt.number;
  for (const v1::VertexPlacement& v : request.placement()) {
    placement.task_manager_of.emplace_back(v.task_manager_index().begin(), v.task_manager_index().end());
  }
  if (request.peers_size() == 0) return placement;  // one TaskManager's deployment: no channel leaves it
  // The deployment names TaskManagers by their index in it; the data plane by their registration ids.
  std::map<int32_t, int32_t> id_of;
  std::vector<TaskManagerDataPlane::Peer> peers;
  for (const v1::DataPlanePeer& peer : request.peers()) {
    if (peer.registration_id() == 0 || peer.registration_id() > static_cast<uint64_t>(INT32_MAX)) {
      return Status::invalid_argument("peer " + std::to_string(peer.task_manager_index()) +
                                      " has no valid registration id (" + std::to_string(peer.registration_id()) + ")");
    }
    const auto id = static_cast<int32_t>(peer.registration_id());
    id_of[peer.task_manager_index()] = id;
    peers.push_back({id, peer.task_manager_id(), peer.host(),
                     static_cast<uint16_t>(std::min<uint32_t>(peer.data_port(), 65535))});
  }
  auto self = id_of.find(placement.self);
  if (self == id_of.end()) {
    return Status::invalid_argument("the peers do not name this TaskManager (index " +
                                    std::to_string(placement.self) + ")");
  }
  placement.self = self->second;
  for (auto& per_vertex : placement.task_manager_of) {
    for (int32_t& tm : per_vertex) {
      if (tm < 0) continue;
      auto it = id_of.find(tm);
      if (it == id_of.end()) return Status::invalid_argument("no peer has index " + std::to_string(tm));
      tm = it->second;
    }
  }
  SLUICE_RETURN_IF_ERROR(attempt.data_plane->declare_peers(peers));
  placement.data_plane = attempt.data_plane->manager();
  placement.data_plane_owner = attempt.deployment_id;
  return placement;
}

grpc::Status TaskExecutorService::SubmitAttempt(grpc::ServerContext*, const v1::SubmitAttemptRequest* request,
                                                v1::TaskExecutorReply*) {
  TaskManagerSessionId session;
  if (grpc::Status s = admit(request->leader_epoch(), &session); !s.ok()) return s;
  // One submission at a time, each attempt at most once and never after a later one or its own cancellation: a
  // SubmitAttempt the JobManager gave up on (deadline) must not start tasks beside the attempt that replaced it.
  std::lock_guard lock(mu_);
  const uint64_t deployment = request->deployment_id();
  const bool spread = request->peers_size() > 0;
  std::unique_ptr<Attempt> attempt;
  if (spread) {
    auto it = deployments_.find(deployment);
    if (it == deployments_.end() || it->second->number != request->attempt_number() || !it->second->data_plane ||
        it->second->tasks) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "deployment " + std::to_string(deployment) + " of attempt " +
                              std::to_string(request->attempt_number()) +
                              " spans several TaskManagers but was not prepared here (PrepareAttempt)");
    }
    attempt = std::move(it->second);
    deployments_.erase(it);
  } else {
    if (deployment <= last_deployment_) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "deployment " + std::to_string(deployment) + " (attempt " +
                              std::to_string(request->attempt_number()) + ") comes after deployment " +
                              std::to_string(last_deployment_) + " was prepared, deployed or cancelled here");
    }
    last_deployment_ = deployment;
    attempt = std::make_unique<Attempt>();
    attempt->deployment_id = deployment;
    attempt->number = request->attempt_number();
  }
  const graph::JobGraph& jg = *setup_.job_graph;
  const cluster::MiniClusterConfig& cfg = *setup_.config;

  if (cfg.has_coordinator() && cfg.storage && request->job_id() != storage_job_) {
    // Tasks write their state under the run's job folder, which this process's storage must know.
    JobId job;
    if (!JobId::parse(request->job_id(), &job)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "job id '" + request->job_id() + "' is not 32 hex digits");
    }
    // Without periodic checkpoints the storage serves savepoints only: it makes no job folder here either.
    Status initialized = cfg.checkpointing ? cfg.storage->initialize(job) : cfg.storage->initialize_for_savepoints(job);
    if (!initialized.is_ok()) {
      return to_grpc(initialized.with_context("initializing checkpoint storage " + cfg.storage->describe()));
    }
    storage_job_ = request->job_id();
  }
  attempt->reports = std::make_unique<TaskReports>(setup_.jobmanager_address, session, attempt->number,
                                                   setup_.report_timeout_ms, setup_.before_task_finished);
  cluster::AttemptDeployment d;
  d.attempt_number = attempt->number;
  auto enumerators = std::make_shared<v1::SplitEnumeratorGateway::Stub>(
      grpc::CreateChannel(setup_.jobmanager_address, grpc::InsecureChannelCredentials()));
  attempt->coordinators.resize(jg.vertices.size());
  for (const auto& v : jg.vertices) {
    if (v.is_source) {
      attempt->coordinators[static_cast<size_t>(v.id)] = std::make_unique<RemoteSourceCoordinator>(
          enumerators, session, v.id, attempt->number, setup_.report_timeout_ms);
    }
    d.source_coordinators.push_back(attempt->coordinators[static_cast<size_t>(v.id)].get());
  }
  for (const v1::SubtaskDeploymentMessage& m : request->subtasks()) {
    const runtime::ExecutionAttemptId id = from_proto(m.id());
    if (id.vertex.value() < 0 || static_cast<size_t>(id.vertex.value()) >= jg.vertices.size() ||
        id.subtask.value() < 0 || id.subtask.value() >= jg.vertices[static_cast<size_t>(id.vertex.value())].parallelism ||
        id.attempt_number != attempt->number) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "no subtask " + id.to_string() + " in the JobGraph this TaskManager built");
    }
    d.subtasks.push_back({id, KeyGroupRange(m.key_group_start(), m.key_group_end_inclusive())});
    attempt->subtasks.emplace_back(id.vertex.value(), id.subtask.value());
  }
  // A deployment of these subtasks before (cancelled at the JobManager while this TaskManager could not be reached)
  // goes first; joined under mu_: its reports go to the JobManager, not through mu_.
  take_overlapping_locked(attempt->subtasks, deployment).clear();
  if (request->placement_size() > 0) {
    Result<cluster::NetworkPlacement> placement = placement_of(*request, *attempt);
    if (!placement.is_ok()) {
      return to_grpc(placement.status().with_context("deployment " + std::to_string(deployment) + " of attempt " +
                                                     std::to_string(attempt->number)));
    }
    d.placement = std::move(*placement);
  }
  if (request->has_restore()) {
    const v1::RestoreReference& r = request->restore();
    if (!cfg.storage) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "restoring " + r.location() + ": this TaskManager has no checkpoint storage");
    }
    auto md = cfg.storage->read_metadata(r.location());
    if (!md.is_ok()) return to_grpc(md.status().with_context("restoring attempt " + std::to_string(attempt->number)));
    if (md->checkpoint_id.value() != r.checkpoint_id()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          r.location() + " holds checkpoint " + std::to_string(md->checkpoint_id.value()) +
                              ", the JobManager restores checkpoint " + std::to_string(r.checkpoint_id()));
    }
    d.restore = cluster::AttemptRestore{cluster::RestorePoint{std::move(*md), r.location(), r.owned()},
                                        r.rehash_key_groups() ? cluster::KeyGroupRehash::kRehash
                                                              : cluster::KeyGroupRehash::kRefuse};
  }
  cluster::JobTaskContext context;
  context.stream_graph = setup_.stream_graph;
  context.job_graph = &jg;
  context.config = &cfg;
  context.listener = attempt->reports.get();
  context.checkpoint_responder = cfg.has_coordinator() ? attempt->reports.get() : nullptr;
  context.job_metrics = setup_.job_metrics;
  context.fault_injector = setup_.fault_injector;
  context.job_id = request->job_id();
  context.lineage_job_ids.assign(request->lineage_job_ids().begin(), request->lineage_job_ids().end());
  attempt->deployer = std::make_unique<cluster::InProcessDeployer>(std::move(context));
  // Installed before its tasks start (mu_ is held throughout): their readers' enumerator events find it.
  Attempt* installed = (deployments_[deployment] = std::move(attempt)).get();
  {
    // Hosted from before its tasks start, so a task that finishes at once still reports its final metrics.
    std::lock_guard hosted(hosted_mu_);
    hosted_.insert(installed->subtasks.begin(), installed->subtasks.end());
  }
  const std::optional<cluster::NetworkPlacement> placement = d.placement;
  auto tasks = installed->deployer->deploy(std::move(d));
  if (!tasks.is_ok()) {
    deployments_.erase(deployment);
    return to_grpc(tasks.status());
  }
  installed->tasks = std::move(*tasks);
  if (placement && installed->channel_failures) installed->channel_failures->attach(installed->tasks.get(), *placement);
  spdlog::info("TaskManager '{}': attempt {} deployed ({} subtasks, deployment {})", session.task_manager_id,
               installed->number, request->subtasks_size(), deployment);
  return grpc::Status::OK;
}

grpc::Status TaskExecutorService::CancelAttempt(grpc::ServerContext*, const v1::AttemptRequest* request,
                                                v1::TaskExecutorReply*) {
  TaskManagerSessionId session;
  if (grpc::Status s = admit(request->leader_epoch(), &session); !s.ok()) return s;
  std::lock_guard lock(mu_);
  last_deployment_ = std::max(last_deployment_, request->deployment_id());  // a late SubmitAttempt of it is refused
  deployments_.erase(request->deployment_id());
  return grpc::Status::OK;
}

grpc::Status TaskExecutorService::TriggerCheckpoint(grpc::ServerContext*, const v1::TriggerCheckpointRequest* request,
                                                    v1::TaskExecutorReply*) {
  TaskManagerSessionId session;
  if (grpc::Status s = admit(request->leader_epoch(), &session); !s.ok()) return s;
  runtime::CheckpointBarrier barrier;
  barrier.id = CheckpointId(request->checkpoint_id());
  barrier.timestamp_ms = request->timestamp_ms();
  barrier.type = request->savepoint() ? checkpoint::SnapshotType::kSavepoint : checkpoint::SnapshotType::kCheckpoint;
  barrier.format = request->native_format() ? checkpoint::SavepointFormatType::kNative
                                            : checkpoint::SavepointFormatType::kCanonical;
  std::map<JobVertexId, std::vector<uint8_t>> states;
  for (const v1::EnumeratorState& e : request->enumerator_states()) {
    states[JobVertexId(e.vertex())].assign(e.state().begin(), e.state().end());
  }
  std::lock_guard lock(mu_);
  Attempt* attempt = running_locked(request->deployment_id(), request->attempt_number());
  if (!attempt) return grpc::Status::OK;
  if (barrier.type == checkpoint::SnapshotType::kSavepoint && !request->savepoint_location().empty()) {
    // This process's storage writes the savepoint's state into its folder, as the JobManager's does.
    Status routed = setup_.config->storage ? setup_.config->storage->begin_savepoint(barrier.id, request->savepoint_location())
                                           : Status::failed_precondition("no checkpoint storage on this TaskManager");
    if (!routed.is_ok()) return to_grpc(routed.with_context("savepoint " + std::to_string(barrier.id.value())));
  }
  attempt->tasks->trigger_checkpoint(barrier, request->savepoint_location(), std::move(states));
  return grpc::Status::OK;
}

grpc::Status TaskExecutorService::NotifyCheckpoint(grpc::ServerContext*, const v1::NotifyCheckpointRequest* request,
                                                   v1::TaskExecutorReply*) {
  TaskManagerSessionId session;
  if (grpc::Status s = admit(request->leader_epoch(), &session); !s.ok()) return s;
  std::lock_guard lock(mu_);
  Attempt* attempt = running_locked(request->deployment_id(), request->attempt_number());
  if (!attempt) return grpc::Status::OK;
  if (request->completed()) {
    attempt->tasks->notify_checkpoint_complete(CheckpointId(request->checkpoint_id()));
  } else {
    attempt->tasks->notify_checkpoint_aborted(CheckpointId(request->checkpoint_id()));
  }
  return grpc::Status::OK;
}

grpc::Status TaskExecutorService::ControlTasks(grpc::ServerContext*, const v1::ControlTasksRequest* request,
                                               v1::TaskExecutorReply*) {
  TaskManagerSessionId session;
  if (grpc::Status s = admit(request->leader_epoch(), &session); !s.ok()) return s;
  std::lock_guard lock(mu_);
  Attempt* attempt = running_locked(request->deployment_id(), request->attempt_number());
  if (!attempt) return grpc::Status::OK;
  cluster::DeployedTasks& t = *attempt->tasks;
  switch (request->control()) {
    case v1::STOP_SOURCES: t.stop_sources(false); break;
    case v1::STOP_SOURCES_AND_DRAIN: t.stop_sources(true); break;
    case v1::RESUME_SOURCES: t.resume_sources(); break;
    case v1::FINISH_TASKS: t.finish(); break;
    case v1::WAKE_TASKS: t.wake(); break;
    default:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "unknown task control " + std::to_string(static_cast<int>(request->control())));
  }
  return grpc::Status::OK;
}

grpc::Status TaskExecutorService::SendOperatorEvent(grpc::ServerContext*, const v1::SendOperatorEventRequest* request,
                                                    v1::TaskExecutorReply*) {
  TaskManagerSessionId session;
  if (grpc::Status s = admit(request->leader_epoch(), &session); !s.ok()) return s;
  const runtime::ExecutionAttemptId reader = from_proto(request->reader());
  std::lock_guard lock(mu_);
  auto it = deployments_.find(request->deployment_id());
  if (it == deployments_.end() || it->second->number != reader.attempt_number) return grpc::Status::OK;
  Attempt* attempt = it->second.get();
  const size_t v = static_cast<size_t>(reader.vertex.value());
  if (reader.vertex.value() < 0 || v >= attempt->coordinators.size() || !attempt->coordinators[v] ||
      !attempt->coordinators[v]->deliver(reader.subtask.value(), request->event())) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no registered source reader " + reader.to_string());
  }
  return grpc::Status::OK;
}

}  // namespace sluice::rpc
