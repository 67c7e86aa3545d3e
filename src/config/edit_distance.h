// Levenshtein distance, for "did you mean" hints on configuration keys and command-line flags.
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <string_view>

namespace sluice::config {

// The number of single-character insertions, deletions and substitutions that turn `a` into `b`.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace sluice::config
