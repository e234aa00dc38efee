#include "consensus/raft_heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "consensus/raft_c.h"

namespace rw::consensus {
namespace {

TEST(RaftHeap, AllocatesAndFreesThroughTheCLibrary) {
  install_raft_heap();
  install_raft_heap();  // Idempotent.
  auto* p = static_cast<char*>(raft_malloc(64));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 64);
  p = static_cast<char*>(raft_realloc(p, 4096));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p[63], 1);
  raft_free(p);
  void* zeroed = raft_calloc(4, 16);
  ASSERT_NE(zeroed, nullptr);
  EXPECT_EQ(static_cast<unsigned char*>(zeroed)[63], 0);
  raft_free(zeroed);
  void* aligned = raft_aligned_alloc(4096, 8192);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 4096, 0U);
  raft_aligned_free(4096, aligned);
}

// Without the heap, raft_malloc returns NULL here and libraft takes the
// error path that frees twice (docs/consensus.md). With it, the process
// ends. Sanitizers refuse the size themselves, which ends it too.
TEST(RaftHeapDeathTest, EndsTheProcessWhenAnAllocationFails) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  install_raft_heap();
  EXPECT_DEATH(
      {
        void* p = raft_malloc(SIZE_MAX / 2);
        raft_free(p);
      },
      "libraft could not allocate|exceeds maximum supported size|allocation-size-too-big");
}

}  // namespace
}  // namespace rw::consensus
