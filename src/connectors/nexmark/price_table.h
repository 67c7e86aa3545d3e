// Nexmark prices without floating point: log-uniform in [100, 1e8) cents through a table of boundaries.
//
// Nexmark's price is round(100 * 10^(6u)), u uniform in [0, 1). Here the exponent range is cut into 1024
// equal buckets with boundaries kPriceBoundaries[i] = round(100 * 10^(6i/1024)) (derived by
// gen_price_table.py with 60-digit decimal arithmetic and checked in as price_table.inc). A draw x picks
// bucket i = x >> 54 (its top 10 bits) and a price uniform in [B[i], B[i+1]) from its low 32 bits:
//   price = B[i] + (((x & 0xFFFFFFFF) * (B[i+1] - B[i])) >> 32).
// Each bucket spans a factor 10^(6/1024) ~ 1.0136, so the density is log-uniform up to that granularity.
#pragma once

#include <cstdint>

#include "connectors/nexmark/event_random.h"

namespace sluice::nexmark::detail {

inline constexpr int kPriceBuckets = 1024;
inline constexpr int64_t kPriceBoundaries[] = {
#include "connectors/nexmark/price_table.inc"
};
static_assert(sizeof(kPriceBoundaries) / sizeof(kPriceBoundaries[0]) == kPriceBuckets + 1);
static_assert(kPriceBoundaries[0] == 100 && kPriceBoundaries[kPriceBuckets / 2] == 100'000 &&
              kPriceBoundaries[kPriceBuckets] == 100'000'000);

inline int64_t price_from_draw(uint64_t x) {
  const uint64_t i = x >> 54;
  const int64_t lo = kPriceBoundaries[i];
  const uint64_t width = static_cast<uint64_t>(kPriceBoundaries[i + 1] - lo);  // < 2^21
  return lo + static_cast<int64_t>(((x & 0xFFFFFFFFULL) * width) >> 32);
}

inline int64_t next_price(EventRandom& r) { return price_from_draw(r.next()); }

}  // namespace sluice::nexmark::detail
