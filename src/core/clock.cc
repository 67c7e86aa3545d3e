#include "sluice/core/clock.h"

namespace sluice {

std::shared_ptr<Clock> SystemClock::shared() {
  static std::shared_ptr<Clock> clock = std::make_shared<SystemClock>();
  return clock;
}

}  // namespace sluice
