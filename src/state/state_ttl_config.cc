#include "sluice/state/state_ttl_config.h"

namespace sluice {

std::string StateTtlConfig::to_string() const {
  if (!is_enabled()) return "ttl disabled";
  std::string s = "ttl " + std::to_string(ttl_ms_) + " ms, ";
  s += update_type_ == UpdateType::kOnReadAndWrite ? "OnReadAndWrite" : "OnCreateAndWrite";
  s += return_expired() ? ", ReturnExpiredIfNotCleanedUp" : ", NeverReturnExpired";
  return s;
}

}  // namespace sluice
