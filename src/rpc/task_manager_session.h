// TaskManagerSessionId: who a TaskManager's call comes from - the leader epoch it registered under, its id and its
// registration (cluster/resource_manager.h). Reports and reader calls count only from the registration an attempt
// was deployed to. Thread-safety: a value.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::rpc {

struct TaskManagerSessionId {
  uint64_t leader_epoch = 0;
  std::string task_manager_id;
  uint64_t registration_id = 0;
};

}  // namespace sluice::rpc
