#include "cluster/resource_manager.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace sluice::cluster {
namespace {

std::string hex(uint64_t v) { return fmt::format("{:016x}", v); }

// "setting checkpointing.dir: TaskManager 'a', JobManager 'b'; ..." for each name whose value differs or is missing on
// one side (the first five, then how many more); empty when the two agree.
std::string settings_differences(const std::map<std::string, std::string>& task_manager,
                                 const std::map<std::string, std::string>& job_manager) {
  if (task_manager.empty() && !job_manager.empty()) return "the TaskManager sent no job options";
  auto value = [](const std::map<std::string, std::string>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("not set") : "'" + it->second + "'";
  };
  std::map<std::string, std::string> all = task_manager;
  all.insert(job_manager.begin(), job_manager.end());
  std::vector<std::string> lines;
  for (const auto& [key, unused] : all) {
    auto tm = task_manager.find(key);
    auto jm = job_manager.find(key);
    if (tm != task_manager.end() && jm != job_manager.end() && tm->second == jm->second) continue;
    lines.push_back(key + ": TaskManager " + value(task_manager, key) + ", JobManager " + value(job_manager, key));
  }
  constexpr size_t kShown = 5;
  std::string out;
  for (size_t i = 0; i < lines.size() && i < kShown; ++i) out += (i == 0 ? "" : "; ") + lines[i];
  if (lines.size() > kShown) out += "; and " + std::to_string(lines.size() - kShown) + " more";
  return out;
}

}  // namespace

Status HeartbeatSettings::validate() const {
  if (interval_ms <= 0) {
    return Status::invalid_argument("heartbeat.interval " + std::to_string(interval_ms) + " ms: expected > 0");
  }
  if (timeout_ms <= interval_ms) {
    return Status::invalid_argument("heartbeat.timeout " + std::to_string(timeout_ms) +
                                    " ms: expected more than heartbeat.interval (" + std::to_string(interval_ms) +
                                    " ms)");
  }
  if (rpc_failure_threshold < 1) {
    return Status::invalid_argument("heartbeat.rpc-failure-threshold " + std::to_string(rpc_failure_threshold) +
                                    ": expected >= 1");
  }
  return Status::ok();
}

ResourceManager::ResourceManager(std::string sluice_version, uint64_t job_graph_fingerprint,
                                 HeartbeatSettings heartbeats, const Clock* clock,
                                 std::map<std::string, std::string> job_settings)
    : sluice_version_(std::move(sluice_version)), fingerprint_(job_graph_fingerprint),
      job_settings_(std::move(job_settings)), heartbeats_(heartbeats), clock_(clock) {}

