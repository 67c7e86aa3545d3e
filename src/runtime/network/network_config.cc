#include "runtime/network/network_config.h"

#include <string>

namespace sluice::runtime {

namespace {
Status require_positive(const char* name, int32_t value) {
  if (value > 0) return Status::ok();
  return Status::invalid_argument(std::string("NetworkConfig.") + name + ": expected a positive value, got " +
                                  std::to_string(value));
}
}  // namespace

Status NetworkConfig::validate() const {
  SLUICE_RETURN_IF_ERROR(require_positive("buffer_size_bytes", buffer_size_bytes));
  SLUICE_RETURN_IF_ERROR(require_positive("credits_per_channel", credits_per_channel));
  SLUICE_RETURN_IF_ERROR(require_positive("max_buffers_per_channel", max_buffers_per_channel));
  return Status::ok();
}

}  // namespace sluice::runtime
