// Exclusive claims: what a running job must be the only one to write to.
//
// Two jobs given the same output folder, or two exactly-once sinks given the same transaction-id prefix, would
// abort, truncate or fence each other's uncommitted output. So a sink names what it needs to itself (its
// ExclusiveClaims), the runtime takes every claim of a job when the job is submitted - before any task starts or
// any file is cleaned up - and holds them until the job reaches a terminal state (FINISHED, FAILED, CANCELED). A
// claim that a running job holds refuses the submission with kFailedPrecondition naming that job (its name, job
// id, process and host); nothing of the refused job runs. The execution.checkpointing.dir is claimed the same way
// (cluster/job_claims.h). A claim never outlives its process: it is a lock the operating system or the server
// drops when the process ends, however it ends (flock(2) on a local folder, a PostgreSQL advisory lock held by a
// session). Where no such lock exists (object storage), a sink has no claim and the docs say so
// (docs/safety.md). Beyond Flink, which leaves unique prefixes and folders to the user.
//
// Thread-safety: `take` is called once per job submission, on the submitting thread; a HeldClaim is released
// (destroyed) on the job's control thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/status.h"

namespace sluice {

namespace fs {
class FileSystemRegistry;
}

// The job taking a claim, as a refused job is told about it.
struct ClaimingJob {
  std::string job_name;
  std::string job_id;  // 32 lowercase hex digits
  // "job 'name' (job id ..., pid N on host H, since 2026-12-05T10:00:00Z)": what the lock records for others.
  std::string description;
};

// What a sink's claims may depend on, known at submission.
struct ClaimContext {
  std::string job_name;
  std::string operator_uid;  // the sink's uid ("" when none was set)
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;  // the job's; never null here
};

// A claim being held; released by destroying it.
class HeldClaim {
 public:
  virtual ~HeldClaim() = default;
};

struct ExclusiveClaim {
  // For messages: "output folder 'out/demo'", "PostgreSQL transaction prefix 'job/sink' on db@host:5432".
  std::string what;
  // What is claimed, the same for every spelling of it (a local folder's canonical absolute path): a job whose
  // claims share a key claims one thing twice. Empty: `what` is the key.
  std::string key;
  // Takes the claim for `job`. kFailedPrecondition naming the holder when a running job holds it; other codes
  // when the claim cannot be checked (a folder that cannot be created, a server that cannot be reached).
  std::function<Result<std::unique_ptr<HeldClaim>>(const ClaimingJob& job)> take;
};

}  // namespace sluice
