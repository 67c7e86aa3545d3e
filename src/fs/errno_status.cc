#include "fs/errno_status.h"

#include <cerrno>
#include <system_error>

#include "core/failure_markers.h"

namespace sluice::fs {

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

Status errno_status(std::string_view what, const std::string& path, int err) {
  std::string m = std::string(what) + " '" + path + "': " + errno_text(err);
  switch (err) {
    case ENOENT: return Status::not_found(std::move(m));
    case EACCES:
    case EPERM:
    case EROFS:
    case ENOTDIR: return path_refused(std::move(m));
    default: return Status::io_error(std::move(m));
  }
}

}  // namespace sluice::fs
