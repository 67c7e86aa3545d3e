// job_status_name (include/sluice/api/job_client.h): defined here, below the API layer, because the job's
// lifecycle (coordinator/job_lifecycle.h) names its states in messages too.
#include "sluice/api/job_client.h"

namespace sluice {

const char* job_status_name(JobStatus s) {
  switch (s) {
    case JobStatus::kCreated: return "CREATED";
    case JobStatus::kRunning: return "RUNNING";
    case JobStatus::kRestarting: return "RESTARTING";
    case JobStatus::kFailing: return "FAILING";
    case JobStatus::kFailed: return "FAILED";
    case JobStatus::kCancelling: return "CANCELLING";
    case JobStatus::kCanceled: return "CANCELED";
    case JobStatus::kFinished: return "FINISHED";
  }
  return "UNKNOWN";
}

}  // namespace sluice
