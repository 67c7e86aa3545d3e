// The per-event random stream of the Nexmark generator, and the integer-only draws built on it.
//
// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
//   mix64(z)  = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^ (z >> 31)
//   next()    = state += 0x9E3779B97F4A7C15; return mix64(state)
// An event with id `id` starts at state mix64(mix64(seed) + id) (all arithmetic mod 2^64), so each event's
// draws are independent of every other event's and any event is O(1) to generate.
// Everything here is unsigned 64-bit integer arithmetic (plus the high half of a 64x64-bit product), which
// every language reproduces exactly: no floating point.
//
// Internal to src/connectors/nexmark/. Thread-safety: values.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>

namespace sluice::nexmark::detail {

__extension__ typedef unsigned __int128 Uint128;  // __extension__: GCC's 128-bit type under -Wpedantic

inline constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ULL;

constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// High 64 bits of a * b.
inline uint64_t mul_high(uint64_t a, uint64_t b) {
  return static_cast<uint64_t>((static_cast<Uint128>(a) * b) >> 64);
}

class EventRandom {
 public:
  explicit EventRandom(uint64_t state) : state_(state) {}

  uint64_t next() {
    state_ += kSplitMixGamma;
    return mix64(state_);
  }
  // U[0, n) for n >= 1: the high 64 bits of next() * n (Lemire's multiply-shift, no rejection; the bias is
  // below n / 2^64).
  int64_t uniform(int64_t n) { return static_cast<int64_t>(mul_high(next(), static_cast<uint64_t>(n))); }

 private:
  uint64_t state_;
};

// Maps a 16-bit chunk to [0, n) as (chunk * n) >> 16 (bias below n / 65536 per value; n <= 65536).
constexpr uint32_t chunk_to_range(uint64_t chunk16, uint32_t n) {
  return static_cast<uint32_t>(((chunk16 & 0xFFFF) * n) >> 16);
}

// The longest random string any caller asks for (Auction::description).
inline constexpr int32_t kMaxRandomStringLength = 100;

// Maps v in [0, 338) to a character: kSpace for v < 26 (probability 26/338 = 1/13), else 'a' + (v - 26) % 26.
// Through a table, because the branch on a 1-in-13 event mispredicts.
template <char kSpace>
struct RandomCharTable {
  char chars[338];
  constexpr RandomCharTable() : chars() {
    for (int v = 0; v < 338; ++v) chars[v] = v < 26 ? kSpace : static_cast<char>('a' + (v - 26) % 26);
  }
};
inline constexpr RandomCharTable<' '> kRandomCharsWithSpace{};
inline constexpr RandomCharTable<'_'> kRandomCharsWithUnderscore{};


// Writes a random string of length 3 + U[0, max_length - 3) to dst (room for max_length chars) and returns
// its length. Characters come four per draw, one per 16-bit chunk from the low end:
// kRandomCharsWithSpace.chars[chunk_to_range(chunk, 338)] (338 = 13 * 26).
inline int64_t write_random_string(EventRandom& r, int32_t max_length, char* dst) {
  const int64_t len = 3 + r.uniform(max_length - 3);
  int64_t i = 0;
  while (i < len) {
    uint64_t bits = r.next();
    for (int k = 0; k < 4 && i < len; ++k, ++i, bits >>= 16) dst[i] = kRandomCharsWithSpace.chars[chunk_to_range(bits, 338)];
  }
  return len;
}

// Appends a random string with leading and trailing spaces trimmed: Nexmark's nextString.
inline void append_trimmed_random_string(EventRandom& r, int32_t max_length, std::string& out) {
  assert(max_length <= kMaxRandomStringLength);
  char buf[kMaxRandomStringLength];
  const int64_t len = write_random_string(r, max_length, buf);
  int64_t begin = 0, end = len;
  while (end > begin && buf[end - 1] == ' ') --end;
  while (begin < end && buf[begin] == ' ') ++begin;
  out.append(buf + begin, static_cast<size_t>(end - begin));
}

}  // namespace sluice::nexmark::detail
