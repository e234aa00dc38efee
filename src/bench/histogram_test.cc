// Tests of the log-linear latency histogram: exact small values, bounded
// relative error, percentiles by rank, merging.
#include "bench/histogram.h"

#include <gtest/gtest.h>

namespace rw::bench {
namespace {

TEST(LatencyHistogram, EmptyGivesZero) {
  LatencyHistogram histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.percentile(0.99).ns, 0);
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  for (std::uint64_t us = 0; us < 32; ++us) {
    EXPECT_EQ(LatencyHistogram::bucket_upper_us(LatencyHistogram::bucket_of(us)), us);
  }
}

TEST(LatencyHistogram, BucketsAreContiguousAndBoundRelativeError) {
  std::uint64_t previous_upper = 31;
  for (std::size_t bucket = 32; bucket < LatencyHistogram::kBucketCount; ++bucket) {
    const std::uint64_t upper = LatencyHistogram::bucket_upper_us(bucket);
    const std::uint64_t lower = previous_upper + 1;
    EXPECT_EQ(LatencyHistogram::bucket_of(lower), bucket);
    EXPECT_EQ(LatencyHistogram::bucket_of(upper), bucket);
    EXPECT_LE(static_cast<double>(upper - lower), static_cast<double>(lower) / 16.0);
    previous_upper = upper;
  }
}

TEST(LatencyHistogram, PercentilesOfOneToThousandMilliseconds) {
  LatencyHistogram histogram;
  for (int ms = 1; ms <= 1000; ++ms) histogram.record(Duration::milliseconds(ms));
  EXPECT_EQ(histogram.count(), 1000u);
  const auto within = [](Duration got, std::int64_t want_ms) {
    const double want_us = static_cast<double>(want_ms) * 1000;
    EXPECT_GE(static_cast<double>(got.ns / 1000), want_us);
    EXPECT_LE(static_cast<double>(got.ns / 1000), want_us * 1.0625);
  };
  within(histogram.percentile(0.5), 500);
  within(histogram.percentile(0.99), 990);
  EXPECT_EQ(histogram.percentile(1.0).ns, Duration::milliseconds(1000).ns);
  EXPECT_EQ(histogram.max().ns, Duration::milliseconds(1000).ns);
}

TEST(LatencyHistogram, OneSlowOutlierSetsMaxNotP99) {
  LatencyHistogram histogram;
  for (int i = 0; i < 999; ++i) histogram.record(Duration::microseconds(200));
  histogram.record(Duration::seconds(3));
  EXPECT_LE(histogram.percentile(0.99).ns, Duration::microseconds(213).ns);
  EXPECT_EQ(histogram.max().ns, Duration::seconds(3).ns);
}

TEST(LatencyHistogram, NegativeCountsAsZeroAndHugeInLastBucket) {
  LatencyHistogram histogram;
  histogram.record(Duration::microseconds(-5));
  histogram.record(Duration::seconds(10'000'000));
  EXPECT_EQ(histogram.bucket_count(0), 1u);
  EXPECT_EQ(histogram.bucket_count(LatencyHistogram::kBucketCount - 1), 1u);
}

TEST(LatencyHistogram, MergeAddsCountsAndKeepsMax) {
  LatencyHistogram a;
  LatencyHistogram b;
  for (int i = 0; i < 90; ++i) a.record(Duration::microseconds(100));
  for (int i = 0; i < 10; ++i) b.record(Duration::milliseconds(50));
  a.merge(b);
  EXPECT_EQ(a.count(), 100u);
  EXPECT_EQ(a.max().ns, Duration::milliseconds(50).ns);
  EXPECT_LE(a.percentile(0.9).ns, Duration::microseconds(106).ns);  // Bucket edge: within 1/16.
  EXPECT_GE(a.percentile(0.91).ns, Duration::milliseconds(50).ns);
}

}  // namespace
}  // namespace rw::bench
