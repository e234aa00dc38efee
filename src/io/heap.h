// The process heap (glibc's malloc) of a long-running process whose buffers
// grow under load and must shrink after it (issue 15): the member
// (docs/limits.md "Member memory budget") and the gateway after start-up and
// each reload (docs/benchmarking.md "Gateway memory by client"). Tuning at
// start, giving free pages back, and the heap's figures for /metrics.
#pragma once

#include <cstdint>

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

}  // namespace rw::io
