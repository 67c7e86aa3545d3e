// The Status of a failed system call on a local path, shared by the local filesystem and its recoverable writer.
#pragma once

#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::fs {

// The operating system's text for `err`, e.g. "Permission denied".
std::string errno_text(int err);

// "<what> '<path>': <errno text>" with a code by errno: ENOENT kNotFound; EACCES, EPERM, EROFS and ENOTDIR
// kFailedPrecondition marked as a refused path (core/failure_markers.h: no restart changes permissions, a
// read-only mount or a file where a folder must be); any other kIOError (retriable: a full disk, an I/O error).
Status errno_status(std::string_view what, const std::string& path, int err);

}  // namespace sluice::fs
