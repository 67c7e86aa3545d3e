#include "fs/file_systems_from_config.h"

#include <memory>

#include "fs/s3/s3_client.h"
#include "fs/s3/s3_file_system.h"
#include "fs/s3/s3_options.h"

namespace sluice::fs {

FileSystemRegistry file_systems_from(const Configuration& config) {
  FileSystemRegistry registry;
  // Created on the first s3:// path, so a job that stores nothing on S3 needs no S3 settings; a missing endpoint
  // or missing credentials fail that path's use, naming the key.
  registry.register_scheme("s3", [config]() -> Result<std::shared_ptr<FileSystem>> {
    SLUICE_ASSIGN_OR_RETURN(s3::S3Options options, s3::s3_options_from_config(config));
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<s3::S3Client> client, s3::S3Client::create(std::move(options)));
    return std::shared_ptr<FileSystem>(std::make_shared<s3::S3FileSystem>(std::move(client)));
  });
  return registry;
}

}  // namespace sluice::fs
