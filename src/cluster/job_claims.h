// Taking a job's exclusive claims when it is submitted (sluice/core/exclusive_claim.h): its checkpoint folder
// (execution.checkpointing.dir on the local disk: `--restore latest` and retention act on everything in it, so it
// is one job's) and every sink's claims (output folders, transaction-id prefixes). All are taken before any task
// starts or any file is cleaned up; the first one refused refuses the job, releasing those already taken.
//
// Thread-safety: functions; call from the submitting thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fs/file_system_registry.h"
#include "sluice/api/stream_graph.h"
#include "sluice/core/exclusive_claim.h"
#include "sluice/core/ids.h"

namespace sluice::cluster {

// The job as its locks record it: "job 'name' (job id <hex>, pid <n> on host <h>, since <UTC time>)".
ClaimingJob claiming_job(const std::string& job_name, const JobId& job_id);

// Takes `job`'s claims: the local `checkpoint_dir` ("" when checkpoints are not kept in a folder; an s3:// one
// has no lock), the checkpoint folder holding `claimed_restore` (the chk-<n> folder of a checkpoint restored in
// CLAIM mode, which the job will delete once subsumed; "" for none) and each sink node's. Errors: the refusing
// claim's (kFailedPrecondition naming the running job that holds it, with the job's name in front);
// kInvalidArgument when two parts of the job claim the same thing (two sinks writing one folder would overwrite
// each other's part files; an output folder that is the checkpoint folder), naming both. Claims are compared by
// ExclusiveClaim::key, so "out", "./out/" and its absolute path are one folder.
// One claim a job wants, and who in the job wants it ("the checkpoint storage", "sink 'out'").
struct WantedClaim {
  ExclusiveClaim claim;
  std::string by;
};
// kInvalidArgument when two of `wanted` claim the same thing (ExclusiveClaim::key, else `what`), naming both and
// who wants them: "job '<name>': A and B both write to <what> and to <what>, one folder: give each its own".
Status check_claims_distinct(const std::string& job_name, const std::vector<WantedClaim>& wanted);

Result<std::vector<std::unique_ptr<HeldClaim>>> take_job_claims(
    const StreamGraph& graph, const ClaimingJob& job, const std::string& checkpoint_dir,
    std::shared_ptr<const fs::FileSystemRegistry> file_systems, const std::string& claimed_restore = "");

}  // namespace sluice::cluster
