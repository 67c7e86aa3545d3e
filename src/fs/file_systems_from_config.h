// The FileSystemRegistry that a job, the CLI and the tools resolve paths with, configured from the job's
// Configuration: the local disk (plain paths, file://) and every other scheme Sluice supports, each set up from
// its own keys on first use (docs/storage.md).
//
// Thread-safety: a function; the registry it returns is as file_system_registry.h says.
#pragma once

#include "fs/file_system_registry.h"
#include "sluice/config/configuration.h"

namespace sluice::fs {

FileSystemRegistry file_systems_from(const Configuration& config);

}  // namespace sluice::fs