Result<uint64_t> ResourceManager::register_task_manager(const TaskManagerRegistration& r, bool connected) {
  const std::string who = "TaskManager '" + r.task_manager_id + "' at " + r.host + ":" + std::to_string(r.rpc_port);
  if (r.task_manager_id.empty()) return Status::invalid_argument("TaskManager registration without an id");
  if (r.host.empty()) return Status::invalid_argument(who + ": no host (taskmanager.host)");
  if (r.rpc_port < 1 || r.rpc_port > 65535) {
    return Status::invalid_argument(who + ": RPC port " + std::to_string(r.rpc_port) + " is not a port (1..65535)");
  }
  if (r.data_port < 0 || r.data_port > 65535) {
    return Status::invalid_argument(who + ": taskmanager.data.port " + std::to_string(r.data_port) +
                                    " is not a port (0..65535)");
  }
  if (r.num_slots < 1) {
    return Status::invalid_argument(who + ": taskmanager.numberOfTaskSlots " + std::to_string(r.num_slots) +
                                    ": expected >= 1");
  }
  if (r.sluice_version != sluice_version_) {
    return Status::failed_precondition(who + " runs Sluice " + r.sluice_version + ", the JobManager Sluice " +
                                       sluice_version_ + ": every process of a cluster runs the same release");
  }
  if (r.job_graph_fingerprint != fingerprint_) {
    std::string differences = settings_differences(r.job_settings, job_settings_);
    if (differences.empty()) differences = "the job options agree, so the program's operators differ";
    return Status::failed_precondition(who + " built JobGraph " + hex(r.job_graph_fingerprint) +
                                       ", the JobManager JobGraph " + hex(fingerprint_) + " (" + differences +
                                       "): every process must run the same program with the same job options");
  }
  std::lock_guard lock(mu_);
  const int64_t now = clock_->now_ms();
  if (auto it = task_managers_.find(r.task_manager_id); it != task_managers_.end()) {
    // The same endpoint is the same process (or its restart on a fixed port): it replaces its registration. Another
    // endpoint while the holder is connected and heartbeating is a second process given the same
    // taskmanager.resource-id: refused for now (retriable), so the two do not take turns replacing each other; once
    // the holder is gone (its connection ends, or its heartbeats time out) the newcomer gets in.
    const TaskManagerRegistration& held = it->second.info.registration;
    const bool same_endpoint = held.host == r.host && held.rpc_port == r.rpc_port;
    const int64_t silent_ms = now - it->second.info.last_heartbeat_ms;
    if (!same_endpoint && it->second.connected && silent_ms < heartbeats_.timeout_ms) {
      return Status(StatusCode::kFailedPrecondition,
                    who + ": taskmanager.resource-id '" + r.task_manager_id + "' is held by the live TaskManager at " +
                        held.host + ":" + std::to_string(held.rpc_port) + " (last heartbeat " +
                        std::to_string(silent_ms) + " ms ago): give each TaskManager its own id (or none)",
                    /*retriable=*/true);
    }
    lose_locked(it, "registered again (the TaskManager restarted or lost its JobManager)");
  }
  Entry e;
  e.info.registration = r;
  e.info.registration_id = next_registration_id_++;
  e.info.registered_at_ms = now;
  e.info.last_heartbeat_ms = now;
  e.slot_used.assign(static_cast<size_t>(r.num_slots), false);
  e.order = next_order_++;
  e.connected = connected;
  const uint64_t id = e.info.registration_id;
  task_managers_.emplace(r.task_manager_id, std::move(e));
  return id;
}

Status ResourceManager::heartbeat(const std::string& task_manager_id, uint64_t registration_id) {
  std::lock_guard lock(mu_);
  auto it = task_managers_.find(task_manager_id);
  if (it == task_managers_.end() || it->second.info.registration_id != registration_id) {
    return Status::not_found("TaskManager '" + task_manager_id + "' (registration " + std::to_string(registration_id) +
                             ") is not registered: register again");
  }
  it->second.info.last_heartbeat_ms = std::max(it->second.info.last_heartbeat_ms, clock_->now_ms());
  return Status::ok();
}

bool ResourceManager::is_registered(const std::string& task_manager_id, uint64_t registration_id) const {
  std::lock_guard lock(mu_);
  auto it = task_managers_.find(task_manager_id);
  return it != task_managers_.end() && it->second.info.registration_id == registration_id;
}

void ResourceManager::disconnect(const std::string& task_manager_id, uint64_t registration_id,
                                 const std::string& reason) {
  std::lock_guard lock(mu_);
  auto it = task_managers_.find(task_manager_id);
  if (it == task_managers_.end() || it->second.info.registration_id != registration_id) return;
  lose_locked(it, reason);
}

void ResourceManager::unregister(const std::string& task_manager_id, uint64_t registration_id) {
  std::lock_guard lock(mu_);
  auto it = task_managers_.find(task_manager_id);
  if (it == task_managers_.end() || it->second.info.registration_id != registration_id) return;
  task_managers_.erase(it);
}

std::vector<LostTaskManager> ResourceManager::take_lost(std::optional<int64_t> now_ms) {
  const int64_t now = now_ms ? *now_ms : clock_->now_ms();
  std::lock_guard lock(mu_);
  // Oldest heartbeat first, so the order of the report does not depend on the ids.
  std::vector<std::map<std::string, Entry>::iterator> expired;
  for (auto it = task_managers_.begin(); it != task_managers_.end(); ++it) {
    if (now - it->second.info.last_heartbeat_ms > heartbeats_.timeout_ms) expired.push_back(it);
  }
  std::sort(expired.begin(), expired.end(), [](const auto& a, const auto& b) {
    return a->second.info.last_heartbeat_ms < b->second.info.last_heartbeat_ms;
  });
  for (auto it : expired) {
    lose_locked(it, "no heartbeat for " + std::to_string(now - it->second.info.last_heartbeat_ms) +
                        " ms (heartbeat.timeout " + std::to_string(heartbeats_.timeout_ms) + " ms)");
  }
  return std::exchange(lost_, {});
}

