// The checkpointing part of a job's settings: execution.checkpointing.*, restart-strategy.* and
// execution.state-recovery.* of the program's configuration, turned into the MiniCluster's (cluster/mini_cluster.h)
// for a STREAMING job. Two notions are kept apart there: periodic checkpointing (`checkpointing`, interval > 0) and
// the checkpoint coordinator the job has either way (`has_coordinator()`: savepoints and restores also work with
// checkpointing off, as in Flink).
#pragma once

#include <map>
#include <string>

#include "cluster/mini_cluster.h"
#include "fs/file_system_registry.h"
#include "sluice/config/configuration.h"
#include "sluice/core/status.h"

namespace sluice::api {

// Fills `mc`'s checkpointing fields, storage, restart strategy and restore from `config`; `properties` are the job's
// (recorded in every snapshot, checked against a restored one). kInvalidArgument for contradicting or bad settings;
// the restore's errors (a missing or damaged snapshot, other properties) as checkpoint::resolve_restore_path says.
[[nodiscard]] Status configure_checkpointing(const Configuration& config,
                                             const std::map<std::string, std::string>& properties,
                                             const fs::FileSystemRegistry& file_systems,
                                             cluster::MiniClusterConfig* mc);

}  // namespace sluice::api
