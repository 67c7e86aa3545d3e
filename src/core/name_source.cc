#include "sluice/core/name_source.h"

#include <cstdio>
#include <random>

namespace sluice {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::shared_ptr<NameSource> NameSource::random() {
  std::random_device rd;
  const uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return std::make_shared<NameSource>(seed, false);
}

std::shared_ptr<NameSource> NameSource::seeded(uint64_t seed) { return std::make_shared<NameSource>(seed, true); }

NameSource::NameSource(uint64_t seed, bool seed_fixed) : seed_(seed), seed_fixed_(seed_fixed) {}

uint64_t NameSource::next(std::string_view stream) {
  uint64_t n;
  {
    std::lock_guard lock(mu_);
    auto it = draws_.find(stream);
    if (it == draws_.end()) it = draws_.emplace(std::string(stream), 0).first;
    n = it->second++;
  }
  return splitmix64(splitmix64(seed_ ^ fnv1a64(stream)) + n * 0x9e3779b97f4a7c15ULL);
}

std::string NameSource::hex(std::string_view stream, int digits) {
  if (digits < 1) digits = 1;
  if (digits > 16) digits = 16;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(next(stream)));
  return std::string(buf + 16 - digits, static_cast<size_t>(digits));
}

std::string NameSource::alphanumeric(std::string_view stream, size_t length) {
  static constexpr std::string_view kAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out;
  out.reserve(length);
  while (out.size() < length) {
    uint64_t v = next(stream);
    // 12 characters per draw (36^12 < 2^64); the slight bias of the modulo does not matter for names.
    for (int i = 0; i < 12 && out.size() < length; ++i) {
      out += kAlphabet[v % kAlphabet.size()];
      v /= kAlphabet.size();
    }
  }
  return out;
}

JobId NameSource::job_id() {
  const uint64_t hi = next("job-id");
  const uint64_t lo = next("job-id");
  return JobId(hi, lo);
}

std::shared_ptr<NameSource> name_source_or_random(std::shared_ptr<NameSource> names) {
  return names ? std::move(names) : NameSource::random();
}

}  // namespace sluice