void ResourceManager::mark_connected(const std::string& task_manager_id, uint64_t registration_id) {
  std::lock_guard lock(mu_);
  auto it = task_managers_.find(task_manager_id);
  if (it != task_managers_.end() && it->second.info.registration_id == registration_id) it->second.connected = true;
}

int32_t ResourceManager::total_slots() const {
  std::lock_guard lock(mu_);
  int32_t n = 0;
  for (const auto& [id, e] : task_managers_) n += e.info.registration.num_slots;
  return n;
}

int32_t ResourceManager::free_slots() const {
  std::lock_guard lock(mu_);
  int32_t n = 0;
  for (const auto& [id, e] : task_managers_) n += e.connected ? e.info.registration.num_slots - e.info.allocated_slots : 0;
  return n;
}

Result<std::vector<AllocatedSlot>> ResourceManager::allocate(int32_t count, bool spread_out) {
  if (count < 1) return Status::invalid_argument("a job asks for " + std::to_string(count) + " slots: expected >= 1");
  std::lock_guard lock(mu_);
  std::vector<Entry*> order;
  int32_t free = 0;
  for (auto& [id, e] : task_managers_) {
    if (!e.connected) continue;
    order.push_back(&e);
    free += e.info.registration.num_slots - e.info.allocated_slots;
  }
  if (free < count) {
    return Status::failed_precondition("the job needs " + std::to_string(count) + " slots, " + std::to_string(free) +
                                       " of " + std::to_string(task_managers_.size()) +
                                       " TaskManager(s) are free");
  }
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) { return a->order < b->order; });
  auto take = [](Entry* e) {
    for (size_t i = 0; i < e->slot_used.size(); ++i) {
      if (e->slot_used[i]) continue;
      e->slot_used[i] = true;
      ++e->info.allocated_slots;
      return AllocatedSlot{e->info.registration.task_manager_id, static_cast<int32_t>(i)};
    }
    return AllocatedSlot{};  // unreachable: callers check a free slot first
  };
  auto free_of = [](const Entry* e) { return e->info.registration.num_slots - e->info.allocated_slots; };
  std::vector<AllocatedSlot> slots;
  while (static_cast<int32_t>(slots.size()) < count) {
    if (spread_out) {
      // The TaskManager with the most free slots (the earliest registered on a tie), one slot at a time.
      Entry* best = nullptr;
      for (Entry* e : order) {
        if (free_of(e) > 0 && (!best || free_of(e) > free_of(best))) best = e;
      }
      slots.push_back(take(best));
    } else {
      for (Entry* e : order) {
        if (free_of(e) > 0) {
          slots.push_back(take(e));
          break;
        }
      }
    }
  }
  return slots;
}

void ResourceManager::release_all() {
  std::lock_guard lock(mu_);
  for (auto& [id, e] : task_managers_) {
    std::fill(e.slot_used.begin(), e.slot_used.end(), false);
    e.info.allocated_slots = 0;
  }
}

std::vector<TaskManagerInfo> ResourceManager::task_managers() const {
  std::lock_guard lock(mu_);
  std::vector<const Entry*> order;
  for (const auto& [id, e] : task_managers_) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) { return a->order < b->order; });
  std::vector<TaskManagerInfo> out;
  for (const Entry* e : order) out.push_back(e->info);
  return out;
}

void ResourceManager::lose_locked(std::map<std::string, Entry>::iterator it, std::string reason) {
  LostTaskManager lost;
  lost.task_manager_id = it->first;
  lost.registration_id = it->second.info.registration_id;
  lost.reason = std::move(reason);
  for (size_t i = 0; i < it->second.slot_used.size(); ++i) {
    if (it->second.slot_used[i]) lost.slots.push_back({it->first, static_cast<int32_t>(i)});
  }
  lost_.push_back(std::move(lost));
  task_managers_.erase(it);
}

}  // namespace sluice::cluster
