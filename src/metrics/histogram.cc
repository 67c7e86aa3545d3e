#include "sluice/metrics/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace sluice {

Histogram::Histogram() : buckets_(new std::atomic<uint64_t>[kBucketCount]()) {}

size_t Histogram::bucket_index(uint64_t v) {
  if (v < kSubBucketCount) return static_cast<size_t>(v);
  const int msb = 63 - std::countl_zero(v);  // >= kSubBucketBits
  const int shift = msb - kSubBucketBits;
  // The kSubBucketBits bits below the leading one select the sub-bucket.
  const size_t sub = static_cast<size_t>(v >> shift) - kSubBucketCount;
  return kSubBucketCount + static_cast<size_t>(shift) * kSubBucketCount + sub;
}

uint64_t Histogram::bucket_lower_bound(size_t index) {
  if (index < kSubBucketCount) return index;
  const size_t shift = (index - kSubBucketCount) / kSubBucketCount;
  const size_t sub = (index - kSubBucketCount) % kSubBucketCount;
  return static_cast<uint64_t>(kSubBucketCount + sub) << shift;
}

uint64_t Histogram::bucket_width(size_t index) {
  if (index < kSubBucketCount) return 1;
  return uint64_t{1} << ((index - kSubBucketCount) / kSubBucketCount);
}

namespace {

// Walks the buckets once and answers several nearest-rank quantiles (ascending `qs`).
template <size_t N>
void quantiles(const std::atomic<uint64_t>* buckets, const double (&qs)[N], int64_t min, int64_t max,
               int64_t (&out)[N]) {
  uint64_t total = 0;
  for (size_t i = 0; i < Histogram::kBucketCount; ++i) total += buckets[i].load(std::memory_order_relaxed);
  for (size_t k = 0; k < N; ++k) out[k] = 0;
  if (total == 0) return;
  uint64_t ranks[N];
  for (size_t k = 0; k < N; ++k) {
    double q = std::clamp(qs[k], 0.0, 1.0);
    ranks[k] = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(total))));
  }
  uint64_t seen = 0;
  size_t k = 0;
  for (size_t i = 0; i < Histogram::kBucketCount && k < N; ++i) {
    seen += buckets[i].load(std::memory_order_relaxed);
    while (k < N && seen >= ranks[k]) {
      if (ranks[k] == 1) {
        out[k++] = min;  // the smallest and largest samples are known exactly
      } else if (ranks[k] == total) {
        out[k++] = std::max(min, max);
      } else {
        // The middle of the bucket halves the worst-case error; clamp to the exact min and max.
        uint64_t mid = Histogram::bucket_lower_bound(i) + (Histogram::bucket_width(i) - 1) / 2;
        int64_t v = mid > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(mid);
        out[k++] = std::clamp(v, min, std::max(min, max));
      }
    }
  }
}

}  // namespace

HistogramStatistics Histogram::statistics() const {
  HistogramStatistics s;
  s.count = count_.load(std::memory_order_relaxed);
  if (s.count == 0) return s;
  s.min = min_.load(std::memory_order_relaxed);
  s.max = max_.load(std::memory_order_relaxed);
  if (s.min > s.max) s.min = s.max = 0;  // raced the first record: min/max not yet visible
  s.mean = sum_.load(std::memory_order_relaxed) / static_cast<double>(s.count);
  static constexpr double kQs[] = {0.5, 0.95, 0.99};
  int64_t out[3];
  quantiles(buckets_.get(), kQs, s.min, s.max, out);
  s.p50 = out[0];
  s.p95 = out[1];
  s.p99 = out[2];
  return s;
}

int64_t Histogram::quantile(double q) const {
  if (count() == 0) return 0;
  int64_t min = min_.load(std::memory_order_relaxed);
  int64_t max = max_.load(std::memory_order_relaxed);
  if (min > max) return 0;
  if (q <= 0.0) return min;
  if (q >= 1.0) return max;
  const double qs[] = {q};
  int64_t out[1];
  quantiles(buckets_.get(), qs, min, max, out);
  return out[0];
}

}  // namespace sluice
