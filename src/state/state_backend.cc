#include "sluice/state/state_backend.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace sluice {

std::string_view state_backend_kind_name(StateBackendKind kind) {
  switch (kind) {
    case StateBackendKind::kHashMap:
      return "hashmap";
  }
  return "unknown";
}

Result<StateBackendKind> parse_state_backend_type(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "hashmap" || lower == "heap") return StateBackendKind::kHashMap;
  if (lower == "rocksdb") {
    return Status::invalid_argument("state.backend.type: 'rocksdb' is not available in this build yet; use 'hashmap'");
  }
  return Status::invalid_argument("state.backend.type: expected 'hashmap', got '" + std::string(text) + "'");
}

}  // namespace sluice
