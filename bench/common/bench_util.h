// Small helpers the benchmark harnesses share: integer flags, CPU clocks and medians.
// Thread-safety: the functions keep no state.
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::bench {

// Parses a flag's integer value; kInvalidArgument naming the flag and the accepted range otherwise.
template <class I>
Result<I> parse_int(std::string_view flag, std::string_view text, I min, I max) {
  I v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    return Status::invalid_argument(std::string(flag) + ": expected an integer in [" + std::to_string(min) + ", " +
                                    std::to_string(max) + "], got '" + std::string(text) + "'");
  }
  return v;
}

// CPU time (user + system) of every thread of the process, in seconds.
inline double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

// CPU time of the calling thread, in seconds: on a shared machine, wall time also counts waiting for a core.
inline double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The median (mean of the middle two for an even count); 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace sluice::bench
