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
  // The seed's legacy backend names (Flink 1.x): the state part of their mapping.
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

}  // namespace sluice
