// FNV-1a (64 bit) for names that must be the same in every process and build (std::hash need not be).
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::postgres {

inline uint64_t stable_hash(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace sluice::postgres
