#include "sluice/core/process_cpu_time.h"

#include <sys/resource.h>

namespace sluice {

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

}  // namespace sluice
