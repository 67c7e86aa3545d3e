#include "core/log_context.h"

#include <map>
#include <mutex>
#include <utility>

namespace sluice::log {
namespace {

thread_local LogContext tls_context;

struct ProcessJobs {
  std::mutex mu;
  std::map<std::string, int> running;  // job id -> registrations (a job may register from several places)
};

ProcessJobs& process_jobs() {
  static ProcessJobs* jobs = new ProcessJobs();  // never destroyed: threads may log during exit
  return *jobs;
}

}  // namespace

ScopedLogContext::ScopedLogContext(std::string job_id, std::string task) : previous_(std::move(tls_context)) {
  tls_context = LogContext{std::move(job_id), std::move(task)};
}

ScopedLogContext::~ScopedLogContext() { tls_context = std::move(previous_); }

void register_job(const std::string& job_id) {
  ProcessJobs& jobs = process_jobs();
  std::lock_guard lock(jobs.mu);
  ++jobs.running[job_id];
}

void unregister_job(const std::string& job_id) {
  ProcessJobs& jobs = process_jobs();
  std::lock_guard lock(jobs.mu);
  auto it = jobs.running.find(job_id);
  if (it != jobs.running.end() && --it->second <= 0) jobs.running.erase(it);
}

LogContext current() {
  if (!tls_context.job_id.empty() || !tls_context.task.empty()) return tls_context;
  ProcessJobs& jobs = process_jobs();
  std::lock_guard lock(jobs.mu);
  if (jobs.running.size() == 1) return LogContext{jobs.running.begin()->first, ""};
  return {};
}

}  // namespace sluice::log
