// The demo's job as a standalone program: `per_auction_example [--config FILE] [-D key=value ...]`.
// Writes per-auction updates for 1 M Nexmark events to out/per-auction-example/.
#include <cstdio>

#include "per_auction_job.h"

int main(int argc, char** argv) {
  auto env = sluice::StreamExecutionEnvironment::from_args(argc, argv);
  if (!env.is_ok()) {
    std::fprintf(stderr, "%s\n", env.status().to_string().c_str());
    return 2;
  }
  per_auction::JobOptions options;
  options.source.generator.max_events = 1'000'000;
  options.output_dir = "out/per-auction-example";
  per_auction::build(*env, options);
  auto result = env->execute("per-auction-example");
  if (!result.is_ok()) {
    std::fprintf(stderr, "%s\n", result.status().to_string().c_str());
    return 2;
  }
  std::printf("job %s: %s in %lld ms\n", result->job_id.to_hex().c_str(), sluice::job_status_name(result->status),
              static_cast<long long>(result->runtime_ms));
  if (!result->error.is_ok()) std::fprintf(stderr, "%s\n", result->error.to_string().c_str());
  return result->status == sluice::JobStatus::kFinished ? 0 : 1;
}
