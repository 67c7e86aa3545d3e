// The exclusive claim of a file sink's output folder (sluice/core/exclusive_claim.h): a local folder is locked
// for the running job (`<dir>/.sluice-job.lock`, docs/safety.md), so a second job given the same folder is refused
// at submission instead of truncating, aborting or committing over the first one's files. A folder on object
// storage (s3://) has no lock: none is returned, and two jobs there must be kept apart by the user.
#pragma once

#include <string>
#include <vector>

#include "sluice/core/exclusive_claim.h"

namespace sluice::file {

// `dir`: the sink's folder as given to it (a plain path, file:// or s3:// URI). Pure; the lock is taken by the
// returned claim's `take`.
std::vector<ExclusiveClaim> output_folder_claims(const std::string& dir);

}  // namespace sluice::file
