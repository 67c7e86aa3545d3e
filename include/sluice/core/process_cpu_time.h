// CPU time of this process (user + system), in seconds: what job results report as cpu_seconds
// (JobExecutionResult). getrusage(RUSAGE_SELF); thread-safe.
#pragma once

namespace sluice {

double process_cpu_seconds();

}  // namespace sluice
