// The RocksDB backend's settings of a job: state.backend.rocksdb.* and taskmanager.memory.managed.size of the
// program's configuration as RocksDBStateBackendOptions (sluice/state/state_backend.h).
#pragma once

#include "sluice/config/configuration.h"
#include "sluice/state/state_backend.h"

namespace sluice::api {

// The options every keyed operator subtask's RocksDB instance gets. The write-back cache
// (state.backend.rocksdb.cache.*): off when cache.enabled is false; a fixed size when cache.max-size is set, or when
// no managed memory bounds RocksDB (then cache.max-size's default); else a share of the managed-memory budget
// (RocksDBWriteBackCacheOptions::Sizing::kManagedMemoryShare). Pure: the memory settings are validated when the job
// is submitted (RocksDBMemoryOptions::validate) and again by every instance.
RocksDBStateBackendOptions rocksdb_backend_options(const Configuration& config);

}  // namespace sluice::api
