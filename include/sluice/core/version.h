// The Sluice release this binary was built from (CMake's PROJECT_VERSION): what every process of a cluster must
// run (docs/cluster.md) and what GET /overview reports.
// Thread-safety: a constant.
#pragma once

namespace sluice {

// "MAJOR.MINOR.PATCH", never null.
const char* sluice_version();

}  // namespace sluice
