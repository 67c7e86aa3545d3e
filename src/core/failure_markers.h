// Marks on a failure Status that say no restart can heal it, read by the restart classifier
// (restart/failure_classifier.h). A mark is a fixed phrase at the end of the message, set together with the code:
// a connector may turn a Status into an exception and the runtime back into a Status, which keeps the text (with
// the code's name) but not the code, so the classifier looks for the phrase.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice {

// A commit that cannot succeed because the data it would publish - a sink's pending file, a multipart upload - no
// longer exists and nothing was published in its place. A restart restores the same committable from the same
// checkpoint and fails the same way.
inline constexpr std::string_view kCommittableDataGoneMark = "committable data is gone";

// The filesystem refuses a path to the job (errno EACCES, EPERM, EROFS or ENOTDIR): permissions, a read-only
// mount, a file where a folder must be. Only a person can change that.
inline constexpr std::string_view kPathRefusedMark = "path refused by the filesystem";

// kNotFound: `message` (which target, what is missing), then " (committable data is gone)".
Status committable_data_gone(std::string message);

// kFailedPrecondition (not retriable): `message` (the operation, the path, the errno text), then
// " (path refused by the filesystem)".
Status path_refused(std::string message);

// Whether `s` carries `mark` (anywhere in its message, so context added in front keeps it).
bool has_failure_mark(const Status& s, std::string_view mark);

}  // namespace sluice
