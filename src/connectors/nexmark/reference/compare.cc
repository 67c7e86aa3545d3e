// Helpers of compare.h: value formatting for difference messages and the digest's hash.
#include "sluice/connectors/nexmark/reference/compare.h"

namespace sluice::nexmark::reference {

namespace detail {

void append_value(std::string& out, int64_t v) { out += std::to_string(v); }

void append_value(std::string& out, const std::string& v) {
  constexpr size_t kMaxShown = 40;
  out += '"';
  out.append(v, 0, std::min(v.size(), kMaxShown));
  out += '"';
  if (v.size() > kMaxShown) out += "... (" + std::to_string(v.size()) + " bytes)";
}

uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (const uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001B3ULL;
  }
  return h;
}

uint64_t mix64(uint64_t z) {  // SplitMix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace detail

std::string MultisetDigest::to_string() const {
  return "{count " + std::to_string(count) + ", hash_sum " + std::to_string(hash_sum) + "}";
}

Status compare_digests(std::string_view query, const MultisetDigest& expected, const MultisetDigest& actual) {
  if (expected == actual) return Status::ok();
  std::string msg(query);
  msg += ": engine output digest " + actual.to_string() + " differs from the reference's " + expected.to_string();
  if (expected.count != actual.count) msg += " (row counts differ)";
  return Status::failed_precondition(std::move(msg));
}

}  // namespace sluice::nexmark::reference
