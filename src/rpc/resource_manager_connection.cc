#include "rpc/resource_manager_connection.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "proto/resource_manager.grpc.pb.h"
#include "rpc/grpc_status.h"
#include "rpc/metric_report.h"
#include "rpc/resource_manager_service.h"

namespace sluice::rpc {
namespace {
// How often an unregistered TaskManager says that no JobManager answers.
constexpr int64_t kUnansweredWarningMs = 10'000;
// How long a lost connection waits for its watch to end by itself (and deliver a job-ended event in flight).
constexpr int64_t kWatchDrainMs = 300;
}  // namespace

struct ResourceManagerConnection::Impl {
  ResourceManagerConnectionConfig config;
  Listener* listener;
  const Clock* clock;

  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool watching = false;                  // the JobManager confirmed the current watch call
  bool watch_ended = false;               // the current watch call returned
  std::string watch_reason;               // why
  std::string job_ended;                  // the last event's job status, once the JobManager's job ended
  std::unique_ptr<grpc::ClientContext> watch_context;  // of the current watch call, to cancel it
  std::thread thread;
  std::thread watcher;
  // The registration heartbeats go under, while there is one, and the stub they use (both guarded by mu).
  std::optional<v1::TaskManagerSession> current_session;
  std::shared_ptr<v1::ResourceManagerGateway::Stub> current_stub;
  // Reports are numbered in the order their values were read, so the JobManager keeps the newest of two that cross.
  std::mutex report_mu;
  uint64_t report_sequence = 0;  // guarded by report_mu

  Impl(ResourceManagerConnectionConfig c, Listener* l, const Clock* k) : config(std::move(c)), listener(l), clock(k) {}

  v1::TaskManagerSession session_of(const v1::RegisterTaskManagerResponse& reg) const {
    v1::TaskManagerSession s;
    s.set_leader_epoch(reg.leader_epoch());
    s.set_task_manager_id(config.registration.task_manager_id);
    s.set_registration_id(reg.registration_id());
    return s;
  }

  // The heartbeat of `session`, with a metric report when the connection has metrics to report.
  v1::HeartbeatRequest heartbeat_of(const v1::TaskManagerSession& s) {
    v1::HeartbeatRequest req;
    *req.mutable_session() = s;
    if (config.task_metrics) {
      std::lock_guard lock(report_mu);
      to_proto(config.task_metrics(), ++report_sequence, req.mutable_metrics());
    }
    return req;
  }

