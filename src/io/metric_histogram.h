// A Prometheus histogram with fixed buckets for the hot paths (the UDP
// workers' reply latency, the member's commit latency and batch sizes): one
// writer thread observes with relaxed load+store, which costs no locked
// instruction, and the admin thread reads a snapshot at scrape time; several
// writers each keep their own histogram and the snapshots are summed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace rw::io {

// Upper bounds of the latency buckets, in microseconds: from a cached answer
// (well under 100 us) to an Accounting-Response that waited for raft and a
// slow disk (seconds). Shared by the gateway's reply latency and the
// member's commit latency so that the two can be set side by side.
inline constexpr std::uint64_t kLatencyBucketsUs[] = {100,     250,     500,       1'000,     2'500,
                                                      5'000,   10'000,  25'000,    50'000,    100'000,
                                                      250'000, 500'000, 1'000'000, 2'500'000, 5'000'000};
// Upper bounds of the records-per-Submit buckets: a gateway batches up to
// accounting.batch_records_max (at most 4096) records.
inline constexpr std::uint64_t kBatchRecordBuckets[] = {1,   2,   4,   8,    16,   32,  64,
                                                        128, 256, 512, 1024, 2048, 4096};

// What a scrape reads: per-bucket counts (not cumulative; the last is the
// overflow past the largest bound) and the sum of the observed values.
struct HistogramSnapshot {
  std::span<const std::uint64_t> bounds{};
  std::vector<std::uint64_t> buckets{};  // bounds.size() + 1
  std::uint64_t sum = 0;

  [[nodiscard]] std::uint64_t count() const {
    std::uint64_t total = 0;
    for (std::uint64_t n : buckets) total += n;
    return total;
  }
  // Adds another writer's snapshot of a histogram with the same bounds.
  void add(const HistogramSnapshot& other) {
    if (buckets.empty()) {
      *this = other;
      return;
    }
    for (std::size_t i = 0; i < buckets.size() && i < other.buckets.size(); ++i)
      buckets[i] += other.buckets[i];
    sum += other.sum;
  }
};

class MetricHistogram {
 public:
  // `bounds`: ascending upper bounds, with static storage (the constants above).
  explicit MetricHistogram(std::span<const std::uint64_t> bounds)
      : bounds_(bounds), buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {}

  // One writer thread only. A linear scan: 16 bounds fit in two cache lines.
  void observe(std::uint64_t value, std::uint64_t times = 1) {
    std::size_t i = 0;
    while (i < bounds_.size() && value > bounds_[i]) ++i;
    bump(buckets_[i], times);
    bump(sum_, value * times);
  }

  // Any thread.
  [[nodiscard]] HistogramSnapshot snapshot() const {
    HistogramSnapshot out{.bounds = bounds_, .buckets = std::vector<std::uint64_t>(bounds_.size() + 1)};
    for (std::size_t i = 0; i <= bounds_.size(); ++i)
      out.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
    out.sum = sum_.load(std::memory_order_relaxed);
    return out;
  }

 private:
  static void bump(std::atomic<std::uint64_t>& counter, std::uint64_t amount) {
    counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  }

  std::span<const std::uint64_t> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
  std::atomic<std::uint64_t> sum_{0};
};

}  // namespace rw::io
