// Pins the generator: any change to a formula, a draw, a word list, the price table or the Event
// serialization changes these checksums. A port to another language (the Flink side-by-side benchmark) must
// reproduce them; see ../README.md for the algorithm.
//
// Checksum: FNV-1a 64 (offset basis 0xCBF29CE484222325, prime 0x100000001B3) over the concatenation, in
// event-number order, of each event's bytes as written by TypeSerializer<Event> (kind byte, then the active
// member's fields: int64 as 8 bytes little-endian, strings as a LEB128 length and the bytes), for the
// default GeneratorConfig with seed 1. If a change is intended, recompute (the failure message prints the new
// value), paste it here and say why in the commit.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>

#include "sluice/connectors/nexmark/generator.h"

namespace sluice::nexmark {
namespace {

constexpr uint64_t kGolden1k = 0xBD43955D12A82F8CULL;
constexpr uint64_t kGolden1M = 0xBE4BBBCDD437D072ULL;

uint64_t fnv1a_checksum(int64_t num_events) {
  GeneratorConfig config;  // seed 1, 10 M/s, base 2024-01-01T00:00:00Z, in order
  const Generator g(config);
  uint64_t h = 0xCBF29CE484222325ULL;
  std::vector<uint8_t> buf;
  Event e;
  for (int64_t n = 0; n < num_events; ++n) {
    g.fill(n, e);
    buf.clear();
    serialize_append(e, buf);
    for (uint8_t b : buf) {
      h ^= b;
      h *= 0x100000001B3ULL;
    }
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIX64, v);
  return buf;
}

TEST(NexmarkGolden, FirstThousandEvents) {
  const uint64_t h = fnv1a_checksum(1000);
  EXPECT_EQ(h, kGolden1k) << "got " << hex(h);
}

TEST(NexmarkGolden, FirstMillionEvents) {
  const uint64_t h = fnv1a_checksum(1'000'000);
  EXPECT_EQ(h, kGolden1M) << "got " << hex(h);
}

}  // namespace
}  // namespace sluice::nexmark
