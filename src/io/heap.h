// The process heap (glibc's malloc) of a long-running process whose buffers
// grow under load and must shrink after it (issue 15): the member
// (docs/limits.md "Member memory budget") and the gateway after start-up and
// each reload (docs/benchmarking.md "Gateway memory by client"). Tuning at
// start, giving free pages back, and the heap's figures for /metrics.
#pragma once

#include <cstdint>
#include <optional>

#include "base/time.h"

namespace rw::io {

// What glibc's allocator holds (mallinfo2, summed over every arena).
struct HeapFigures {
  std::uint64_t in_use_bytes = 0;  // Allocated and not freed: heap chunks plus mapped ones.
  std::uint64_t free_bytes = 0;    // Freed chunks the heap keeps (returned only by a trim).
  std::uint64_t mapped_bytes = 0;  // Of in_use, chunks in their own mmap (returned when freed).
  std::uint64_t arena_bytes = 0;   // The heap's arenas, in use and free (brk and per-thread heaps).
};

// Sets glibc's malloc options for the whole process (docs/limits.md "Member
// memory budget"): a fixed mmap threshold of 1 MiB, so that every large
// buffer comes from its own mapping and goes back to the kernel when freed
// (by default glibc raises the threshold to the size of each large block
// freed, up to 32 MiB, after which buffers of that size stay in the heap),
// and at most two arenas (by default eight per core, each keeping its own
// free memory). Advice: a refused option changes nothing else.
// Requires: called before the process starts its threads.
void tune_heap();

// The heap's figures now. Zero under a sanitizer, whose allocator has none.
[[nodiscard]] HeapFigures heap_figures();

// Gives the heap's free pages back to the kernel (malloc_trim): walks every
// arena under its lock, milliseconds for a heap of hundreds of MB, so call it
// when the process is quiet. Returns whether any memory was released.
bool release_free_heap();

// When a busy process gives its free pages back: once the memory in use has
// fallen `drop_bytes` below its peak since the latest trim (a burst is over,
// whatever the load is now), at most once per `interval`. A quiet spell is
// not required: a gateway or a member back at its usual load after an
// overload returns what the overload took (docs/limits.md "Member memory
// budget"). Pure: the caller samples heap_figures() and trims.
class HeapTrimPolicy {
 public:
  HeapTrimPolicy(std::uint64_t drop_bytes, Duration interval)
      : drop_bytes_(drop_bytes), interval_(interval) {}

  // Called with a fresh sample; true when the caller should trim now.
  [[nodiscard]] bool on_sample(Instant now, const HeapFigures& figures);

 private:
  std::uint64_t drop_bytes_;
  Duration interval_;
  std::uint64_t peak_in_use_ = 0;
  std::optional<Instant> trimmed_at_{};
};

// How long to wait after a heap sample that took `took` before the next:
// a second, or a thousand times the sample's own time (at most 10 s, the
// trim interval), so that sampling keeps to 0.1 % of a core. mallinfo2
// walks every free chunk under the arena's lock: on a member after minutes
// of load it took about 7 ms a call (docs/limits.md "Member memory budget").
[[nodiscard]] Duration heap_sample_interval(Duration took);

// HeapTrimPolicy with the sampling and the trim: call tick() often (every
// 100 ms to a few seconds) from one thread; it samples at most once a second
// (less often when a sample is slow: heap_sample_interval) and trims when
// the policy says so (8 MiB below the peak, at most every 10 s). Returns
// whether it trimmed.
class HeapReturner {
 public:
  bool tick(Instant now);

 private:
  HeapTrimPolicy policy_{std::uint64_t{8} << 20, Duration::seconds(10)};
  std::optional<Instant> sampled_at_{};
  Duration sample_interval_ = Duration::seconds(1);
};

}  // namespace rw::io
