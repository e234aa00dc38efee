// A latency histogram with log-linear buckets (as HdrHistogram lays them
// out): exact below 32 µs, then 16 buckets per power of two, so any reported
// percentile is within 1/16 (6.25 %) above the true value. Fixed size, no
// allocation per sample, mergeable across generator processes. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/time.h"

namespace rw::bench {

class LatencyHistogram {
 public:
  // Values are counted in microseconds; anything above about 12.7 days is
  // counted in the last bucket.
  static constexpr int kSubBucketBits = 4;                             // 16 buckets per power of two.
  static constexpr std::size_t kLinearBuckets = 2u << kSubBucketBits;  // Exact below 32 µs.
  static constexpr int kMaxShift = 36;
  static constexpr std::size_t kBucketCount = kLinearBuckets + kMaxShift * (1u << kSubBucketBits);

  // Counts one latency; negative values count as zero.
  void record(Duration latency);
  // Adds every sample of `other`.
  void merge(const LatencyHistogram& other);

  [[nodiscard]] std::uint64_t count() const { return count_; }
  // The largest value recorded, exactly (not rounded to a bucket).
  [[nodiscard]] Duration max() const { return Duration::microseconds(static_cast<std::int64_t>(max_us_)); }
  // The value at quantile q in [0, 1]: the upper edge of the bucket holding
  // the ceil(q * count)-th smallest sample, capped at max(). Zero when empty.
  [[nodiscard]] Duration percentile(double q) const;

  // Bucket arithmetic, exposed for tests and serialisation.
  [[nodiscard]] static std::size_t bucket_of(std::uint64_t us);
  [[nodiscard]] static std::uint64_t bucket_upper_us(std::size_t bucket);
  [[nodiscard]] std::uint64_t bucket_count(std::size_t bucket) const { return buckets_[bucket]; }
  // Adds `n` samples to a bucket and raises max (for reading a serialised
  // histogram back). Requires: bucket < kBucketCount.
  void add_to_bucket(std::size_t bucket, std::uint64_t n, std::uint64_t max_us);

 private:
  std::array<std::uint64_t, kBucketCount> buckets_{};
  std::uint64_t count_ = 0;
  std::uint64_t max_us_ = 0;
};

}  // namespace rw::bench
