#include "sluice/metrics/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace sluice {
namespace {

TEST(HistogramBuckets, EveryValueFallsInItsBucketAndBucketsAreNarrow) {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v < 5000; ++v) values.push_back(v);
  for (int bit = 7; bit < 64; ++bit) {
    uint64_t p = uint64_t{1} << bit;
    for (uint64_t d : {p - 1, p, p + 1, p + p / 3, p + p / 2 + 7}) values.push_back(d);
  }
  values.push_back(UINT64_MAX);
  values.push_back(static_cast<uint64_t>(INT64_MAX));
  for (uint64_t v : values) {
    size_t i = Histogram::bucket_index(v);
    ASSERT_LT(i, Histogram::kBucketCount) << v;
    uint64_t lower = Histogram::bucket_lower_bound(i);
    uint64_t width = Histogram::bucket_width(i);
    ASSERT_LE(lower, v) << v;
    ASSERT_LE(v - lower, width - 1) << v;
    if (v < 128) {
      ASSERT_EQ(width, 1u) << "values below 128 are exact: " << v;
    } else {
      ASSERT_LE(static_cast<double>(width) / static_cast<double>(lower), 1.0 / 64) << v;
    }
  }
}

TEST(HistogramBuckets, IndexIsMonotonicAndContiguous) {
  size_t prev = 0;
  for (uint64_t v = 1; v < (1u << 16); ++v) {
    size_t i = Histogram::bucket_index(v);
    ASSERT_TRUE(i == prev || i == prev + 1) << v;
    prev = i;
  }
  for (size_t i = 1; i < Histogram::kBucketCount; ++i) {
    ASSERT_EQ(Histogram::bucket_lower_bound(i - 1) + Histogram::bucket_width(i - 1), Histogram::bucket_lower_bound(i))
        << i;
  }
  EXPECT_EQ(Histogram::bucket_index(UINT64_MAX), Histogram::kBucketCount - 1);
}

TEST(Histogram, EmptyHasZeroStatistics) {
  Histogram h;
  HistogramStatistics s = h.statistics();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 0);
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.p99, 0);
  EXPECT_EQ(h.quantile(0.5), 0);
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (int64_t v = 1; v <= 100; ++v) h.record(v);
  HistogramStatistics s = h.statistics();
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_EQ(s.p50, 50);  // nearest rank: the 50th of 100 samples
  EXPECT_EQ(s.p95, 95);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(h.quantile(0.0), 1);
  EXPECT_EQ(h.quantile(1.0), 100);
  EXPECT_EQ(h.quantile(0.01), 1);
}

TEST(Histogram, NegativeValuesCountAsZeroAndExtremesAreKept) {
  Histogram h;
  h.record(-5);
  h.record(INT64_MAX);
  HistogramStatistics s = h.statistics();
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, INT64_MAX);
  EXPECT_EQ(s.p50, 0);
  EXPECT_EQ(s.p99, INT64_MAX);  // clamped to the exact max
}

TEST(Histogram, SingleValueIsReportedExactlyAtEveryQuantile) {
  Histogram h;
  for (int i = 0; i < 10; ++i) h.record(123'456'789);
  HistogramStatistics s = h.statistics();
  EXPECT_EQ(s.p50, 123'456'789);
  EXPECT_EQ(s.p99, 123'456'789);
}

// The exact nearest-rank quantile of a sorted sample.
int64_t exact_quantile(const std::vector<int64_t>& sorted, double q) {
  size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size()))));
  return sorted[rank - 1];
}

void expect_quantiles_within(const std::vector<int64_t>& samples, double relative_error) {
  Histogram h;
  for (int64_t v : samples) h.record(v);
  std::vector<int64_t> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999}) {
    int64_t expected = exact_quantile(sorted, q);
    int64_t got = h.quantile(q);
    EXPECT_LE(std::abs(static_cast<double>(got - expected)), relative_error * static_cast<double>(expected) + 1)
        << "q=" << q << " expected " << expected << " got " << got;
  }
  HistogramStatistics s = h.statistics();
  EXPECT_EQ(s.count, samples.size());
  EXPECT_EQ(s.min, sorted.front());
  EXPECT_EQ(s.max, sorted.back());
  EXPECT_EQ(s.p50, h.quantile(0.5));
  EXPECT_EQ(s.p95, h.quantile(0.95));
  EXPECT_EQ(s.p99, h.quantile(0.99));
  double mean = 0;
  for (int64_t v : samples) mean += static_cast<double>(v);
  mean /= static_cast<double>(samples.size());
  EXPECT_NEAR(s.mean, mean, mean * 1e-9);
}

TEST(HistogramQuantiles, UniformDistribution) {
  std::vector<int64_t> samples;
  for (int64_t v = 1; v <= 1'000'000; ++v) samples.push_back(v);
  expect_quantiles_within(samples, 0.008);
  Histogram h;
  for (int64_t v : samples) h.record(v);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 500'000.0, 500'000.0 * 0.008);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 990'000.0, 990'000.0 * 0.008);
}

TEST(HistogramQuantiles, LogNormalLatencies) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> latency_ns(std::log(200'000.0), 1.0);  // ~0.2 ms median, long tail
  std::vector<int64_t> samples;
  for (int i = 0; i < 200'000; ++i) samples.push_back(static_cast<int64_t>(latency_ns(rng)));
  expect_quantiles_within(samples, 0.008);
}

TEST(HistogramQuantiles, ExponentialDistribution) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> d(1.0 / 5'000.0);
  std::vector<int64_t> samples;
  for (int i = 0; i < 200'000; ++i) samples.push_back(static_cast<int64_t>(d(rng)));
  expect_quantiles_within(samples, 0.008);
}

TEST(HistogramQuantiles, Bimodal) {
  std::vector<int64_t> samples;
  for (int i = 0; i < 9'000; ++i) samples.push_back(1'000 + i % 10);        // fast path
  for (int i = 0; i < 1'000; ++i) samples.push_back(50'000'000 + i * 1000);  // slow path: 50 ms+
  expect_quantiles_within(samples, 0.008);
}

}  // namespace
}  // namespace sluice
