// ResourceManager: the JobManager's view of its TaskManagers and their slots (Flink's ResourceManager and
// SlotManager, for one job in application mode). A TaskManager registers with its slots and then heartbeats; one
// whose heartbeats stop for heartbeat.timeout is taken as lost, as is one whose connection dropped, and its slots go
// with it. A job asks for the slots it needs (slot sharing as in Flink's default group: slot k holds subtask k of
// every vertex, so a job needs as many slots as its highest vertex parallelism).
//
// Pure bookkeeping: time comes from the injected Clock and nothing here talks to the network (the gRPC service in
// src/rpc adapts it), so every decision is tested with a manual clock.
//
// Heartbeat keys and defaults follow Flink's HeartbeatManagerOptions: heartbeat.interval (10 s), heartbeat.timeout
// (50 s), heartbeat.rpc-failure-threshold (2: consecutive failed heartbeat RPCs that count as a lost peer at once).
// Thread-safety: every method may be called from any thread (one internal mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/status.h"

namespace sluice::cluster {

struct HeartbeatSettings {
  int64_t interval_ms = 10'000;     // heartbeat.interval, > 0
  int64_t timeout_ms = 50'000;      // heartbeat.timeout, > interval_ms
  int32_t rpc_failure_threshold = 2;  // heartbeat.rpc-failure-threshold, >= 1

  // kInvalidArgument naming the key, the value and what is expected.
  Status validate() const;
};

// What a TaskManager says about itself when it registers.
struct TaskManagerRegistration {
  std::string task_manager_id;  // unique per TaskManager process, kept when it registers again
  std::string host;             // taskmanager.host: where its TaskExecutor and data ports are reached
  int32_t rpc_port = 0;         // its TaskExecutor's port (1..65535)
  int32_t data_port = 0;        // taskmanager.data.port as configured; 0: an ephemeral port for each attempt
  int32_t num_slots = 1;        // taskmanager.numberOfTaskSlots, >= 1
  std::string sluice_version;   // the Sluice release the process runs
  uint64_t job_graph_fingerprint = 0;  // of the JobGraph the process built (application mode: the same program)
  // The options the fingerprint covers, by name (graph::fingerprint_settings): named in a refusal when they differ.
  std::map<std::string, std::string> job_settings;
};

// A registered TaskManager, as /taskmanagers shows it.
struct TaskManagerInfo {
  TaskManagerRegistration registration;
  uint64_t registration_id = 0;  // changes with every registration, so a report of an older one is told apart
  int64_t registered_at_ms = 0;
  int64_t last_heartbeat_ms = 0;
  int32_t allocated_slots = 0;
};

// One slot given to a job: slot `slot_index` of TaskManager `task_manager_id`.
struct AllocatedSlot {
  std::string task_manager_id;
  int32_t slot_index = 0;
  bool operator==(const AllocatedSlot&) const = default;
};

struct LostTaskManager {
  std::string task_manager_id;
  uint64_t registration_id = 0;
  std::string reason;  // "no heartbeat for 50000 ms", "connection lost: ...", "registered again"
  std::vector<AllocatedSlot> slots;  // the slots the job held on it
};

class ResourceManager {
 public:
  // `sluice_version` and `job_graph_fingerprint`: what every TaskManager must run; `job_settings`: the options that
  // fingerprint covers (graph::fingerprint_settings), to name those that differ. `clock` must outlive this.
  ResourceManager(std::string sluice_version, uint64_t job_graph_fingerprint, HeartbeatSettings heartbeats,
                  const Clock* clock, std::map<std::string, std::string> job_settings = {});

  const HeartbeatSettings& heartbeats() const { return heartbeats_; }

  // Registers a TaskManager and returns its registration id. A known id registers again (a restarted process):
  // the old registration is lost (its slots reported by take_lost) and the new one starts with free slots.
  // kFailedPrecondition naming both values when its Sluice version or JobGraph fingerprint differs from the
  // JobManager's (and each of the job settings that differ, with both values); kInvalidArgument for an empty id or host, an RPC port outside 1..65535, a data port outside
  // 0..65535, or fewer than 1 slot.
  // An id held by a connected TaskManager at another host:port whose heartbeats are within heartbeat.timeout is
  // refused as kFailedPrecondition with retriable() set: two processes with one taskmanager.resource-id; the
  // newcomer may try again once the holder is gone.
  // `connected` false: its slots are offered only once mark_connected says the TaskManager knows its registration
  // (a TaskManager registering over RPC answers deployments only from then on).
  Result<uint64_t> register_task_manager(const TaskManagerRegistration& registration, bool connected = true);
  // The TaskManager of `registration_id` watches its connection: it knows its registration, its slots are offered.
  void mark_connected(const std::string& task_manager_id, uint64_t registration_id);

  // A heartbeat from `task_manager_id` under `registration_id`. kNotFound when that registration is unknown (never
  // registered, lost, or replaced): the TaskManager must register again.
  Status heartbeat(const std::string& task_manager_id, uint64_t registration_id);

  // True while `registration_id` is the TaskManager's current registration.
  bool is_registered(const std::string& task_manager_id, uint64_t registration_id) const;

  // The TaskManager's connection dropped (or its process is known dead): lost at once with `reason`. Unknown or
  // replaced registrations are ignored.
  void disconnect(const std::string& task_manager_id, uint64_t registration_id, const std::string& reason);

  // The TaskManager leaves without being lost (it was told that the job ended): gone with its slots, not reported
  // by take_lost. Unknown or replaced registrations are ignored.
  void unregister(const std::string& task_manager_id, uint64_t registration_id);

  // Registrations whose last heartbeat is more than heartbeat.timeout old at `now_ms` (the clock's now_ms() when
  // omitted) are lost now. Returns every TaskManager lost since the last call (by timeout, disconnect or
  // re-registration), in the order they were lost.
  std::vector<LostTaskManager> take_lost(std::optional<int64_t> now_ms = std::nullopt);

  // Slots of all registered TaskManagers, and those offered (connected) and not given to a job.
  int32_t total_slots() const;
  int32_t free_slots() const;

  // Gives `count` free slots to the job. `spread_out` (cluster.evenly-spread-out-slots): one from each TaskManager
  // in turn, the one with the most free slots first; otherwise TaskManagers are filled one after another in
  // registration order. kFailedPrecondition (nothing allocated) naming the count and the free slots when fewer are
  // free; kInvalidArgument for count < 1.
  Result<std::vector<AllocatedSlot>> allocate(int32_t count, bool spread_out);
  // Frees every slot the job holds (before a failover allocates again).
  void release_all();

  std::vector<TaskManagerInfo> task_managers() const;  // in registration order

 private:
  struct Entry {
    TaskManagerInfo info;
    std::vector<bool> slot_used;
    uint64_t order = 0;  // registration order
    bool connected = true;
  };
  void lose_locked(std::map<std::string, Entry>::iterator it, std::string reason);

  const std::string sluice_version_;
  const uint64_t fingerprint_;
  const std::map<std::string, std::string> job_settings_;
  const HeartbeatSettings heartbeats_;
  const Clock* clock_;

  mutable std::mutex mu_;
  std::map<std::string, Entry> task_managers_;
  std::vector<LostTaskManager> lost_;
  uint64_t next_registration_id_ = 1;
  uint64_t next_order_ = 0;
};

}  // namespace sluice::cluster
