// Histogram: distribution of int64 values (e.g. latency in ns) with fixed memory and O(1) recording.
//
// Buckets are log-linear, as in HdrHistogram: values below 128 get one bucket each (exact); above, every
// power-of-two range [2^k, 2^(k+1)) is split into 64 equal sub-buckets. A bucket is therefore at most 1/64
// (1.6%) of its lower bound wide, and a quantile is reported as the middle of its bucket, within 0.8% of
// the true sample (exact below 128). 3776 buckets (30 KiB) cover every value. Negative values are
// recorded as 0.
//
// Single-writer rule: one thread calls record(); any thread may call count()/statistics()/quantile().
// Updates are relaxed load + store, like Counter. A reader racing the writer may see a sample in one bucket
// but not yet in count, sum, min or max; statistics are then off by the samples in flight, never torn.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

namespace sluice {

struct HistogramStatistics {
  uint64_t count = 0;
  int64_t min = 0;  // all zero when count == 0
  int64_t max = 0;
  double mean = 0.0;
  int64_t p50 = 0;
  int64_t p95 = 0;
  int64_t p99 = 0;
};

class alignas(64) Histogram {
 public:
  static constexpr int kSubBucketBits = 6;                  // 64 sub-buckets per power of two
  static constexpr size_t kSubBucketCount = size_t{1} << kSubBucketBits;
  // Exact buckets [0, 64), then 64 per shift 0..(64 - kSubBucketBits - 1): covers all of uint64_t.
  static constexpr size_t kBucketCount = kSubBucketCount * (64 - kSubBucketBits + 1);

  Histogram();
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Owner thread only. O(1), no allocation, no lock.
  void record(int64_t value) {
    const int64_t v = value < 0 ? 0 : value;
    std::atomic<uint64_t>& bucket = buckets_[bucket_index(static_cast<uint64_t>(v))];
    bucket.store(bucket.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    sum_.store(sum_.load(std::memory_order_relaxed) + static_cast<double>(v), std::memory_order_relaxed);
    if (v < min_.load(std::memory_order_relaxed)) min_.store(v, std::memory_order_relaxed);
    if (v > max_.load(std::memory_order_relaxed)) max_.store(v, std::memory_order_relaxed);
  }

  // Any thread.
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  // count, min, max, mean and p50/p95/p99 in one pass over the buckets.
  HistogramStatistics statistics() const;
  // The nearest-rank q-quantile (q in [0, 1]; 0 gives min, 1 gives max); 0 when empty.
  int64_t quantile(double q) const;

  // Bucket arithmetic, public for tests.
  static size_t bucket_index(uint64_t v);
  static uint64_t bucket_lower_bound(size_t index);
  static uint64_t bucket_width(size_t index);

 private:
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
  std::atomic<int64_t> min_{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> max_{std::numeric_limits<int64_t>::min()};
};

}  // namespace sluice
