#include "api/progress_line.h"

#include <unistd.h>

#include <utility>

#include "cluster/mini_cluster.h"
#include "sluice/config/logging_options.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::api {

bool progress_line_wanted(const Configuration& config, std::FILE* out) {
  switch (config.get(options::kProgressLine)) {
    case ProgressLineMode::kOn:
      return true;
    case ProgressLineMode::kOff:
      return false;
    case ProgressLineMode::kAuto:
      break;
  }
  // A JSON log is read by a program, and OFF asked for silence: a plain-text line would break either.
  if (config.get(options::kLogFormat) == LogFormat::kJson || config.get(options::kLogLevel) == LogLevel::kOff) {
    return false;
  }
  return ::isatty(::fileno(out)) == 1;
}

int64_t records_emitted(const MetricRegistry& metrics, const std::vector<std::string>& source_operators) {
  double total = 0;
  for (const auto& m : metrics.snapshot()) {
    if (m.name != metric_names::kNumRecordsOut) continue;
    for (const std::string& name : source_operators) {
      if (m.scope.find("." + name + ".") != std::string::npos) {
        total += m.value;
        break;
      }
    }
  }
  return static_cast<int64_t>(total);
}

ProgressLine::ProgressLine(JobClient& client, std::vector<std::string> source_operators, std::FILE* out,
                           std::string what, std::chrono::milliseconds interval) {
  thread_ = std::thread([this, &client, sources = std::move(source_operators), out, what = std::move(what), interval] {
    const auto* checkpointing = dynamic_cast<const cluster::CheckpointingJobClient*>(&client);
    const auto start = std::chrono::steady_clock::now();
    auto next = start + interval;
    while (!done_.load()) {
      // Short sleeps, so stop() returns at once.
      while (!done_.load() && std::chrono::steady_clock::now() < next) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (done_.load()) break;
      next += interval;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const int64_t n = records_emitted(client.metrics(), sources);
      std::string checkpoints;
      if (checkpointing != nullptr) {
        const int64_t completed = checkpointing->checkpoint_stats().num_completed;
        checkpoints = ", " + std::to_string(completed) + (completed == 1 ? " checkpoint" : " checkpoints");
      }
      std::fprintf(out, "  progress: %lld %s, %.0f %s/s%s, %.1f s elapsed\n", static_cast<long long>(n), what.c_str(),
                   static_cast<double>(n) / elapsed, what.c_str(), checkpoints.c_str(), elapsed);
      std::fflush(out);
    }
  });
}

void ProgressLine::stop() {
  done_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace sluice::api
