#include "sluice/state/state_backend.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace sluice {

std::string_view state_backend_kind_name(StateBackendKind kind) {
  switch (kind) {
    case StateBackendKind::kHashMap:
      return "hashmap";
    case StateBackendKind::kRocksDB:
      return "rocksdb";
  }
  return "unknown";
}

Result<StateBackendKind> parse_state_backend_type(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "hashmap" || lower == "heap") return StateBackendKind::kHashMap;
  if (lower == "rocksdb") return StateBackendKind::kRocksDB;
  // Flink 1.x's legacy backend names: the state part of their mapping.
  if (lower == "jobmanager" || lower == "memorystatebackend" || lower == "filesystem" || lower == "fsstatebackend") {
    return StateBackendKind::kHashMap;
  }
  if (lower == "rocksdbstatebackend") return StateBackendKind::kRocksDB;
  return Status::invalid_argument("state.backend.type: expected 'hashmap' or 'rocksdb' (or a legacy name: "
                                  "'jobmanager', 'filesystem', 'MemoryStateBackend', 'FsStateBackend', "
                                  "'RocksDBStateBackend'), got '" + std::string(text) + "'");
}

std::string_view rocksdb_predefined_options_name(RocksDBPredefinedOptions p) {
  switch (p) {
    case RocksDBPredefinedOptions::kDefault:
      return "DEFAULT";
    case RocksDBPredefinedOptions::kSpinningDiskOptimized:
      return "SPINNING_DISK_OPTIMIZED";
    case RocksDBPredefinedOptions::kSpinningDiskOptimizedHighMem:
      return "SPINNING_DISK_OPTIMIZED_HIGH_MEM";
    case RocksDBPredefinedOptions::kFlashSsdOptimized:
      return "FLASH_SSD_OPTIMIZED";
    case RocksDBPredefinedOptions::kFlashSsdOptimizedHighMem:
      return "FLASH_SSD_OPTIMIZED_HIGH_MEM";
  }
  return "UNKNOWN";
}

std::string_view rocksdb_timer_service_factory_name(RocksDBTimerServiceFactory f) {
  switch (f) {
    case RocksDBTimerServiceFactory::kRocksDB:
      return "ROCKSDB";
    case RocksDBTimerServiceFactory::kHeap:
      return "HEAP";
  }
  return "UNKNOWN";
}

Result<RocksDBTimerServiceFactory> parse_rocksdb_timer_service_factory(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "ROCKSDB") return RocksDBTimerServiceFactory::kRocksDB;
  if (upper == "HEAP") return RocksDBTimerServiceFactory::kHeap;
  return Status::invalid_argument("state.backend.rocksdb.timer-service.factory: expected 'ROCKSDB' or 'HEAP', got '" +
                                  std::string(text) + "'");
}

}  // namespace sluice