  // Sleeps up to `ms`; false once stop() was called.
  bool sleep_ms(int64_t ms) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stopping || watch_ended; });
    return !stopping;
  }
  bool stopped() {
    std::lock_guard lock(mu);
    return stopping;
  }

  void run() {
    // Reconnect within 100 ms..1 s (gRPC's default backoff starts at 1 s and grows to 2 min): a JobManager that
    // comes back is found quickly. Keepalive pings notice a JobManager that vanished without closing the connection.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 2'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20'000);  // a loaded peer may be slow to answer a ping
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    auto channel = grpc::CreateCustomChannel(config.jobmanager_address, grpc::InsecureChannelCredentials(), args);
    std::shared_ptr<v1::ResourceManagerGateway::Stub> stub = v1::ResourceManagerGateway::NewStub(channel);
    {
      std::lock_guard lock(mu);
      current_stub = stub;
    }
    // Since when this TaskManager has had no registration (taskmanager.registration.timeout counts from here).
    auto unregistered_since = std::chrono::steady_clock::now();
    int64_t warned_at_ms = 0;  // of the wait; a wrong jobmanager.rpc.address shows within seconds, not at the timeout
    while (!stopped()) {
      v1::RegisterTaskManagerResponse registered;
      Status refused = Status::ok();
      std::string unanswered;
      bool held_elsewhere = false;
      if (!register_once(*stub, &registered, &refused, &unanswered, &held_elsewhere)) {
        const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                                     unregistered_since).count();
        const bool warn_now = warned_at_ms == 0 || waited_ms - warned_at_ms >= kUnansweredWarningMs;
        if (refused.is_ok() && held_elsewhere && warn_now) {
          warned_at_ms = std::max<int64_t>(waited_ms, 1);
          spdlog::warn("TaskManager '{}': the JobManager at {} refuses it for now: {}; trying again until "
                       "taskmanager.registration.timeout ({} s)",
                       config.registration.task_manager_id, config.jobmanager_address, unanswered,
                       config.registration_timeout_ms / 1000);
        } else if (refused.is_ok() && waited_ms - warned_at_ms >= kUnansweredWarningMs) {
          warned_at_ms = waited_ms;
          spdlog::warn("TaskManager '{}': no JobManager answers at {} (jobmanager.rpc.address, jobmanager.rpc.port) "
                       "for {} s: {}; trying again until taskmanager.registration.timeout ({} s)",
                       config.registration.task_manager_id, config.jobmanager_address, waited_ms / 1000, unanswered,
                       config.registration_timeout_ms / 1000);
        }
        if (refused.is_ok() && config.registration_timeout_ms > 0 && waited_ms >= config.registration_timeout_ms) {
          refused = Status::timeout("no JobManager at " + config.jobmanager_address + " accepted this TaskManager within " +
                                    "taskmanager.registration.timeout (" + std::to_string(config.registration_timeout_ms) +
                                    " ms)" + (unanswered.empty() ? "" : ": " + unanswered));
        }
        if (!refused.is_ok()) {
          spdlog::error("TaskManager '{}': {}", config.registration.task_manager_id, refused.to_string());
          listener->on_refused(refused);
          return;
        }
        if (!sleep_ms(config.retry_interval_ms)) return;
        continue;
      }
      cluster::HeartbeatSettings hb{registered.heartbeat_interval_ms(), registered.heartbeat_timeout_ms(),
                                    registered.heartbeat_rpc_failure_threshold()};
      if (!hb.validate().is_ok()) hb = cluster::HeartbeatSettings{};
      // The listener learns the registration before the watch opens: the JobManager offers this TaskManager's slots
      // once it sees the watch, and a deployment must then find the registration known here. From the watch's first
      // event on, either side sees the other go at once.
      listener->on_registered(registered.leader_epoch(), registered.registration_id(), hb);
      const std::string not_watched = start_watch(*stub, registered, hb.timeout_ms);
      if (stopped()) {
        end_watch();
        return;
      }
      if (!not_watched.empty()) {
        end_watch();
        spdlog::warn("TaskManager '{}': registered with the JobManager at {}, but {}; registering again",
                     config.registration.task_manager_id, config.jobmanager_address, not_watched);
        listener->on_jobmanager_lost(not_watched);
        unregistered_since = std::chrono::steady_clock::now();
        if (!sleep_ms(config.retry_interval_ms)) return;
        continue;
      }
      const std::string lost = keep_alive(*stub, registered, hb);
      {
        // The JobManager unregisters this TaskManager right after writing the job-ended event, so a heartbeat can
        // see the unregistration before the watch reads the event: let the watch end by itself for a moment (it
        // does at once when the JobManager's process went too) before taking the end for a loss.
        std::unique_lock lock(mu);
        cv.wait_for(lock, std::chrono::milliseconds(kWatchDrainMs), [&] { return stopping || watch_ended; });
      }
      end_watch();
      if (stopped()) return;
      std::string ended;
      {
        std::lock_guard lock(mu);
        ended = job_ended;
      }
      if (!ended.empty()) {
        spdlog::info("TaskManager '{}': the JobManager's job ended ({}); the TaskManager stops",
                     config.registration.task_manager_id, ended);
        listener->on_job_ended(ended);
        return;
      }
      spdlog::warn("TaskManager '{}': JobManager at {} lost: {}; registering again",
                   config.registration.task_manager_id, config.jobmanager_address, lost);
      listener->on_jobmanager_lost(lost);
      unregistered_since = std::chrono::steady_clock::now();
    }
  }

  // True when registered. False with *refused set when the JobManager refused for good; false with *refused ok
  // when no JobManager answered (retry; *unanswered says what gRPC saw).
  // *held_elsewhere: the JobManager answered that another live TaskManager holds this one's id (retry).
  bool register_once(v1::ResourceManagerGateway::Stub& stub, v1::RegisterTaskManagerResponse* out, Status* refused,
                     std::string* unanswered, bool* held_elsewhere) {
    const cluster::TaskManagerRegistration& r = config.registration;
    v1::RegisterTaskManagerRequest req;
    req.set_protocol_version(kControlProtocolVersion);
    req.set_task_manager_id(r.task_manager_id);
    req.set_host(r.host);
    req.set_rpc_port(static_cast<uint32_t>(r.rpc_port));
    req.set_data_port(static_cast<uint32_t>(r.data_port));
    req.set_num_slots(static_cast<uint32_t>(r.num_slots));
    req.set_sluice_version(r.sluice_version);
    req.set_job_graph_fingerprint(r.job_graph_fingerprint);
    req.mutable_job_settings()->insert(r.job_settings.begin(), r.job_settings.end());
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(std::max<int64_t>(config.retry_interval_ms, 1'000)));
    grpc::Status s = stub.RegisterTaskManager(&ctx, req, out);
    if (s.ok()) return true;
    const grpc::StatusCode c = s.error_code();
    if (c == grpc::StatusCode::FAILED_PRECONDITION || c == grpc::StatusCode::INVALID_ARGUMENT) {
      *refused = from_grpc(s, "registering with the JobManager at " + config.jobmanager_address);
    }
    *unanswered = s.error_message();
    *held_elsewhere = c == grpc::StatusCode::ALREADY_EXISTS;
    return false;
  }

  // Heartbeats until the JobManager is lost (returns why) or stop() (returns "").
  std::string keep_alive(v1::ResourceManagerGateway::Stub& stub, const v1::RegisterTaskManagerResponse& reg,
                         const cluster::HeartbeatSettings& hb) {
    int32_t failures = 0;
    int64_t last_ok_ms = clock->now_ms();
    struct Unset {
      Impl* impl;
      ~Unset() {
        std::lock_guard lock(impl->mu);
        impl->current_session.reset();
      }
    } unset{this};
    {
      std::lock_guard lock(mu);
      current_session = session_of(reg);
    }
    while (true) {
      {
        std::lock_guard lock(mu);
        if (stopping) return "";
        if (watch_ended) return watch_reason;
      }
      v1::HeartbeatRequest req = heartbeat_of(session_of(reg));
      v1::HeartbeatResponse resp;
      grpc::ClientContext ctx;
      // heartbeat.rpc-failure-threshold heartbeats that each time out add up to heartbeat.timeout: a JobManager that
      // is only slow to answer one (a loaded machine) is not lost, one that stopped answering is within the timeout.
      const int64_t deadline_ms = std::max(hb.interval_ms, hb.timeout_ms / std::max(hb.rpc_failure_threshold, 1));
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
      grpc::Status s = stub.Heartbeat(&ctx, req, &resp);
      const int64_t now = clock->now_ms();
      if (s.ok()) {
        failures = 0;
        last_ok_ms = now;
      } else if (s.error_code() == grpc::StatusCode::NOT_FOUND || s.error_code() == grpc::StatusCode::ABORTED) {
        return "heartbeat refused: " + s.error_message();
      } else if (++failures >= hb.rpc_failure_threshold) {
        return std::to_string(failures) + " heartbeats in a row failed (heartbeat.rpc-failure-threshold " +
               std::to_string(hb.rpc_failure_threshold) + "), the last: " + s.error_message();
      }
      if (now - last_ok_ms > hb.timeout_ms) {
        return "no heartbeat answered for " + std::to_string(now - last_ok_ms) + " ms (heartbeat.timeout " +
               std::to_string(hb.timeout_ms) + " ms)";
      }
      if (!sleep_ms(hb.interval_ms)) return "";
    }
  }

  // Opens the watch call and waits up to `timeout_ms` for the JobManager's first event. Returns "" once watched,
  // or why not ("" too when stop() was called: the caller sees `stopping`).
  std::string start_watch(v1::ResourceManagerGateway::Stub& stub, const v1::RegisterTaskManagerResponse& reg,
                          int64_t timeout_ms) {
    open_watch(stub, reg);
    std::unique_lock lock(mu);
    const bool done = cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                  [&] { return stopping || watch_ended || watching; });
    if (stopping || watching) return "";
    return done ? watch_reason : "the JobManager did not watch the connection within " + std::to_string(timeout_ms) + " ms";
  }

  void open_watch(v1::ResourceManagerGateway::Stub& stub, const v1::RegisterTaskManagerResponse& reg) {
    std::lock_guard lock(mu);
    watch_ended = false;
    watching = false;
    watch_reason.clear();
    watch_context = std::make_unique<grpc::ClientContext>();
    grpc::ClientContext* ctx = watch_context.get();
    v1::WatchConnectionRequest req;
    *req.mutable_session() = session_of(reg);
    watcher = std::thread([this, &stub, ctx, req] {
      auto reader = stub.WatchConnection(ctx, req);
      v1::ConnectionEvent ev;
      while (reader->Read(&ev)) {
        {
          std::lock_guard l(mu);
          watching = true;
          if (!ev.job_ended().empty()) job_ended = ev.job_ended();
        }
        cv.notify_all();
      }
      grpc::Status s = reader->Finish();
      {
        std::lock_guard l(mu);
        watch_ended = true;
        watch_reason = "the connection watch ended (" + std::string(s.ok() ? "OK" : s.error_message()) + ")";
      }
      cv.notify_all();
    });
  }

  void end_watch() {
    {
      std::lock_guard lock(mu);
      if (watch_context) watch_context->TryCancel();
    }
    if (watcher.joinable()) watcher.join();
    std::lock_guard lock(mu);
    watch_context.reset();
    watch_ended = false;  // reported already: the next registration attempt waits its full interval
  }
};

ResourceManagerConnection::ResourceManagerConnection(ResourceManagerConnectionConfig config, Listener* listener,
                                                     const Clock* clock)
    : impl_(std::make_unique<Impl>(std::move(config), listener, clock)) {}

ResourceManagerConnection::~ResourceManagerConnection() { stop(); }

void ResourceManagerConnection::report_metrics_now() {
  std::optional<v1::TaskManagerSession> session;
  std::shared_ptr<v1::ResourceManagerGateway::Stub> stub;
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopping) return;
    session = impl_->current_session;
    stub = impl_->current_stub;
  }
  if (!session || !stub) return;
  v1::HeartbeatRequest req = impl_->heartbeat_of(*session);
  v1::HeartbeatResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  grpc::Status s = stub->Heartbeat(&ctx, req, &resp);
  if (!s.ok()) {
    spdlog::debug("TaskManager '{}': a metric report was not delivered: {}", impl_->config.registration.task_manager_id,
                  s.error_message());
  }
}

void ResourceManagerConnection::start() {
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

void ResourceManagerConnection::stop() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    if (impl_->watch_context) impl_->watch_context->TryCancel();
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace sluice::rpc
