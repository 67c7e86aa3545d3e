#include "sluice/core/log.h"

#include <spdlog/spdlog.h>

namespace sluice::log {

// spdlog reports its own failures through its error handler rather than throwing from a log call; the catch keeps
// the noexcept promise should a custom sink throw anyway.
void error(std::string_view message) noexcept {
  try {
    spdlog::error("{}", message);
  } catch (...) {
  }
}

void warn(std::string_view message) noexcept {
  try {
    spdlog::warn("{}", message);
  } catch (...) {
  }
}

void info(std::string_view message) noexcept {
  try {
    spdlog::info("{}", message);
  } catch (...) {
  }
}

}  // namespace sluice::log
