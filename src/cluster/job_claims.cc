#include "cluster/job_claims.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include "checkpoint/checkpoint_layout.h"
#include "core/host_name.h"
#include "fs/folder_lock.h"
#include "fs/path.h"

namespace sluice::cluster {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32] = {};
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string sink_name(const StreamNode& node) {
  return "'" + node.name + "'" + (node.uid.empty() ? "" : " (uid '" + node.uid + "')");
}

}  // namespace

ClaimingJob claiming_job(const std::string& job_name, const JobId& job_id) {
  ClaimingJob job;
  job.job_name = job_name;
  job.job_id = job_id.to_hex();
  job.description = "job '" + job_name + "' (job id " + job.job_id + ", pid " + std::to_string(::getpid()) +
                    " on host " + host_name() + ", since " + utc_now() + ")";
  return job;
}

Status check_claims_distinct(const std::string& job_name, const std::vector<WantedClaim>& wanted) {
  std::map<std::string, const WantedClaim*> by_key;
  for (const WantedClaim& w : wanted) {
    auto [it, inserted] = by_key.emplace(w.claim.key.empty() ? w.claim.what : w.claim.key, &w);
    if (!inserted) {
      const std::string both = it->second->claim.what == w.claim.what
                                   ? w.claim.what
                                   : it->second->claim.what + " and to " + w.claim.what + ", one folder";
      return Status::invalid_argument("job '" + job_name + "': " + it->second->by + " and " + w.by +
                                      " both write to " + both + ": give each its own");
    }
  }
  return Status::ok();
}

Result<std::vector<std::unique_ptr<HeldClaim>>> take_job_claims(
    const StreamGraph& graph, const ClaimingJob& job, const std::string& checkpoint_dir,
    std::shared_ptr<const fs::FileSystemRegistry> file_systems, const std::string& claimed_restore) {
  using Wanted = WantedClaim;
  std::vector<Wanted> wanted;
  if (!checkpoint_dir.empty()) {
    if (auto claim = fs::local_folder_claim(checkpoint_dir, "checkpoint folder '" + checkpoint_dir +
                                                                "' (execution.checkpointing.dir)")) {
      wanted.push_back({std::move(*claim), "the checkpoint storage"});
    }
  }
  if (!claimed_restore.empty()) {
    // Restored in CLAIM mode, its files are deleted by this job once subsumed: the folder of the job that wrote
    // it must not be in use. The job's own checkpoint folder is the usual case, claimed once.
    // Symbolic links resolved first: a chk-<n> linked from elsewhere belongs to the folder it lives in.
    const std::string dir = checkpoint::checkpoint_dir_of(fs::canonical_path(claimed_restore));
    if (auto claim = fs::local_folder_claim(dir, "checkpoint folder '" + dir + "' (of " + claimed_restore +
                                                     ", restored in CLAIM mode)")) {
      const bool claimed = std::any_of(wanted.begin(), wanted.end(), [&](const Wanted& w) { return w.claim.key == claim->key; });
      if (!claimed) wanted.push_back({std::move(*claim), "the restore in CLAIM mode"});
    }
  }
  for (const StreamNode& node : graph.nodes) {
    if (!node.exclusive_claims) continue;
    ClaimContext ctx{job.job_name, node.uid, file_systems};
    for (ExclusiveClaim& c : node.exclusive_claims(ctx)) wanted.push_back({std::move(c), "sink " + sink_name(node)});
  }
  SLUICE_RETURN_IF_ERROR(check_claims_distinct(job.job_name, wanted));
  std::vector<std::unique_ptr<HeldClaim>> held;
  for (const Wanted& w : wanted) {
    auto taken = w.claim.take(job);
    if (!taken.is_ok()) return taken.status().with_context("job '" + job.job_name + "' refused");
    held.push_back(std::move(taken).value());
  }
  return held;
}

}  // namespace sluice::cluster
