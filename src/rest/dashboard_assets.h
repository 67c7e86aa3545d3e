// The web dashboard's files (web/dashboard/), compiled into the binary at build time (cmake/EmbedFiles.cmake): the
// REST server serves them at / and /dashboard/<file> (docs/observability.md, "The web dashboard").
// Thread-safety: immutable after first use.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace sluice::rest {

struct DashboardAsset {
  std::string_view path;          // relative to web/dashboard/, e.g. "dashboard.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  const char* data;
  size_t size_bytes;
};

const std::vector<DashboardAsset>& dashboard_assets();

}  // namespace sluice::rest
