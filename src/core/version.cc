#include "sluice/core/version.h"

#ifndef SLUICE_VERSION
#error "SLUICE_VERSION must be defined by the build (the project's version)"
#endif

namespace sluice {

const char* sluice_version() { return SLUICE_VERSION; }

}  // namespace sluice
