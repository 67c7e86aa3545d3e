#include "sluice/connectors/file/output_folder_claim.h"

#include "fs/folder_lock.h"

namespace sluice::file {

std::vector<ExclusiveClaim> output_folder_claims(const std::string& dir) {
  std::vector<ExclusiveClaim> claims;
  if (auto claim = fs::local_folder_claim(dir, "output folder '" + dir + "'")) claims.push_back(std::move(*claim));
  return claims;
}

}  // namespace sluice::file
