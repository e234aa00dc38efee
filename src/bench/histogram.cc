// Log-linear bucket arithmetic of LatencyHistogram (histogram.h).
#include "bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "base/assert.h"

namespace rw::bench {

namespace {
constexpr std::uint64_t kSubBuckets = 1u << LatencyHistogram::kSubBucketBits;
}  // namespace

std::size_t LatencyHistogram::bucket_of(std::uint64_t us) {
  if (us < kLinearBuckets) return static_cast<std::size_t>(us);
  // The top kSubBucketBits+1 bits select the bucket: the leading one says
  // which power of two, the next kSubBucketBits where inside it.
  const int msb = 63 - std::countl_zero(us);
  const int shift = msb - kSubBucketBits;  // >= 1 here.
  if (shift > kMaxShift) return kBucketCount - 1;
  const std::uint64_t mantissa = us >> shift;  // In [16, 32).
  return kLinearBuckets + static_cast<std::size_t>(shift - 1) * kSubBuckets +
         static_cast<std::size_t>(mantissa - kSubBuckets);
}

std::uint64_t LatencyHistogram::bucket_upper_us(std::size_t bucket) {
  if (bucket < kLinearBuckets) return bucket;
  const std::size_t offset = bucket - kLinearBuckets;
  const int shift = static_cast<int>(offset / kSubBuckets) + 1;
  const std::uint64_t mantissa = kSubBuckets + offset % kSubBuckets;
  return ((mantissa + 1) << shift) - 1;
}

void LatencyHistogram::record(Duration latency) {
  const std::uint64_t us = latency.ns <= 0 ? 0 : static_cast<std::uint64_t>(latency.ns / 1000);
  ++buckets_[bucket_of(us)];
  ++count_;
  max_us_ = std::max(max_us_, us);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBucketCount; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  max_us_ = std::max(max_us_, other.max_us_);
}

void LatencyHistogram::add_to_bucket(std::size_t bucket, std::uint64_t n, std::uint64_t max_us) {
  RW_ASSERT(bucket < kBucketCount);
  buckets_[bucket] += n;
  count_ += n;
  max_us_ = std::max(max_us_, max_us);
}

Duration LatencyHistogram::percentile(double q) const {
  if (count_ == 0) return Duration{};
  q = std::clamp(q, 0.0, 1.0);
  const auto rank =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      const std::uint64_t us = std::min(bucket_upper_us(i), max_us_);
      return Duration::microseconds(static_cast<std::int64_t>(us));
    }
  }
  return max();
}

}  // namespace rw::bench
