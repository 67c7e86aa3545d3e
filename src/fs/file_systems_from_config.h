// The FileSystemRegistry that a job, the CLI and the tools resolve paths with, configured from the job's
// Configuration: the local disk (plain paths, file://) and every other scheme Sluice supports, each set up from
// its own keys on first use (docs/storage.md).
//
// Thread-safety: a function; the registry it returns is as file_system_registry.h says.
#pragma once

#include "fs/file_system_registry.h"
#include <memory>

#include "sluice/config/configuration.h"
#include "sluice/core/name_source.h"

namespace sluice::fs {

// `names`: the job's name source, for names a filesystem makes up (S3: leftover objects of the recoverable writer);
// null: each filesystem uses a random source. s3.entropy.key / s3.entropy.length configure S3's entropy injection
// (entropy_injection.h), checked on the first s3:// path: kInvalidArgument naming the key.
FileSystemRegistry file_systems_from(const Configuration& config, std::shared_ptr<NameSource> names = nullptr);

}  // namespace sluice::fs
