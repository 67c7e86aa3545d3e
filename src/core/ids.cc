#include "sluice/core/ids.h"

#include <cstdio>

#include "sluice/core/name_source.h"

namespace sluice {

JobId JobId::generate() { return NameSource::random()->job_id(); }

std::string JobId::to_hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(hi_),
                static_cast<unsigned long long>(lo_));
  return std::string(buf, 32);
}

bool JobId::parse(const std::string& hex, JobId* out) {
  if (hex.size() != 32) return false;
  uint64_t parts[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    char c = hex[i];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return false;
    parts[i / 16] = (parts[i / 16] << 4) | static_cast<uint64_t>(d);
  }
  *out = JobId(parts[0], parts[1]);
  return true;
}

}  // namespace sluice
