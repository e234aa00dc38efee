// glibc malloc tuning and figures (heap.h).
#include "io/heap.h"

#include <malloc.h>

#include <algorithm>

#include "io/clock.h"

namespace rw::io {
namespace {

// Blocks of at least this size get their own mapping: the frame readers
// (1 MiB + 4), libraft's larger received batches, the snapshot buffer.
// Smaller ones stay in the heap, reused without a system call or page
// faults (entries and Submit frames of up to 256 KiB arrive hundreds of
// times a second); a quiet member trims the heap's free pages.
constexpr int kMmapThresholdBytes = 1024 * 1024;
// The member's busy threads are two (the raft loop and the submission
// thread); the others (exporter, admin, TLS bridges) allocate little.
constexpr int kArenasMax = 2;

}  // namespace

void tune_heap() {
  (void)mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  (void)mallopt(M_ARENA_MAX, kArenasMax);
}

HeapFigures heap_figures() {
  const struct mallinfo2 info = mallinfo2();
  return HeapFigures{.in_use_bytes = info.uordblks + info.hblkhd,
                     .free_bytes = info.fordblks,
                     .mapped_bytes = info.hblkhd,
                     .arena_bytes = info.arena};
}

bool release_free_heap() { return malloc_trim(0) != 0; }

bool HeapTrimPolicy::on_sample(Instant now, const HeapFigures& figures) {
  peak_in_use_ = std::max(peak_in_use_, figures.in_use_bytes);
  if (trimmed_at_ && now - *trimmed_at_ < interval_) return false;
  if (peak_in_use_ - figures.in_use_bytes < drop_bytes_) return false;
  trimmed_at_ = now;
  peak_in_use_ = figures.in_use_bytes;
  return true;
}

Duration heap_sample_interval(Duration took) {
  constexpr Duration kLeast = Duration::seconds(1);
  constexpr Duration kMost = Duration::seconds(10);
  constexpr std::int64_t kShare = 1000;  // the sample's time, 0.1 % of the interval
  if (took.ns <= kLeast.ns / kShare) return kLeast;
  if (took.ns >= kMost.ns / kShare) return kMost;
  return Duration{took.ns * kShare};
}

bool HeapReturner::tick(Instant now) {
  if (sampled_at_ && now - *sampled_at_ < sample_interval_) return false;
  sampled_at_ = now;
  const Instant began = monotonic_now();
  const HeapFigures figures = heap_figures();
  sample_interval_ = heap_sample_interval(monotonic_now() - began);
  if (!policy_.on_sample(now, figures)) return false;
  return release_free_heap();
}

}  // namespace rw::io
