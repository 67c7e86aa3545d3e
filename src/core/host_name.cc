#include "core/host_name.h"

#include <unistd.h>

namespace sluice {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "an unknown host";
  return buf;
}

}  // namespace sluice
