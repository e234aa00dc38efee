// libraft's process-wide allocator (raft_heap.h).
#include "consensus/raft_heap.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "consensus/raft_c.h"

namespace rw::consensus {

namespace {

// A member whose libraft cannot allocate ends here, with a message, and its
// supervisor restarts it from its data folder: libraft's own out-of-memory
// paths are where 0.15.0 frees twice (docs/consensus.md).
[[noreturn]] void out_of_memory(std::size_t bytes) {
  std::fprintf(
      stderr,
      "radiusward: libraft could not allocate %zu bytes; ending the process (its error paths are not "
      "safe, docs/consensus.md)\n",
      bytes);
  std::abort();
}

void* checked(void* p, std::size_t bytes) {
  if (p == nullptr) out_of_memory(bytes);
  return p;
}

void* heap_malloc(void* /*data*/, std::size_t size) { return checked(std::malloc(size), size); }

void heap_free(void* /*data*/, void* ptr) { std::free(ptr); }

void* heap_calloc(void* /*data*/, std::size_t nmemb, std::size_t size) {
  return checked(std::calloc(nmemb, size), nmemb * size);
}

void* heap_realloc(void* /*data*/, void* ptr, std::size_t size) {
  void* grown = std::realloc(ptr, size);
  // realloc(p, 0) may free p and return NULL; that is not a failure.
  return size == 0 ? grown : checked(grown, size);
}

void* heap_aligned_alloc(void* /*data*/, std::size_t alignment, std::size_t size) {
  return checked(std::aligned_alloc(alignment, size), size);
}

void heap_aligned_free(void* /*data*/, std::size_t /*alignment*/, void* ptr) { std::free(ptr); }

// raft_heap_set keeps the pointer: the heap lives as long as the process.
raft_heap g_heap{nullptr,      heap_malloc,        heap_free,        heap_calloc,
                 heap_realloc, heap_aligned_alloc, heap_aligned_free};

}  // namespace

void install_raft_heap() {
  static std::once_flag once;
  std::call_once(once, [] { raft_heap_set(&g_heap); });
}

}  // namespace rw::consensus
