#include "fs/file_systems_from_config.h"

#include <memory>
#include <optional>

#include "fs/s3/s3_client.h"
#include "fs/s3/s3_file_system.h"
#include "fs/s3/s3_options.h"
#include "sluice/config/options.h"

namespace sluice::fs {
namespace {

// s3.entropy.key / s3.entropy.length; nullopt when the key is not set. A key set to the empty string, or a length
// <= 0, is refused naming the key.
Result<std::optional<EntropyInjection>> s3_entropy_from(const Configuration& config) {
  const std::string key = config.get(options::kS3EntropyKey);
  if (key.empty() && !config.contains(options::kS3EntropyKey.key)) return std::optional<EntropyInjection>();
  EntropyInjection e{key, config.get(options::kS3EntropyLength)};
  SLUICE_RETURN_IF_ERROR(e.validate(options::kS3EntropyKey.key, options::kS3EntropyLength.key));
  return std::optional<EntropyInjection>(std::move(e));
}

}  // namespace

FileSystemRegistry file_systems_from(const Configuration& config, std::shared_ptr<NameSource> names) {
  FileSystemRegistry registry;
  // Created on the first s3:// path, so a job that stores nothing on S3 needs no S3 settings; a missing endpoint
  // or missing credentials fail that path's use, naming the key.
  registry.register_scheme("s3", [config, names]() -> Result<std::shared_ptr<FileSystem>> {
    SLUICE_ASSIGN_OR_RETURN(s3::S3Options options, s3::s3_options_from_config(config));
    SLUICE_ASSIGN_OR_RETURN(std::optional<EntropyInjection> entropy, s3_entropy_from(config));
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<s3::S3Client> client, s3::S3Client::create(std::move(options)));
    return std::shared_ptr<FileSystem>(
        std::make_shared<s3::S3FileSystem>(std::move(client), std::move(entropy), names));
  });
  return registry;
}

}  // namespace sluice::fs
